"""The kernel's own view of what MLNX_OFED's show_gids and cma_roce_mode print, for inbox rdma-core hosts
(no MLNX_OFED): sysfs GID attributes and rdma_cm's configfs. Facts use the show_gids / cma_roce_mode
vocabulary (docs/facts.md), so the checks that read those kinds accept either source; rdma/show_gids.py and
rdma/cma_roce_mode.py hand these texts over here.

GIDs: `grep -H . /sys/class/infiniband/*/ports/*/gids/* /sys/class/infiniband/*/ports/*/gid_attrs/types/*
/sys/class/infiniband/*/ports/*/gid_attrs/ndevs/*` — one `path:value` line per file (GNU grep's `-H`), and
`grep: path: Invalid argument` for an unused entry's type and netdev. Files (Linux Documentation/ABI/stable/
sysfs-class-infiniband, https://kernel.org/doc/Documentation/ABI/testing/sysfs-class-infiniband):
`gids/<i>` the GID in full colon form (`fe80:0000:…`, an IPv4 one `0000:…:ffff:c0a8:640b`; an unused entry
reads all zeros), `gid_attrs/types/<i>` "IB/RoCE v1" or "RoCE v2", `gid_attrs/ndevs/<i>` the netdev name.
Reading an unused entry's type or netdev fails with EINVAL (UCX PR openucx/ucx#11237: "the sysfs code in driver
returns EINVAL on read(), when the corresponding GID entry is invalid"; its log line "failed to read from
/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/51: Invalid argument").

rdma_cm mode: `cat /sys/kernel/config/rdma_cm/<dev>/ports/<p>/default_roce_mode` prints "IB/RoCE v1" or
"RoCE v2" (Linux Documentation/ABI/testing/configfs-rdma_cm). The `<dev>` directory exists only after
`mkdir /sys/kernel/config/rdma_cm/<dev>` (same document: "a directory for this HCA has to be created"); before,
cat says "No such file or directory". The probe never creates it: that is a write, and a read-only probe makes
none; the fact then says the mode could not be read and why.
"""

from __future__ import annotations

import ipaddress
import re

from roce_wizard.parsers.base import Facts, ParseError, is_bare_command, is_elision, lines, prompt_command

_GID_FILE = re.compile(
    r"/sys/class/infiniband/([^/\s]+)/ports/([0-9]+)/(gids|gid_attrs/types|gid_attrs/ndevs)/([0-9]+)")
_GREP_HIT = re.compile(r"^(" + _GID_FILE.pattern + r"):(.*)$")
_GREP_ERR = re.compile(r"^grep: (" + _GID_FILE.pattern + r"): (.+)$")
_MODE_PATH = re.compile(r"/sys/kernel/config/rdma_cm/([^/\s]+)/ports/([0-9]+)/default_roce_mode")
_MODE_LINE = re.compile(r"^\s*(IB/RoCE v1|RoCE v2)\s*$")
_CAT_ERR = re.compile(r"^\s*cat: (\S+): (.+)$")
_ZERO = "0000:0000:0000:0000:0000:0000:0000:0000"


def is_sysfs_gids(text: str) -> bool:
    return any(_GREP_HIT.match(ln) or _GREP_ERR.match(ln) for ln in lines(text))


def parse_sysfs_gids(text: str) -> Facts:
    """`grep -H .` over the GID files -> show_gids facts: the configured (non-zero) entries."""
    table: dict[tuple[str, int, int], dict] = {}
    for n, ln in enumerate(lines(text), start=1):
        if not ln.strip() or is_elision(ln) or prompt_command(ln) is not None or is_bare_command(ln, ("grep",)):
            continue
        m = _GREP_HIT.match(ln)
        err = None if m else _GREP_ERR.match(ln)
        if not m and not err:
            raise ParseError("show_gids", f"not a sysfs GID line: {ln.strip()[:60]!r}", n)
        hit = m or err
        dev, port, what, index = hit.group(2), int(hit.group(3)), hit.group(4), int(hit.group(5))
        entry = table.setdefault((dev, port, index), {})
        if err:
            entry.setdefault("errors", []).append(f"{what}: {err.group(6)}")
            continue
        entry[what] = m.group(6).strip()
    gids = []
    for (dev, port, index), e in sorted(table.items()):
        gid = e.get("gids")
        if not gid or gid == _ZERO or not re.fullmatch(r"[0-9a-f]{4}(:[0-9a-f]{4}){7}", gid):
            continue  # unused (all zeros; its type/netdev read EINVAL) or not read
        kind = e.get("gid_attrs/types")
        ver = "v2" if kind == "RoCE v2" else "v1" if kind == "IB/RoCE v1" else None
        addr = ipaddress.IPv6Address(gid)
        ipv4 = str(addr.ipv4_mapped) if addr.ipv4_mapped is not None else None
        gids.append({"dev": dev, "port": port, "index": index, "gid": gid, "ipv4": ipv4, "ver": ver,
                     "netdev": e.get("gid_attrs/ndevs") or None})
    if not table:
        raise ParseError("show_gids", "no /sys/class/infiniband/<dev>/ports/<p>/gids/<i> line")
    return {"gids": gids, "source": "sysfs"}


def is_configfs_mode(text: str) -> bool:
    return any(_MODE_PATH.search(ln) for ln in lines(text))


def parse_configfs_roce_mode(text: str) -> Facts:
    """`cat …/rdma_cm/<dev>/ports/<p>/default_roce_mode` -> cma_roce_mode facts (mode None when unreadable)."""
    facts: Facts = {"mode": None, "modes": [], "reads": [], "source": "configfs"}
    for n, ln in enumerate(lines(text), start=1):
        if not ln.strip() or is_elision(ln):
            continue
        cmd = prompt_command(ln)
        if cmd is None and is_bare_command(ln, ("cat",)):
            cmd = ln.strip()
        path = _MODE_PATH.search(cmd or ln)
        if path:
            facts["device"], facts["port"] = path.group(1), int(path.group(2))
        if cmd is not None:
            continue
        m = _MODE_LINE.match(ln)
        if m:
            facts["modes"].append(m.group(1))
            facts["reads"].append({"mode": m.group(1), "device": facts.get("device"), "port": facts.get("port")})
            facts["mode"] = m.group(1)
            continue
        m = _CAT_ERR.match(ln)
        if m and path:
            facts.setdefault("errors", []).append(m.group(2))
            if m.group(2) == "No such file or directory":
                facts["configfs_missing"] = True
            continue
        raise ParseError("cma_roce_mode", f"not a default_roce_mode read: {ln.strip()[:60]!r}", n)
    if facts["mode"] is None and "errors" not in facts:
        raise ParseError("cma_roce_mode", "no `IB/RoCE v1` / `RoCE v2` line and no error")
    return facts
