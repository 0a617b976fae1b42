"""Secrets in switch configurations, per vendor, for the support bundle's redaction (roce_wizard.records.bundle.redact).

Each rule removes the secret and keeps the rest of the line: the key number of `ntp authentication-key 1 md5 …`,
the neighbor address of `neighbor 10.0.0.1 password …`, the hash type (`7`, `sha512`, `9`) and trailing options
(`role sysadmin`, `priv-lvl 3`, `ro`). A type keyword is kept because it tells support whether the switch stores the
value in clear (type 0) or hashed; the value itself goes in every case (a type-7 string is reversible).

Syntax taken from the vendors' configuration guides (found with the project's search tool):

- Arista EOS — "User Security" (EOS User Manual), https://www.arista.com/en/um-eos/eos-user-security :
  `username NAME [privilege N] [role R] secret [0|5|sha512] VALUE`, `enable password [0|sha512] VALUE`,
  `tacacs-server [host H] key [0|7] VALUE`, `radius-server [host H] key [0|7] VALUE`;
  "Securing EOS CLI", https://eos.arista.com/securing-eos-cli/ (username/enable/snmp-server hardening);
  "Border Gateway Protocol (BGP)", https://www.arista.com/um-eos/eos-border-gateway-protocol-bgp :
  `neighbor ADDR|GROUP password [0|7] VALUE`; "arista.eos.eos_ntp_global module",
  https://ansible-community.github.io/package-doc-builds/collections/arista/eos/eos_ntp_global_module.html :
  `ntp authentication-key ID md5|sha1 [0|7] KEY`; DISA STIG "Arista MLS DCS-7000 … neighbor router authentication"
  (tenable.com audit items): `ip ospf authentication-key`, `ip ospf message-digest-key N md5`, `isis authentication
  key`.
- NVIDIA Onyx / MLNX-OS — "User Management and Security Commands", NVIDIA Onyx User Manual v3.10.2002,
  https://docs.nvidia.com/networking/display/onyxv3102002/user+management+and+security+commands :
  `username NAME password [0|7] VALUE` (0 cleartext, 7 encrypted) — seen verbatim. Onyx's `radius-server key`,
  `tacacs-server [host H] key`, `ldap bind-password`, `ntp authentication-key` and `snmp-server user NAME v3 auth
  sha KEY priv aes-128 KEY` are the same chapter's commands but were NOT seen verbatim: matched by the shared rules.
- Dell SmartFabric OS10 — "Configure username and password", OS10 User Guide 10.5.4 (below):
  https://dell.com/support/manuals/en-in/smartfabric-os10-emp-partner/smartfabric-os-user-guide-10-5-4/configure-username-and-password
  `username NAME password VALUE role ROLE [priv-lvl N]` (stored as SHA-512 `$6$…`); OS10 User Guide
  (manualshelf.com, S4112F-ON, p.1305): `enable password 0|sha-256|sha-512 VALUE priv-lvl N`; OS10 User Guide
  (manualowl.com, MX9116n, p.140 "Configure SNMP users"): `snmp-server user NAME GROUP 3 auth md5|sha PASS priv
  des|aes PASS [localized]`; Dell OS9/OS10 command reference pages for `ntp authentication-key N md5|sha1 [0|9] KEY`,
  `radius-server host H key [0|9] KEY`, `neighbor ADDR password [7|9] VALUE` and, in OS10's neighbor context, an
  indented `password [9] VALUE` line.
- NVIDIA Cumulus Linux NVUE — "NVUE Set and Unset Commands: BGP", NVUE command reference,
  https://docs.nvidia.com/networking-ethernet-software/nvue-reference/Set-and-Unset-Commands/BGP
  (`nv set vrf VRF router bgp neighbor N password VALUE`); "TACACS" and "RADIUS AAA", Cumulus Linux 5.x User Guide,
  https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-514/System-Configuration/Authentication-Authorization-and-Accounting/TACACS
  (`nv set system aaa tacacs server P secret VALUE`, `nv set system aaa radius server H secret VALUE`);
  "User Account Commands", NVIDIA NVOS User Manual,
  https://networking-docs.nvidia.com/nvosinfinibandum/25.02.8008/user-account-commands
  (`password`, `hashed-password` per user). `nv set system snmp-server username U auth-sha K encrypt-aes K` and
  `readonly-community C` were not seen verbatim (from NVUE's object model names). In `nv config show` YAML the same keys appear as `password:`,
  `hashed-password:`, `secret:`, `auth-md5:`/`auth-sha:`, `encrypt-aes:`/`encrypt-des:`, and a community is a KEY
  under `readonly-community:`/`readwrite-community:`.
- SONiC config_db.json — "SNMP Migration from snmp.yml to ConfigDB", sonic-net/SONiC
  doc/snmp/snmp-configdb-migration-hld.md: `SNMP_COMMUNITY|<community>` (the community is the table KEY),
  `SNMP_USER|<user>` with `SNMP_USER_AUTH_PASSWORD` / `SNMP_USER_ENCRYPTION_PASSWORD`; "sonic-system-tacacs" YANG
  (sonic-net/sonic-buildimage): `TACPLUS` / `TACPLUS_SERVER` `passkey`; `RADIUS`/`RADIUS_SERVER` `passkey`;
  `NTP_KEY|<id>` `value` (the RADIUS and NTP_KEY field names were not seen in a retrieved page: generic rules).

Not found in a guide and therefore matched generically (any vendor): `key-string [0|7] VALUE` in key chains and
VRRP, `bindpw`/`bind-password` (nslcd.conf on Cumulus), `secret N [0|7|8a] VALUE` of EOS shared-secret profiles.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

REDACTED = "<redacted>"

# the hash/encoding word a guide allows before the value: kept, it says how the switch stores it
_TYPE = r"(?:(?:0|5|7|8|8a|9|sha512|sha-512|sha256|sha-256|sha2-256|encrypted|plaintext|cleartext|ciphertext)[ \t]+)?"
_VALUE = r"""(?P<value>(?!["']?<redacted>)(?:"[^"\n]*"|'[^'\n]*'|[^\s"']\S*))"""
_ALGO = r"(?:md5|sha|sha-?1|sha-?224|sha-?256|sha-?384|sha-?512|sha2-256|des|3des|des56|aes|aes-?128|aes-?192|aes-?256)"


def _line(head: str) -> re.Pattern[str]:
    return re.compile(r"(?im)^(?P<head>" + head + ")" + _VALUE)


# one secret per line; `head` is everything kept before the value
LINE_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    # EOS / Onyx / OS10: username NAME … password|secret [type] VALUE
    ("username", _line(r"[ \t]*username[ \t]+\S+(?:[ \t]+\S+)*?[ \t]+(?:password|secret|sha256-password)[ \t]+"
                       + _TYPE)),
    # EOS / OS10: enable password|secret [type] VALUE
    ("enable", _line(r"[ \t]*enable[ \t]+(?:password|secret|sha256-password)[ \t]+" + _TYPE)),
    # EOS / Onyx / OS10: snmp-server community VALUE [ro|rw] …
    ("snmp community", _line(r"[ \t]*snmp-server[ \t]+community[ \t]+")),
    # EOS / Onyx / OS10: tacacs-server|radius-server [host H …] key [type] VALUE
    ("aaa server key", _line(r"[ \t]*(?:tacacs-server|radius-server)\b[^\n]*?[ \t]key[ \t]+" + _TYPE)),
    # EOS / Onyx / OS10: ntp authentication-key ID ALGO [type] VALUE (the ID stays)
    ("ntp key", _line(r"[ \t]*ntp[ \t]+authentication-key[ \t]+\d+[ \t]+\S+[ \t]+" + _TYPE)),
    # EOS / Onyx / OS10 / FRR: [router bgp … ] neighbor ADDR|GROUP password [type] VALUE (the address stays)
    ("bgp password", _line(r"[^\n]*?\bneighbor[ \t]+\S+[ \t]+password[ \t]+" + _TYPE)),
    # OS10 neighbor context and EOS peer templates: an indented `password [type] VALUE` line
    ("bgp password", re.compile(r"(?im)^(?P<head>[ \t]+password[ \t]+" + _TYPE + ")" + _VALUE + r"[ \t]*$")),
    # EOS / OS10 / Onyx OSPF: ip ospf authentication-key [type] VALUE; ip ospf message-digest-key N md5 [type] VALUE
    ("ospf key", _line(r"[ \t]*(?:ip|ipv6)[ \t]+ospf[ \t]+authentication-key[ \t]+" + _TYPE)),
    ("ospf key", _line(r"[^\n]*?\bmessage-digest-key[ \t]+\d+[ \t]+md5[ \t]+" + _TYPE)),
    # EOS IS-IS: [isis] authentication key [type] VALUE [level-N]
    ("isis key", _line(r"[ \t]*(?:isis[ \t]+)?authentication[ \t]+key[ \t]+" + _TYPE)),
    # key chains, VRRP: key-string [type] VALUE; VRRP text authentication
    ("key chain", _line(r"[^\n]*?\bkey-string[ \t]+" + _TYPE)),
    ("vrrp key", _line(r"[^\n]*?\bvrrp[ \t]+\d+[ \t]+(?:ipv4[ \t]+)?authentication[ \t]+text[ \t]+")),
    # EOS shared-secret profile: secret ID [type] VALUE …
    ("shared secret", _line(r"[ \t]+secret[ \t]+\d+[ \t]+(?:0|7|8a)[ \t]+")),
    # LDAP bind credentials (Onyx `ldap bind-password`, nslcd.conf `bindpw`)
    ("ldap bind password", _line(r"[^\n]*?\b(?:bind-?password|bindpw|bind-pw)[ \t]+" + _TYPE)),
    # EOS OSPFv3 / IPsec: … passphrase [type] VALUE (not the ssh-keygen prompt)
    ("passphrase", _line(r"[^\n]*?\b(?:ospfv3|ipsec)\b[^\n]*?\bpassphrase[ \t]+" + _TYPE)),
)

# several secrets on one line: SNMPv3 users (auth ALGO KEY priv ALGO KEY) and NVUE `nv set …` lines
_SNMP_USER_LINE = re.compile(r"(?im)^[ \t]*snmp-server[ \t]+user\b[^\n]*")
_SNMP_USER_KEY = re.compile(r"(?i)(?P<head>\b(?:auth|priv)[ \t]+" + _ALGO + r"[ \t]+)" + _VALUE)
_NV_SET_LINE = re.compile(r"(?im)^[ \t]*(?:[\w@.:~/-]+[$#][ \t]*)?nv[ \t]+set[ \t][^\n]*")
_NV_KEY = re.compile(r"(?i)(?P<head>(?<![\w-])(?:password|hashed-password|secret|bind-password|readonly-community|"
                     r"readwrite-community|community|auth-md5|auth-sha|encrypt-aes|encrypt-des|key-string|passkey|"
                     r"(?<=key )\d+[ \t]+value)[ \t]+)" + _VALUE)

# YAML (`nv config show`, startup.yaml): the community is a key under readonly-/readwrite-community
_YAML_COMMUNITY = re.compile(r"(?m)^(?P<indent>[ \t]*)(?:readonly-community|readwrite-community|community):[ \t]*\n")
# SONiC config_db.json tables whose secrets sit where a key=value pattern cannot see them
_SONIC_TABLE = re.compile(r'"(SNMP_COMMUNITY|NTP_KEY)"[ \t]*:[ \t]*(?=\{)')

# key names whose value is a secret in JSON/YAML forms (added to the generic key=value redaction)
SECRET_KEY_WORDS = ("passkey", "auth-md5", "auth-sha", "encrypt-aes", "encrypt-des", "key-string", "bindpw")


def redact_config(text: str, count: Callable[[str, int], None]) -> str:
    """Every switch secret in `text` replaced by <redacted>; `count(kind, n)` is told how many."""
    total = 0

    def keep_head(m: re.Match[str]) -> str:
        nonlocal total
        total += 1
        quote = m.group("value")[0] if m.group("value")[:1] in "\"'" else ""
        return f"{m.group('head')}{quote}{REDACTED}{quote}"

    for _name, rule in LINE_RULES:
        text = rule.sub(keep_head, text)
    text = _SNMP_USER_LINE.sub(lambda m: _SNMP_USER_KEY.sub(keep_head, m.group(0)), text)
    text = _NV_SET_LINE.sub(lambda m: _NV_KEY.sub(keep_head, m.group(0)), text)
    text, n = _yaml_communities(text)
    total += n
    text, n = _sonic_tables(text)
    total += n
    count("config secret", total)
    return text


def _yaml_communities(text: str) -> tuple[str, int]:
    out, pos, n = [], 0, 0
    for m in _YAML_COMMUNITY.finditer(text):
        if m.start() < pos:
            continue
        out.append(text[pos:m.end()])
        pos = m.end()
        child_indent = None
        while pos < len(text):
            end = text.find("\n", pos)
            end = len(text) if end < 0 else end + 1
            line = text[pos:end]
            indent = len(line) - len(line.lstrip(" \t"))
            if line.strip() and indent <= len(m.group("indent")):
                break
            if child_indent is None and line.strip():
                child_indent = indent
            key = re.match(r"([ \t]*)(['\"]?)([^:'\"\n]+)\2:(.*)", line, re.DOTALL)
            if key and indent == child_indent and key.group(3) != REDACTED:
                line = f"{key.group(1)}{key.group(2)}{REDACTED}{key.group(2)}:{key.group(4)}"
                n += 1
            out.append(line)
            pos = end
    out.append(text[pos:])
    return "".join(out), n


def _sonic_tables(text: str) -> tuple[str, int]:
    """SNMP_COMMUNITY's keys and NTP_KEY's values, rewritten in place (the JSON keeps its layout)."""
    n = 0
    decoder = json.JSONDecoder()
    for m in reversed(list(_SONIC_TABLE.finditer(text))):
        try:
            table, end = decoder.raw_decode(text, m.end())
        except ValueError:
            continue
        if not isinstance(table, dict):
            continue
        span = text[m.end():end]
        if m.group(1) == "SNMP_COMMUNITY":
            for community in table:
                if community == REDACTED:
                    continue
                name = re.escape(json.dumps(community)[1:-1])
                span, k = re.subn(r'"' + name + r'"(?=[ \t]*:)', f'"{REDACTED}"', span)
                n += k
        else:
            span, k = re.subn(r'("value"[ \t]*:[ \t]*)"(?!<redacted>)(?:[^"\\]|\\.)*"', rf'\1"{REDACTED}"', span)
            n += k
        text = text[:m.end()] + span + text[end:]
    return text, n


def redact_json_table(key: str | None, obj: dict, count: Callable[[str, int], None]) -> dict:
    """Structured SONiC config_db tables: the community names of SNMP_COMMUNITY, the values of NTP_KEY."""
    if key == "SNMP_COMMUNITY":
        count("config secret", sum(1 for k in obj if k != REDACTED))
        out: dict = {}
        for i, (k, v) in enumerate(obj.items()):
            out[REDACTED if i == 0 else f"{REDACTED}-{i + 1}"] = v  # keys stay distinct
        return out
    if key == "NTP_KEY":
        fixed = {}
        for k, v in obj.items():
            if isinstance(v, dict) and isinstance(v.get("value"), str) and v["value"] != REDACTED:
                count("config secret", 1)
                v = {**v, "value": REDACTED}
            fixed[k] = v
        return fixed
    return obj
