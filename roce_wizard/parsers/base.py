"""The parser contract shared by every parser module.

A parser is a pure function ``text -> dict`` (the facts of one kind, docs/facts.md vocabulary).
A sniffer is a pure function ``text -> int`` scoring how sure it is that ``text`` was printed by
that tool (0 = not this kind; higher wins in ``detect``).  Both must accept text as a person
pastes it: prompts, the command line itself, blank lines, tabs, ``...`` elisions, trailing
spaces.  A value a parser cannot read is absent or ``None`` — never guessed.  A parser raises
``ParseError`` only when the text is not that tool's output at all (nothing recognisable).
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

Facts = dict[str, Any]


class ParseError(ValueError):
    """The text is not output of the expected tool. Carries the 1-based line and what was expected."""

    def __init__(self, kind: str, message: str, line: int | None = None):
        self.kind = kind
        self.line = line
        where = f" (line {line})" if line else ""
        super().__init__(f"{kind}: {message}{where}")


@dataclass(frozen=True)
class Parser:
    kind: str
    parse: Callable[[str], Facts]
    sniff: Callable[[str], int]
    description: str = ""


_DISPATCHERS = ("/parsers/session.py", "/parsers/detect.py")  # they call parsers; a bug is in the parser


def parser_bug(exc: BaseException, parse: Callable[[str], Facts]) -> str:
    """What a parser's own bug (any exception but ParseError) tells the user: its type, its message and the
    parser function it happened in, e.g. "parser bug: KeyError 'ifname' in parse_ip_json"."""
    where = getattr(parse, "__name__", "the parser")
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        path = frame.filename.replace("\\", "/")
        if "roce_wizard/parsers/" in path and not path.endswith(_DISPATCHERS):  # the parser's frame, not its caller's
            where = frame.name
            break
    message = " ".join(str(exc).split())[:200]
    return f"parser bug: {type(exc).__name__}{' ' + message if message else ''} in {where}"


# A shell prompt a person pasted along with the output: `[root@host ~]# cmd`, `user@h:~$ cmd`,
# `[esxi]$ cmd`, `# cmd`, `$ cmd`, `switch# cmd`.
PROMPT_RE = re.compile(r"^\s*(?:\[[^\]]*\]\s*[#$]|[\w.-]+@[\w.-]+(?::[^\s#$]*)?\s*[#$]|[#$>])\s+\S")
# The prompt part of PROMPT_RE, to cut the command out of a prompt line.
PROMPT_PREFIX_RE = re.compile(
    r"^\s*(?:\[[^\]]*\]\s*[#$]|[\w.-]+@[\w.-]+(?::[^\s#$]*)?\s*[#$]|[#$>])(?:\s+|$)"
)
# A prompt with nothing typed after it (the last line of many pastes: `root@h:~# `).
BARE_PROMPT_RE = re.compile(r"^\s*(?:\[[^\]]*\]\s*[#$]|[\w.-]+@[\w.-]+(?::[^\s#$]*)?\s*[#$])\s*$")
# ESXi's `[root@esx01:~] cmd` (no `#`) and a bare `[root@ ~]#`; SUSE-style `linux:~ # cmd`.
ESXI_PROMPT_RE = re.compile(r"^\s*\[[^\]]*[@:][^\]]*\]\s*[#$]?(\s|$)")
HOST_PROMPT_RE = re.compile(r"^\s*[\w.-]+:\S*\s*[#$]\s")


def lines(text: str) -> list[str]:
    """Split into lines, normalising CRLF and dropping trailing whitespace on each line."""
    return [ln.rstrip() for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]


def is_prompt(line: str) -> bool:
    """A prompt line of a host paste (ESXi or Linux): PROMPT_RE, ESXI_PROMPT_RE or HOST_PROMPT_RE.

    Wider than `prompt_command`: it also knows ESXi's `#`-less `[root@esx01:~] cmd`.
    """
    return bool(PROMPT_RE.match(line) or ESXI_PROMPT_RE.match(line) or HOST_PROMPT_RE.match(line))


def prompt_command(line: str) -> str | None:
    """The command typed on a prompt line ('' for a bare prompt); None when not a prompt line.

    Only PROMPT_RE's prompts (and bare ones) count, not the ESXi ones `is_prompt` also knows.
    """
    if PROMPT_RE.match(line):
        m = PROMPT_PREFIX_RE.match(line)
        return line[m.end():].strip() if m else line.strip()
    if BARE_PROMPT_RE.match(line):
        return ""
    return None


def is_bare_command(line: str, tools: Iterable[str]) -> bool:
    """A command line pasted without a prompt: `tool args` or `sudo tool args` (also `/path/tool`)."""
    words = line.strip().split()
    if words and words[0] == "sudo":
        words = words[1:]
    return bool(words) and any(words[0] == t or words[0].endswith("/" + t) for t in tools)


def body_lines(text: str, tools: Iterable[str] = ()) -> list[str]:
    """Output lines only: no blanks, prompt lines, elisions, nor a bare `tool args` command line."""
    tools = tuple(tools)
    return [ln for ln in lines(text)
            if ln.strip() and not is_elision(ln) and prompt_command(ln) is None
            and not is_bare_command(ln, tools)]


def fraction(body: list[str], pred: Callable[[str], bool]) -> float:
    """The share of `body` lines that `pred` accepts (0.0 for no lines): a sniffer's confidence."""
    if not body:
        return 0.0
    return sum(1 for ln in body if pred(ln)) / len(body)


