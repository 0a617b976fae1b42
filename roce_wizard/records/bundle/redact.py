"""Redaction for the support bundle: every secret out of every text, counted per kind, never by value.

`Redactor(literals).text(s, counts)` removes the values the inventory resolves as secrets (by value), PEM private key
blocks, URL userinfo, bearer/basic auth, `key=value` / `key: value` / `"key": "value"` forms with a secret-looking
key, and switch-configuration secrets per vendor (roce_wizard.switch_secrets, from the vendors' guides).
`counts[kind]` grows by exactly the number of `<redacted>` markers written, so what the manifest says is true.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from typing import Any

from roce_wizard.switch_secrets import REDACTED, redact_config, redact_json_table

MIN_SECRET_LEN = 4  # shorter literals cannot be redacted by value without eating ordinary text


def _add(counts: dict[str, int], kind: str, n: int) -> None:
    if n:
        counts[kind] = counts.get(kind, 0) + n

_SECRET_KEY = re.compile(r"(?i)(pass(word|wd|phrase)?|pwd|token|secret|community|api[_-]?key|private[_-]?key|"
                         r"auth[_-]?key|credential)")
_SECRET_ENV = re.compile(r"(?i)(pass(word|wd|phrase)|token|secret|community|api_?key|private_?key)")  # not PWD
_REFERENCE = re.compile(r"^<(env|keyring|prompt)(:[^>]*)?>$")
_PEM = re.compile(r"-----BEGIN ([A-Z0-9 ]*PRIVATE KEY)-----.*?(?:-----END \1-----|\Z)", re.DOTALL)
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s/:@]+):([^\s/@]+)@")
_AUTH_HEADER = re.compile(r"(?i)(\bauthorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:basic|bearer|token)|\bbearer)([ \t]+)"
                          r"([A-Za-z0-9._~+/=-]{8,})")
# key=value / key: value / "key": "value" with a secret-looking key; references (<env:X>, {env: X}) are kept
_KEY_VALUE = re.compile(
    r"""(?ix)
    (?P<key>["']?[\w.-]*(?:password|passwd|passphrase|pwd|token|secret|community|api[_-]?key|private[_-]?key|
    passkey|auth-md5|auth-sha|encrypt-aes|encrypt-des|key-string|bindpw)[\w.-]*["']?)
    (?P<sep>[ \t]*[=:][ \t]*)
    (?P<value>"[^"\n]*"|'[^'\n]*'|(?![<{\[])[^\s,;&"'<>{}]+)
    """)
def _is_reference(value: str) -> bool:
    return bool(_REFERENCE.match(value)) or value == REDACTED


@dataclass
class Redactor:
    """Removes secrets from text; counts what it removed per kind (never the values)."""

    literals: tuple[str, ...] = ()
    _literal_re: re.Pattern[str] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        usable = sorted({s for s in self.literals if len(s) >= MIN_SECRET_LEN}, key=len, reverse=True)
        self.literals = tuple(usable)
        self._literal_re = re.compile("|".join(re.escape(s) for s in usable)) if usable else None

    def text(self, text: str, counts: dict[str, int]) -> str:
        def count(kind: str, n: int) -> None:
            if n:
                counts[kind] = counts.get(kind, 0) + n

        text, n = _PEM.subn(lambda m: f"-----BEGIN {m.group(1)}-----\n{REDACTED}\n-----END {m.group(1)}-----", text)
        count("private key", n)
        if self._literal_re is not None:
            text, n = self._literal_re.subn(REDACTED, text)
            count("inventory secret", n)
        text, n = _URL_USERINFO.subn(lambda m: f"{m.group(1)}:{REDACTED}@", text)
        count("url password", n)
        text, n = _AUTH_HEADER.subn(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
        count("auth token", n)

        def kv(m: re.Match[str]) -> str:
            value = m.group("value")
            bare = value.strip("\"'")
            if _is_reference(bare) or not bare or _SAFE_SECRET_KEY_VALUE.match(bare):
                return m.group(0)
            if bare.lower() == "not" and _NOT_SET.match(m.string, m.end()):  # `Password: not set` says no secret
                return m.group(0)
            quote = value[0] if value[:1] in "\"'" else ""
            counts["key=value secret"] = counts.get("key=value secret", 0) + 1
            return f"{m.group('key')}{m.group('sep')}{quote}{REDACTED}{quote}"

        text = _KEY_VALUE.sub(kv, text)
        return redact_config(text, count)

    def value(self, obj: Any, counts: dict[str, int], key: str | None = None) -> Any:
        """A JSON value with every string redacted; a string under a secret-named key goes whole."""
        if isinstance(obj, dict):
            obj = redact_json_table(key, obj, lambda kind, n: _add(counts, kind, n))
            return {k: self.value(v, counts, str(k)) for k, v in obj.items()}
        if isinstance(obj, list):
            return [self.value(v, counts, key) for v in obj]
        if isinstance(obj, str):
            if key is not None and _SECRET_KEY.search(key) and obj and not _is_reference(obj) \
                    and not _SAFE_SECRET_KEY_VALUE.match(obj):
                counts["secret field"] = counts.get("secret field", 0) + 1
                return REDACTED
            return self.text(obj, counts)
        return obj

    def leaks(self, data: bytes) -> list[str]:
        """Which kinds of secret survive in `data` (a final check on the bytes written)."""
        found = []
        for secret in self.literals:
            forms = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1],
                     html.escape(secret), html.escape(secret, quote=False)}
            if any(form.encode("utf-8") in data for form in forms):
                found.append("an inventory secret")
                break
        text = data.decode("utf-8", errors="replace")
        for m in re.finditer(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:\\n|\s)*(\S{0,10})", text):
            if not m.group(1).startswith(("<redacted>", "&lt;redact")):
                found.append("a private key block")
                break
        return found


# values a secret-named key may carry that are not secrets: booleans, references, plain states
_NOT_SET = re.compile(r"[ \t]+(set|configured|present|required|defined)\b", re.IGNORECASE)
_SAFE_SECRET_KEY_VALUE = re.compile(r"^(true|false|yes|no|none|null|\(null\)|\(none\)|n/a|-|prompt|present|missing|unset|set|enabled|disabled|"
                                    r"locked|unlocked|\*+)$", re.IGNORECASE)
