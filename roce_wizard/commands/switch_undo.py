"""Undo an OS10 configuration change by the inverse of exactly the lines it added (pure text).

OS10 has no documented configuration replace (none was found in Dell's OS10 guides) — `copy config://<file>
running-configuration` MERGES, so a rollback by copy leaves every line the change added. The change is undone instead by
the inverse of the lines it added, computed from three texts: the change as sent (indented: ` ` per
level, `exit` lines ignored), `show running-configuration` before it, and the same after it; then
the caller reads the running configuration back and compares it with the one before.

Per line of the change that the configuration now holds and did not hold before:
  - in an object the change created (`wred`, `class-map`, `policy-map`, `trust dscp-map` not in the
    config before): `no <object head>`, objects removed in reverse creation order, after the interfaces
    stopped naming them;
  - in an interface or an object that existed: the line the config held before with the same key (the
    line without its last word: `mtu`, `service-policy output type queuing`, `flowcontrol receive`) is
    typed again, or, with none, `no <line>`; a `no …` line of the change is undone by typing the old line.
Interface ranges (`interface range ethernet1/1/1-1/1/4`) are undone port by port.
OS10's `no` forms used here (`no mtu`, `no service-policy …`, `no trust-map dscp`, `no class-map type …`,
`no policy-map type …`, `no wred …`): Dell SmartFabric OS10 User Guide 10.5.0, the commands' "no version"
entries (https://www.dell.com/support/manuals/en-in/dell-emc-smartfabric-os10/smartfabric-os-user-guide-10-5-0).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Block", "comparable", "os10_inverse", "parse_blocks"]

_OBJECTS = ("wred ", "class-map ", "policy-map ", "trust dscp-map ")


@dataclass
class Block:
    head: str
    lines: list[str] = field(default_factory=list)  # direct children, stripped
    children: dict[str, Block] = field(default_factory=dict)  # children that have their own children


def parse_blocks(text_lines: list[str]) -> dict[str, Block]:
    """Top-level heads -> blocks, by indentation (`exit`, `end`, `!` and blank lines carry nothing)."""
    blocks: dict[str, Block] = {}
    top: Block | None = None
    for raw in text_lines:
        line = raw.rstrip()
        text = line.strip()
        if not text or text in ("exit", "end") or text.startswith("!"):
            continue
        depth = len(line) - len(line.lstrip(" "))
        if depth == 0:
            top = blocks.setdefault(text, Block(text))
        elif top is None:
            continue
        elif depth == 1:
            if text not in top.lines:
                top.lines.append(text)
        else:
            parent = top.lines[-1] if top.lines else ""
            top.children.setdefault(parent, Block(parent)).lines.append(text)
    return blocks


def _key(line: str) -> str:
    return line.rsplit(" ", 1)[0] if " " in line else line


def _same_key(line: str, others: list[str]) -> str | None:
    key = _key(line)
    return next((o for o in others if o == line or _key(o) == key), None)


def _invert(added: list[str], before: list[str], now: list[str]) -> list[str]:
    out: list[str] = []
    for line in added:
        if line in before:
            continue
        if line.startswith("no "):
            old = _same_key(line[3:], before)
            if old is not None and old not in now:
                out.append(old)
            continue
        old = _same_key(line, before)
        if line not in now:
            # a default value prints nothing (`flowcontrol receive off`): the old line it replaced is gone;
            # else the line never reached the config (refused earlier)
            if old is not None and old not in now:
                out.append(old)
            continue
        out.append(old if old is not None else f"no {line}")
    return out


def _expand_interfaces(head: str) -> list[str]:
    """`interface ethernet1/1/3` or `interface range ethernet1/1/1-1/1/4,ethernet1/1/7` -> one head per port."""
    rest = head[len("interface "):].strip()
    if rest.startswith("range "):
        rest = rest[len("range "):]
    out: list[str] = []
    for part in rest.split(","):
        m = re.fullmatch(r"ethernet(\d+)/(\d+)/(\d+)(?:-(\d+)/(\d+)/(\d+))?", part.strip())
        if m is None:
            return [head]
        first = int(m[3])
        last = int(m[6]) if m[6] else first
        out += [f"interface ethernet{m[1]}/{m[2]}/{n}" for n in range(first, last + 1)]
    return out


def os10_inverse(change: list[str], before_text: str, now_text: str) -> list[str]:
    """The OS10 configuration-mode lines that take `change` back out of the running config."""
    blocks = parse_blocks(change)
    before = parse_blocks(before_text.splitlines())
    now = parse_blocks(now_text.splitlines())
    interfaces: list[str] = []
    objects: list[str] = []
    removals: list[str] = []
    for head, block in blocks.items():
        if head.startswith("interface "):
            for port in _expand_interfaces(head):
                old, cur = before.get(port, Block(port)), now.get(port, Block(port))
                inv = _invert(block.lines, old.lines, cur.lines)
                if inv:
                    interfaces += [port, *(f" {ln}" for ln in inv), " exit"]
            continue
        if not head.startswith(_OBJECTS):
            continue
        if head not in before:
            if head in now:
                removals.insert(0, f"no {head}")
            continue
        old, cur = before[head], now.get(head, Block(head))
        body: list[str] = []
        for line in block.lines:
            sub = block.children.get(line)
            if sub is None:
                body += [f" {ln}" for ln in _invert([line], old.lines, cur.lines)]
            elif line not in old.lines:
                if line in cur.lines:
                    body.append(f" no {line}")
            else:
                inv = _invert(sub.lines, old.children.get(line, Block(line)).lines,
                              cur.children.get(line, Block(line)).lines)
                if inv:
                    body += [f" {line}", *(f"  {ln}" for ln in inv), " exit"]
        if body:
            objects += [head, *body, "exit"]
    return interfaces + objects + removals


def comparable(running_config: str) -> list[str]:
    """A running configuration without the lines that change by themselves (the change time stamp)."""
    return [ln.rstrip() for ln in running_config.splitlines()
            if ln.strip() and not ln.startswith("! Last configuration change")]
