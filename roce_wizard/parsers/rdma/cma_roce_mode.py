"""`cma_roce_mode` (MLNX_OFED script: prints the content of configfs default_roce_mode)."""

from __future__ import annotations

import re

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    body_lines,
    fraction,
    is_bare_command,
    lines,
    prompt_command,
    to_int,
)
from roce_wizard.parsers.rdma import sysfs

# ---------------------------------------------------------------------------------------------
# cma_roce_mode (MLNX_OFED script: prints the content of configfs default_roce_mode)

_CMA_MODE = re.compile(r"^\s*(IB/RoCE v1|RoCE v2|RoCE v1)\s*$")
_CMA_ERRORS = re.compile(
    r"^\s*(You must be root to run this|Failed to .*|Module rdma_cm is not loaded.*|"
    r"Device \S+ port \S+ does not exist)\s*$"
)


def _cma_args(cmd: str) -> dict:
    # the script's own defaults (mlnx-tools sbin/cma_roce_mode: DEVICE=mlx5_0, PORT=1): a command line
    # without -d/-p still says which device and port it read
    out: dict = {"device": "mlx5_0", "port": 1}
    for flag, key in (("-d", "device"), ("-p", "port"), ("-m", "set_mode")):
        m = re.search(rf"(?:^|\s){flag}\s*(\S+)", cmd)
        if m:
            out[key] = to_int(m.group(1)) if key != "device" else m.group(1)
    return out


_CMA_CONFIGFS = re.compile(r"/rdma_cm/([^/\s]+)/ports/([0-9]+)/default_roce_mode\b")


def _cma_context(cmd: str) -> dict:
    """Which device/port a command reads: `cma_roce_mode -d D -p P` (without -d/-p the script prints only
    the mode, for its defaults mlx5_0 and port 1), or `cat /sys/kernel/config/rdma_cm/D/ports/P/default_roce_mode`
    (the file cma_roce_mode itself reads). No command line: unknown."""
    m = _CMA_CONFIGFS.search(cmd)
    if m:
        return {"device": m.group(1), "port": to_int(m.group(2))}
    return _cma_args(cmd) if "cma_roce_mode" in cmd else {}


def parse_cma_roce_mode(text: str) -> Facts:
    if sysfs.is_configfs_mode(text):  # inbox rdma-core: rdma_cm's configfs file itself
        return sysfs.parse_configfs_roce_mode(text)
    reads: list[dict] = []
    errors: list[str] = []
    ctx: dict = {}
    answered = True  # whether the last command line got its answer
    for ln in lines(text):
        cmd = prompt_command(ln)
        if cmd is None and (is_bare_command(ln, ("cma_roce_mode",)) or _CMA_CONFIGFS.search(ln)):
            cmd = ln.strip()
        if cmd is not None:
            # two commands in a row with one answer after them (`... -d mlx5_0`, `... -d mlx5_1`, `RoCE v2`):
            # the answer belongs to one of them, which one cannot be told
            ctx = {} if not answered and cmd else _cma_context(cmd)
            answered = not cmd
            continue
        if _CMA_MODE.match(ln) or _CMA_ERRORS.match(ln):
            answered = True
        m = _CMA_MODE.match(ln)
        if m:
            reads.append({"mode": m.group(1), **ctx})
            continue
        m = _CMA_ERRORS.match(ln)
        if m:
            errors.append(m.group(1))
    if not reads and not errors:
        raise ParseError("cma_roce_mode", "no `IB/RoCE v1` / `RoCE v2` line found")
    facts: Facts = {"mode": reads[-1]["mode"] if reads else None,
                    "modes": [r["mode"] for r in reads], "reads": reads}
    if reads and "device" in reads[-1]:
        facts["device"] = reads[-1]["device"]
    if reads and "port" in reads[-1]:
        facts["port"] = reads[-1]["port"]
    if errors:
        facts["errors"] = errors
    return facts


def sniff_cma_roce_mode(text: str) -> int:
    if sysfs.is_configfs_mode(text):
        return 95
    body = body_lines(text, ("cma_roce_mode",))
    if body and all(_CMA_MODE.match(ln) for ln in body):
        return 95
    cmds = [c for c in (prompt_command(ln) for ln in lines(text)) if c]
    if any("cma_roce_mode" in c for c in cmds) and body:
        f = fraction(body, lambda ln: bool(_CMA_MODE.match(ln) or _CMA_ERRORS.match(ln)))
        return round(80 * f)
    return 0
