"""What the anonymizer recognises: the spellings of addresses, hardware IDs, serials, home directories
and site names (patterns), and the pure conversions between them (EUI-64, perftest's decimal GIDs)."""

from __future__ import annotations

import ipaddress
import re

_QUAD = re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?!\.?\d)")  # an IPv4 address or a 4-part version
_IPV6 = re.compile(r"(?<![\w:.%])[0-9A-Fa-f:]*:[0-9A-Fa-f:]*(?:\d{1,3}(?:\.\d{1,3}){3})?(?![\w:]|\.\d)")
_HWADDR = re.compile(r"(?<![0-9A-Fa-f:-])[0-9A-Fa-f]{2}(?:([:-])[0-9A-Fa-f]{2})(?:\1[0-9A-Fa-f]{2}){4,18}(?![0-9A-Fa-f:-])")
_GUID4 = re.compile(r"(?<![0-9A-Fa-f:])[0-9A-Fa-f]{4}(?::[0-9A-Fa-f]{4}){3}(?![0-9A-Fa-f:])")
_GUID0X = re.compile(r"\b0x[0-9A-Fa-f]{16}\b")
_LABELED_HEX = re.compile(r"(?i)(guid|mac)\b[^\n\d]{0,24}?(?<![0-9A-Fa-f])([0-9A-Fa-f]{16}|[0-9A-Fa-f]{12})(?![0-9A-Fa-f])")
_UUID = re.compile(r"\b[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}\b")
_SERIAL = re.compile(
    r"""(?ix)(serial[ _-]?(?:number|num|no)?|service[ _-]?tag|asset[ _-]?tag|identifierValue|\[SN\][^:\n]*)
    (["']?[ \t]*[:=][ \t]*["']?)([A-Za-z0-9][A-Za-z0-9._/-]{2,})""")
_HOSTNAME_LABEL = re.compile(
    r"(?i)\b(host[ _-]?name|fqdn|system[ _-]?name)([\"']?[ \t]*[:=][ \t]*[\"']?)([A-Za-z0-9][A-Za-z0-9.-]*[A-Za-z0-9])")
_VERSION_CONTEXT = re.compile(r"(?i)(version|\bver\b|_ver\b|fw|firmware|driver|build|release|ofed|mft|vib|rev)")
_FQDN = re.compile(r"(?<![\w.-])[A-Za-z0-9-]+(?:\.[A-Za-z][A-Za-z0-9-]*){2,}(?![\w-])")
_HOST_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_SENTINEL = re.compile("\x00(\\d+)\x00")
# perftest's GID: the 16 bytes of the address, each printed %02d and joined by colons
_DEC_GID = re.compile(r"(?<![\d:.])\d{1,3}(?::\d{1,3}){15}(?![\d:]|\.\d)")
# a home directory names a person: /home/alice, /Users/alice, C:\Users\alice
_HOME = re.compile(r"(?<![\w.-])(/home/|/Users/|[A-Za-z]:(?:\\{1,2}|/)Users(?:\\{1,2}|/))([A-Za-z0-9][A-Za-z0-9._-]*)")
_NOT_USERS = {"shared", "public", "default", "all users", "guest"}
# options whose values name a site (vCenter datacenter and cluster, a location; a site's own x_ options too)
_SITE_OPTION = re.compile(r"(?i)^(?:x_)?(site|cluster|datacenter|data_center|dc|location|region|campus|pod|building)$")
# an inventory's directory is often named after its site, unless it is one of these
_GENERIC_DIRS = {"examples", "example", "inventory", "inventories", "etc", "config", "configs", "tmp", "var", "srv",
                 "opt", "home", "work", "src", "roce-wizard", "roce_wizard", "sample-cluster", "lab", "data", "tests"}

_KIND_PREFIX = {"site": "site", "esxi": "esxi", "guest": "guest", "linux": "node", "switch": "switch",
                "vcenter": "vcenter",
                "bmc": "bmc", "vm": "vm", "host": "host"}


def _is_version(text: str, start: int, end: int) -> bool:
    """A dotted quad that is a version (4.21.71.101-1OEM, ver 5.4.3.0), not an address."""
    if start and text[start - 1] in "-vV_":
        return True
    if text[end:end + 1] == "-":
        return True
    line_start = text.rfind("\n", 0, start) + 1
    return bool(_VERSION_CONTEXT.search(text[max(line_start, start - 28):start]))


def _hex_key(text: str) -> str:
    return re.sub(r"[^0-9a-f]", "", text.lower().removeprefix("0x"))


_NOT_SERIALS = {"n/a", "na", "none", "unknown", "not specified", "default", "0", "null"}


def _serial_like(value: str) -> bool:
    return value.lower() not in _NOT_SERIALS and any(c.isdigit() for c in value)


def _v4(text: str) -> bool:
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


def _keep_v4(addr: str) -> bool:
    """Addresses that identify nothing: unspecified, broadcast, netmasks, multicast."""
    first = int(addr.split(".", 1)[0])
    if addr in ("0.0.0.0", "255.255.255.255") or 224 <= first <= 239:
        return True
    if first == 255:
        try:
            ipaddress.IPv4Network(f"0.0.0.0/{addr}")
        except ValueError:
            return False
        return True
    return False


def _v6(text: str) -> str | None:
    candidate = text.rstrip(":") if text.endswith(":") and not text.endswith("::") else text
    if candidate.count(":") < 2 or ("::" not in candidate and candidate.count(":") != 7 and "." not in candidate):
        return None
    try:
        return str(ipaddress.IPv6Address(candidate))
    except ValueError:
        return None


def _like(original: str, pseudo_hex: str) -> str:
    """`pseudo_hex` written the way `original` is: separators, grouping, case, 0x prefix."""
    digits = iter(pseudo_hex.upper() if any(c.isupper() for c in original if c.isalpha() and c != "x") else pseudo_hex)
    out = []
    body = original[2:] if original.lower().startswith("0x") else original
    for ch in body:
        out.append(next(digits) if ch in "0123456789abcdefABCDEF" else ch)
    return (original[:2] if body is not original else "") + "".join(out)


def _dec_gid(text: str) -> ipaddress.IPv6Address | None:
    """`254:128:00:…:152:70` (perftest prints each GID byte %02d) as the address it is."""
    parts = [int(p) for p in text.split(":")]
    if len(parts) != 16 or any(p > 255 for p in parts):
        return None
    gid = ipaddress.IPv6Address(bytes(parts))
    return None if gid.is_unspecified else gid


def _eui64_mac(ip: ipaddress.IPv6Address) -> str | None:
    """The MAC inside a modified EUI-64 interface id (…:xxxx:xxff:fexx:xxxx), as 12 hex digits."""
    iid = ip.packed[8:]
    if not ip.is_link_local or iid[3:5] != b"\xff\xfe":
        return None
    mac = bytes([iid[0] ^ 0x02]) + iid[1:3] + iid[5:8]
    return None if set(mac) <= {0} else mac.hex()


def _eui64_link_local(mac_hex: str, original: ipaddress.IPv6Address) -> ipaddress.IPv6Address:
    mac = bytes.fromhex(mac_hex)
    iid = bytes([mac[0] ^ 0x02]) + mac[1:3] + b"\xff\xfe" + mac[3:6]
    return ipaddress.IPv6Address(original.packed[:8] + iid)
