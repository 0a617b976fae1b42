"""Host identity and the tool presence probe: /proc/sys/kernel/random/boot_id, /etc/machine-id."""

from __future__ import annotations

import re

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    body_lines,
    fraction,
    lines,
    prompt_command,
)

# ---------------------------------------------------------------------------------------------
# /proc/sys/kernel/random/boot_id

_UUID = re.compile(r"^\s*([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\s*$")


def parse_boot_id(text: str) -> Facts:
    body = body_lines(text, ("cat",))
    ids = [m.group(1).lower() for m in (_UUID.match(ln) for ln in body) if m]
    if len(ids) != 1 or len(body) != 1:
        n = next((i for i, ln in enumerate(lines(text), 1)
                  if ln.strip() and prompt_command(ln) is None and not _UUID.match(ln)), None)
        raise ParseError("boot_id", "expected exactly one UUID line", n)
    return {"boot_id": ids[0]}


def sniff_boot_id(text: str) -> int:
    body = body_lines(text, ("cat",))
    return 95 if len(body) == 1 and _UUID.match(body[0]) else 0


# ---------------------------------------------------------------------------------------------
# /etc/machine-id (machine-id(5): 32 lowercase hex digits and a newline, one per installation)

_MACHINE_ID = re.compile(r"^\s*([0-9a-fA-F]{32})\s*$")


def parse_machine_id(text: str) -> Facts:
    body = body_lines(text, ("cat",))
    if len(body) != 1 or not _MACHINE_ID.match(body[0]):
        raise ParseError("machine_id", "expected one line of 32 hex digits (machine-id(5))", None)
    return {"machine_id": body[0].strip().lower()}


def sniff_machine_id(text: str) -> int:
    body = body_lines(text, ("cat",))
    return 60 if len(body) == 1 and _MACHINE_ID.match(body[0]) else 0


# ---------------------------------------------------------------------------------------------
# tool presence probe:
#   for t in …; do if command -v "$t" >/dev/null 2>&1; then echo "present $t $(command -v "$t")";
#   else echo "missing $t"; fi; done

_PRESENT = re.compile(r"^present\s+(\S+)\s+(.+?)\s*$")
_MISSING = re.compile(r"^missing\s+(\S+)\s*$")


def parse_tool_presence(text: str) -> Facts:
    present: dict[str, str] = {}
    missing: list[str] = []
    for n, ln in enumerate(lines(text), 1):
        if not ln.strip() or prompt_command(ln) is not None:
            continue
        if (m := _PRESENT.match(ln.strip())):
            present[m.group(1)] = m.group(2)
        elif (m := _MISSING.match(ln.strip())):
            missing.append(m.group(1))
        else:
            raise ParseError("tool_presence", f"not a `present`/`missing` line: {ln.strip()[:60]!r}", n)
    if not present and not missing:
        raise ParseError("tool_presence", "no `present`/`missing` line found")
    return {"present": present, "missing": missing}


def sniff_tool_presence(text: str) -> int:
    body = body_lines(text)
    f = fraction(body, lambda ln: bool(_PRESENT.match(ln.strip()) or _MISSING.match(ln.strip())))
    return round(95 * f) if f else 0
