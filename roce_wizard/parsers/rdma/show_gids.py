"""`show_gids` (MLNX_OFED script): the GID table."""

from __future__ import annotations

import re

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    body_lines,
    fraction,
    is_digits,
    is_elision,
    lines,
    prompt_command,
)
from roce_wizard.parsers.rdma import sysfs

# ---------------------------------------------------------------------------------------------
# show_gids

_SG_HEADER = re.compile(r"^\s*DEV\s+PORT\s+INDEX\s+GID\b")
_SG_FOOTER = re.compile(r"n_gids_+found=([0-9]+)")
_IPV4 = re.compile(r"^[0-9]{1,3}(?:\.[0-9]{1,3}){3}$")
_GIDISH = re.compile(r"^[0-9a-fA-F]{0,4}(?::[0-9a-fA-F]{0,4}){2,7}(?::[0-9]{1,3}(?:\.[0-9]{1,3}){3})?$")


def _show_gids_row(ln: str) -> dict | None:
    tok = ln.split()
    if len(tok) < 4 or not is_digits(tok[1]) or not is_digits(tok[2]) or not _GIDISH.match(tok[3]):
        return None
    row = {"dev": tok[0], "port": int(tok[1]), "index": int(tok[2]), "gid": tok[3],
           "ipv4": None, "ver": None, "netdev": None}
    rest = tok[4:]
    if rest and _IPV4.match(rest[0]):
        row["ipv4"] = rest.pop(0)
    if rest and re.fullmatch(r"[vV][0-9]", rest[0]):
        row["ver"] = rest.pop(0).lower()
    if rest:
        row["netdev"] = rest.pop(0)
    if rest:  # more columns than show_gids prints: not a row of it
        return None
    return row


def parse_show_gids(text: str) -> Facts:
    if sysfs.is_sysfs_gids(text):  # inbox rdma-core: the same facts read from sysfs
        return sysfs.parse_sysfs_gids(text)
    gids: list[dict] = []
    header = False
    n_found: int | None = None
    for ln in lines(text):
        if not ln.strip() or is_elision(ln) or prompt_command(ln) is not None:
            continue
        if _SG_HEADER.match(ln):
            header = True
            continue
        if re.fullmatch(r"[\s-]+", ln):
            continue
        m = _SG_FOOTER.search(re.sub(r"\s+", "", ln))
        if m:
            n_found = int(m.group(1))
            continue
        row = _show_gids_row(ln)
        if row:
            gids.append(row)
    if not gids and not header and n_found is None:
        raise ParseError("show_gids", "no show_gids header, GID row or n_gids_found footer found")
    facts: Facts = {"gids": gids}
    if n_found is not None:
        facts["n_gids_found"] = n_found
    return facts


def sniff_show_gids(text: str) -> int:
    if sysfs.is_sysfs_gids(text):
        return 90
    ls = lines(text)
    if any(_SG_HEADER.match(ln) for ln in ls):
        return 95
    if any(_SG_FOOTER.search(re.sub(r"\s+", "", ln)) for ln in ls):
        return 90
    body = body_lines(text, ("show_gids",))
    return round(70 * fraction(body, lambda ln: _show_gids_row(ln) is not None))