def snake(key: str) -> str:
    """A field name in snake case: `FW Version(Running)` -> `fw_version_running`."""
    return re.sub(r"[^a-z0-9]+", "_", key.strip().lower()).strip("_")


def is_elision(line: str) -> bool:
    """A `...` / `......` / `[...]` line an author put in place of omitted output."""
    s = line.strip()
    return bool(s) and (set(s) <= {".", "…"} or s in ("[...]", "(...)", "<snip>", "[snip]"))


def is_digits(value: str) -> bool:
    """ASCII digits only: `str.isdigit` and `int` also take '３', '٣' or '²', which no tool prints as a
    number — a value written so is unreadable (unknown), never read as 3."""
    return value.isascii() and value.isdigit()


_INT_RE = re.compile(r"[+-]?[0-9]+|0[xX][0-9a-fA-F]+")


def to_int(value: str | None) -> int | None:
    """`16` -> 16, `0x08` -> 8, anything else (non-ASCII digits too) -> None (unknown, not a guess)."""
    if value is None:
        return None
    s = value.strip()
    if not _INT_RE.fullmatch(s):
        return None
    return int(s, 16) if s.lower().startswith("0x") else int(s)


def to_bool(value: str | None) -> bool | None:
    """on/off, true/false, yes/no, enabled/disabled, 1/0 -> bool; anything else -> None."""
    if value is None:
        return None
    s = value.strip().lower()
    if s in ("on", "true", "yes", "enabled", "enable", "1", "up"):
        return True
    if s in ("off", "false", "no", "disabled", "disable", "0", "down"):
        return False
    return None


def lone_integers(text: str, programs: tuple[str, ...], skip: str | None = None) -> tuple[list[int], list[str]]:
    """The integer lines of a paste (a `cat` of a sysfs counter, an esxcli value) and the command lines around
    them (a prompt, `[sudo] <one of programs> …`, a `#` note); ([], commands) as soon as any other text shows.
    `skip`: lines that are neither (e.g. esxcli's header-less `Value` / dash rows)."""
    values: list[int] = []
    commands: list[str] = []
    command_re = re.compile(rf"^(sudo\s+)?({'|'.join(map(re.escape, programs))})\s")
    for raw in lines(text):
        s = raw.strip()
        if not s:
            continue
        if re.fullmatch(r"-?[0-9]+", s):
            values.append(int(s))
            continue
        if is_prompt(raw) or command_re.match(s) or s.startswith("#"):
            commands.append(s)
            continue
        if skip is not None and re.fullmatch(skip, s):
            continue
        return [], commands
    return values, commands
