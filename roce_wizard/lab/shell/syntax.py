"""The lab shell's syntax tree: words, commands, pipelines, lists, compound commands."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

LINUX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
ESXI_PATH = "/bin:/sbin"
SLEEP_CAP_S = 5.0  # per line: a `sleep 600` in a fix must not hang a test
MAX_LOOP = 10_000  # `while true` without a way out ends here

# (path, whole new content) -> None when written, else the error the shell prints
# ("sh: echo: write error: Invalid argument"); the target's hook decides what a write does
FileWriter = Callable[[str, str], "str | None"]


class ShellSyntaxError(Exception):
    pass


# ---------------------------------------------------------------------------- syntax tree


@dataclass
class Lit:
    text: str
    quoted: bool


@dataclass
class Var:
    name: str
    quoted: bool
    op: str = ""  # "", ":-", "-", ":=", ":+", "#" (length)
    arg: Word | None = None


@dataclass
class Sub:
    body: Node
    quoted: bool


@dataclass
class Arith:
    expr: Word
    quoted: bool


@dataclass
class Word:
    parts: list[Lit | Var | Sub | Arith]

    def literal(self) -> str | None:
        """The text when the word is a plain unquoted literal (reserved words, names)."""
        if len(self.parts) == 1 and isinstance(self.parts[0], Lit) and not self.parts[0].quoted:
            return self.parts[0].text
        return None


@dataclass
class Redirect:
    fd: int
    op: str  # ">", ">>", "<", ">&", "<&", "&>"
    target: Word


@dataclass
class Simple:
    assigns: list[tuple[str, Word]]
    words: list[Word]
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class Pipeline:
    commands: list[Node]
    negate: bool = False


@dataclass
class AndOr:
    first: Node
    rest: list[tuple[str, Node]]  # ("&&" | "||", pipeline)


@dataclass
class Sequence:
    items: list[Node]


@dataclass
class For:
    var: str
    words: list[Word] | None  # None: "$@" (empty here)
    body: Node
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class While:
    cond: Node
    body: Node
    until: bool = False
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class If:
    branches: list[tuple[Node, Node]]  # (condition, body)
    orelse: Node | None
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class Group:
    body: Node
    subshell: bool
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class Background:
    """`command &`: started asynchronously (see `_Shell.start_job`)."""
    node: Node


Node = Simple | Pipeline | AndOr | Sequence | For | While | If | Group | Background

# ---------------------------------------------------------------------------- parser

_META = set(" \t\n;&|()<>")
_RESERVED_END = {"then", "else", "elif", "fi", "do", "done", "}", "esac"}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=")
