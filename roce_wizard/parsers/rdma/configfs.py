"""Kernel configfs knobs of the RDMA stack.

Kinds: rdma_cm_tos — `cat /sys/kernel/config/rdma_cm/<dev>/ports/<p>/default_roce_tos`.

Format (Linux Documentation/ABI/testing/configfs-rdma_cm, https://kernel.org/doc/Documentation/ABI/testing/configfs-rdma_cm;
drivers/infiniband/core/cma_configfs.c prints it with "%u\\n"): one decimal number 0-255, the TOS
rdma_cm QPs of that port get unless the application sets one (rdma_set_option). The directory
exists only after `mkdir /sys/kernel/config/rdma_cm/<dev>` (MLNX_OFED's cma_roce_mode does that);
before, `cat` says "No such file or directory": rdma_cm then uses TOS 0.
"""

from __future__ import annotations

import re

from roce_wizard.parsers.base import Facts, ParseError, Parser, is_bare_command, is_elision, lines, prompt_command

_TOS_PATH = re.compile(r"/sys/kernel/config/rdma_cm/([^/\s]+)/ports/([0-9]+)/default_roce_tos")
_VALUE = re.compile(r"^\s*([0-9]{1,3})\s*$")
_CAT_ERROR = re.compile(r"^\s*cat:\s*(\S+):\s*(.+)$")


def parse_rdma_cm_tos(text: str) -> Facts:
    facts: Facts = {"tos": None, "device": None, "port": None}
    seen_command = False
    for n, ln in enumerate(lines(text), start=1):
        cmd = prompt_command(ln)
        if cmd is None and is_bare_command(ln, ("cat",)):
            cmd = ln.strip()
        if cmd is not None:
            path = _TOS_PATH.search(cmd)
            if path:
                seen_command = True
                facts.update(device=path.group(1), port=int(path.group(2)))
            continue
        if not ln.strip() or is_elision(ln):
            continue
        m = _VALUE.match(ln)
        if m and int(m.group(1)) <= 255:
            facts["tos"] = int(m.group(1))
            continue
        m = _CAT_ERROR.match(ln)
        if m and _TOS_PATH.search(m.group(1)):
            path = _TOS_PATH.search(m.group(1))
            facts.update(device=path.group(1), port=int(path.group(2)), error=m.group(2).strip())
            continue
        raise ParseError("rdma_cm_tos", f"not a default_roce_tos read: {ln.strip()[:60]!r}", n)
    if facts["tos"] is None and "error" not in facts:
        raise ParseError("rdma_cm_tos", "no TOS value" + ("" if seen_command else " and no default_roce_tos read"))
    return facts


def sniff_rdma_cm_tos(text: str) -> int:
    # a bare number alone is any sysfs file: only a read that names the file is this kind
    named = any(_TOS_PATH.search(c) for c in (prompt_command(ln) or (ln if is_bare_command(ln, ("cat",)) else "")
                                              for ln in lines(text)))
    named = named or any(_CAT_ERROR.match(ln) and _TOS_PATH.search(ln) for ln in lines(text))
    return 95 if named else 0


PARSERS = {
    "rdma_cm_tos": Parser("rdma_cm_tos", parse_rdma_cm_tos, sniff_rdma_cm_tos,
                          "/sys/kernel/config/rdma_cm/<dev>/ports/<p>/default_roce_tos"),
}
