"""`--env-file FILE`: credentials for an inventory's `{env: NAME}` references, read from a file the way
docker compose reads its `.env` (https://docs.docker.com/compose/how-tos/environment-variables/variable-interpolation/#env-file-syntax):

- one `KEY=VALUE` per line; blank lines and lines starting with `#` are skipped; `export KEY=VALUE` is
  accepted (so a file a shell can source works unchanged, e.g. a lab's DIR/lab.env);
- a value in single quotes is taken literally; in double quotes `\\"` and `\\\\` are unescaped; an
  unquoted value ends at ` #` (an inline comment) and is trimmed;
- nothing is expanded: `$HOME`, `${X}` and backticks stay as written (a password may hold them).

The values go into the process environment before the inventory is read; a value from the file wins
over one already set (the file was named on purpose). Errors name the file and line, never the value.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class EnvFileError(ValueError):
    """The env file cannot be used: ``FILE:LINE: what is wrong`` (the line's value is never shown)."""


def _value(raw: str, where: str) -> str:
    raw = raw.strip()
    if raw[:1] in ("'", '"'):
        quote, out, i = raw[0], [], 1
        while i < len(raw):
            ch = raw[i]
            if quote == '"' and ch == "\\" and i + 1 < len(raw) and raw[i + 1] in ('"', "\\"):
                out.append(raw[i + 1])
                i += 2
                continue
            if ch == quote:
                rest = raw[i + 1:].strip()
                if rest and not rest.startswith("#"):
                    raise EnvFileError(f"{where}: text after the closing {quote} quote")
                return "".join(out)
            out.append(ch)
            i += 1
        raise EnvFileError(f"{where}: the value's {quote} quote is not closed on this line")
    comment = re.search(r"\s#", raw)
    return (raw[:comment.start()] if comment else raw).strip()


def parse_env_text(text: str, name: str) -> dict[str, str]:
    """KEY -> value of every assignment in TEXT (NAME is the file name the errors carry)."""
    values: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith(("export ", "export\t")):
            stripped = stripped[len("export"):].lstrip()
        key, eq, raw = stripped.partition("=")
        key = key.strip()
        where = f"{name}:{number}"
        if not eq:
            raise EnvFileError(f"{where}: expected KEY=VALUE")
        if not _KEY.fullmatch(key):
            raise EnvFileError(f"{where}: expected KEY=VALUE with KEY a variable name (letters, digits, _)")
        values[key] = _value(raw, where)
    return values


def read_env_file(path: Path) -> dict[str, str]:
    """The assignments of the env file at PATH; EnvFileError when it is missing, unreadable or malformed."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise EnvFileError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise EnvFileError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise EnvFileError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    return parse_env_text(text, str(path))


def apply_env_file(path: Path) -> list[str]:
    """Read PATH into os.environ; returns the names set (never the values)."""
    values = read_env_file(path)
    os.environ.update(values)
    return sorted(values)
