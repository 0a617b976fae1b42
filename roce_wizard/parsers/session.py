"""A pasted text -> the tool outputs in it, each detected and parsed (issue 13; the `session` kind of docs/facts.md).

`read_paste(text)` is the one entry point `analyze` uses for a file's text:
- launcher prefixes stripped (`paste.strip_launchers`); each rank or host is its own `Reading` with its label,
  because two hosts are two machines and their facts are never joined;
- a terminal session cut at its prompts (`paste.commands`): when it holds more than one command and they are
  not all outputs of one tool, the reading is kind `session` with `parts[]` (`command`, `kind`, `facts`),
  judged together as one machine's outputs;
- the echoed command names the kind when the text alone does not (`detect.identify`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from roce_wizard.parsers import PARSERS, ParseError
from roce_wizard.parsers.base import parser_bug
from roce_wizard.parsers.detect import UNKNOWN, detect, identify
from roce_wizard.parsers.paste import (
    Command,
    Stream,
    clean,
    commands,
    filtered,
    hint_kind,
    strip_launchers,
    tool_kinds,
)

SESSION = "session"


@dataclass
class Part:
    command: str | None
    kind: str
    facts: dict[str, Any] | None
    error: str | None
    text: str

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"command": self.command, "kind": self.kind, "facts": self.facts}
        if self.error:
            out["error"] = self.error
        return out


@dataclass
class Reading:
    """What one file (or one rank/host of it) says: a kind and its facts, or a `session` of parts."""
    label: str | None
    kind: str
    facts: dict[str, Any] | None
    error: str | None
    text: str
    parts: list[Part] = field(default_factory=list)


def _read_part(cmd: Command) -> Part:
    hint = hint_kind(cmd.command)
    kind = identify(cmd.text, hint).kind
    if hint is None and kind in tool_kinds(cmd.command):
        kind = UNKNOWN  # `ethtool bond0` printed settings, not the `ethtool -S` counters its lines resemble
    if kind == UNKNOWN:
        return Part(cmd.command, UNKNOWN, None, None, cmd.text)
    try:
        facts = PARSERS[kind].parse(cmd.text)
    except ParseError as exc:
        return Part(cmd.command, kind, None, str(exc), cmd.text)
    except Exception as exc:  # a parser's own bug is a status, never a traceback
        return Part(cmd.command, kind, None, parser_bug(exc, PARSERS[kind].parse), cmd.text)
    if filtered(cmd.command) and isinstance(facts, dict):
        facts = {**facts, "filtered": True}  # rows the filter dropped are unknown, not absent
    return Part(cmd.command, kind, facts, None, cmd.text)


def _has_output(cmd: Command) -> bool:
    body = cmd.text.split("\n")[1:] if cmd.command is not None else cmd.text.split("\n")
    return any(ln.strip() for ln in body)


def _reading(label: str | None, part: Part) -> Reading:
    return Reading(label, part.kind, part.facts, part.error, part.text)


def _read_stream(stream: Stream) -> Reading:
    cmds = [c for c in commands(stream.text) if _has_output(c)]
    if len(cmds) <= 1:
        # one output (a command with no output — `echo 106 > …`, an empty `cat` — still counts for its tool)
        return _reading(stream.label, _read_part(Command(cmds[0].command if cmds else None, stream.text)))
    parts = [_read_part(c) for c in cmds]
    known = [p for p in parts if p.kind != UNKNOWN]
    kinds = {p.kind for p in known}
    if not known:
        return Reading(stream.label, UNKNOWN, None, None, stream.text)
    if len(kinds) == 1:
        # one tool, maybe run several times (`cma_roce_mode`, then `-m 2`; two hosts' pauseParams): its parser
        # reads the repeated blocks itself. Other commands' output (`mst start` chatter, `ethtool IF`) is left
        # out so it cannot pass for that tool's lines.
        chatter = len(known) < len(parts)
        text = "\n".join(p.text for p in known) if chatter else stream.text
        whole = _read_part(Command(known[0].command, text))
        if whole.kind in kinds and whole.facts is not None:
            return _reading(stream.label, whole)
        if len(known) == 1:
            return _reading(stream.label, known[0])
    facts = {"parts": [p.to_dict() for p in parts]}
    return Reading(stream.label, SESSION, facts, None, stream.text, parts)


def read_paste(text: str) -> list[Reading]:
    """One Reading per rank/host the text holds (one when no launcher named any)."""
    cleaned = clean(text)
    streams = strip_launchers(cleaned)
    if streams[0].label is not None:
        # a prefix that only looked like a launcher's (`Name: vmnic0` key lines) must not hide a tool's output
        whole = detect(cleaned)
        best = max((detect(s.text) for s in streams), key=lambda d: d.score)
        if whole.kind != UNKNOWN and (best.kind == UNKNOWN or whole.score > best.score):
            streams = [Stream(None, cleaned)]
    return [_read_stream(s) for s in streams]


__all__ = ["SESSION", "Part", "Reading", "read_paste"]
