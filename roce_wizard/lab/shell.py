"""The small POSIX-sh subset the simulated targets run command lines with.

An SSH exec request carries one command line; ESXi runs it with busybox ``sh``, a Linux guest with
its login shell. The lab parses it here and runs the words against the target's program table
(`lab/proto.py`): what the checks, probes and fixes send, and what a person types at a prompt.

Grammar (enough for roce-wizard's probes and fixes and for hand use):

    list      := and_or ((';' | '&' | NEWLINE) and_or)*
    and_or    := pipeline (('&&' | '||') pipeline)*
    pipeline  := ['!'] command ('|' command)*
    command   := simple | for | while | until | if | '{ list; }' | '( list )'  [redirections]
    simple    := [NAME=value]… word… with redirections anywhere: [n]>file [n]>>file [n]<file
                 [n]>&m &>file
    words     : 'single', "double with $VAR ${VAR} ${VAR:-x} $(…) `…` $? $((1+2))", \\escapes,
                unquoted results of expansions split on blanks, * ? globs over the virtual files

Built in: echo, printf, cat, ls, test/[, true, false, :, exit, command [-v], which, type, export,
unset, set, cd, pwd, sleep (capped, and reported as `Reply.delay_s` so the server waits without
blocking the other targets) and the filters grep, head, tail, wc, sort, uniq, cut, tr, tee, xargs.
A name neither built in nor in the program table is ``sh: NAME: not found`` with exit 127, as both
busybox (ESXi) and dash print it. ``cmd &`` is asynchronous as in a real shell: the job is forked at once
(its words are expanded and its `>` files created then, `$!` is its pid, its stdin is /dev/null) and it runs
when the foreground lets time pass — at a `sleep`, a `wait [pid]`, or when the line ends (a job outlives its
shell) — so a loop polling a background server's log really polls. No `kill`/job control (`%1`).
A program answering ``action="reboot"`` ends the line: the machine is going down.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from roce_wizard.lab.proto import Ctx, Program, Reply

__all__ = ["ESXI_PATH", "LINUX_PATH", "ShellSyntaxError", "parse", "run"]

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


class _Parser:
    def __init__(self, src: str):
        self.s = src
        self.i = 0

    # -- low level

    def eof(self) -> bool:
        return self.i >= len(self.s)

    def peek(self, n: int = 1) -> str:
        return self.s[self.i:self.i + n]

    def error(self, what: str | None = None) -> ShellSyntaxError:
        if what is None:
            what = "end of file" if self.eof() else self._token_text()
        return ShellSyntaxError(f'syntax error: unexpected "{what}"')

    def _token_text(self) -> str:
        for op in ("&&", "||", ";;", ">>", ";", "&", "|", "(", ")", "<", ">"):
            if self.s.startswith(op, self.i):
                return op
        if self.peek() == "\n":
            return "newline"
        m = re.match(r"[^\s;&|()<>]+", self.s[self.i:])
        return m.group(0) if m else self.peek()

    def blanks(self) -> None:
        """Spaces, tabs, line continuations and comments (not newlines)."""
        while not self.eof():
            c = self.peek()
            if c in " \t\r":
                self.i += 1
            elif self.peek(2) == "\\\n":
                self.i += 2
            elif c == "#":
                while not self.eof() and self.peek() != "\n":
                    self.i += 1
            else:
                break

    def newlines(self) -> None:
        while True:
            self.blanks()
            if self.peek() == "\n":
                self.i += 1
            else:
                break

    def peek_word(self) -> str | None:
        """The next bare word (for reserved words), without consuming it."""
        self.blanks()
        m = re.match(r"[A-Za-z_!{}\[\]][A-Za-z0-9_!{}\[\]-]*", self.s[self.i:])
        if not m:
            return None
        end = self.i + m.end()
        if end < len(self.s) and self.s[end] not in _META:
            return None
        return m.group(0)

    def take_word(self, word: str) -> bool:
        if self.peek_word() == word:
            self.i += len(word)
            return True
        return False

    def expect_word(self, word: str) -> None:
        if not self.take_word(word):
            raise self.error()

    def take_op(self, op: str) -> bool:
        self.blanks()
        if self.s.startswith(op, self.i):
            # `&` must not be the start of `&&`, `|` of `||`
            if op in ("&", "|", ";") and self.s.startswith(op * 2, self.i):
                return False
            self.i += len(op)
            return True
        return False

    # -- grammar

    def parse(self) -> Sequence:
        body = self.list_()
        self.newlines()
        if not self.eof():
            raise self.error()
        return body

    def at_list_end(self) -> bool:
        self.blanks()
        if self.eof() or self.peek() == ")":
            return True
        if self.s.startswith(";;", self.i):
            return True
        w = self.peek_word()
        return w in _RESERVED_END

    def list_(self) -> Sequence:
        items: list[Node] = []
        self.newlines()
        while not self.at_list_end():
            items.append(self.and_or())
            self.blanks()
            if self.take_op("&"):
                items[-1] = Background(items[-1])
                self.newlines()
                continue
            if self.take_op(";"):
                self.newlines()
                continue
            if self.peek() == "\n":
                self.newlines()
                continue
            break
        return Sequence(items)

    def body(self) -> Sequence:
        """A compound command's list: it may not be empty (`if then` is a syntax error)."""
        items = self.list_()
        if not items.items:
            raise self.error(self.peek_word() or None)
        return items

    def and_or(self) -> Node:
        first = self.pipeline()
        rest: list[tuple[str, Node]] = []
        while True:
            self.blanks()
            if self.s.startswith("&&", self.i) or self.s.startswith("||", self.i):
                op = self.s[self.i:self.i + 2]
                self.i += 2
                self.newlines()
                rest.append((op, self.pipeline()))
            else:
                break
        return AndOr(first, rest) if rest else first

    def pipeline(self) -> Node:
        negate = False
        if self.peek_word() == "!":
            self.i += 1
            negate = True
        commands = [self.command()]
        while self.take_op("|"):
            self.newlines()
            commands.append(self.command())
        if len(commands) == 1 and not negate:
            return commands[0]
        return Pipeline(commands, negate)

    def command(self) -> Node:
        self.blanks()
        word = self.peek_word()
        node: Node
        if word == "for":
            node = self.for_()
        elif word in ("while", "until"):
            node = self.while_(word)
        elif word == "if":
            node = self.if_()
        elif word == "{":
            self.i += 1
            body = self.list_()
            self.expect_word("}")
            node = Group(body, subshell=False)
        elif self.peek() == "(":
            self.i += 1
            body = self.list_()
            self.blanks()
            if not self.take_op(")"):
                raise self.error()
            node = Group(body, subshell=True)
        elif word in _RESERVED_END:
            raise self.error(word)
        else:
            return self.simple()
        # redirections after a compound command
        while True:
            self.blanks()
            redirect = self.redirect()
            if redirect is None:
                break
            node.redirects.append(redirect)  # type: ignore[union-attr]
        return node

    def for_(self) -> For:
        self.expect_word("for")
        self.blanks()
        m = _NAME.match(self.s, self.i)
        if not m:
            raise self.error()
        self.i = m.end()
        words: list[Word] | None = None
        self.newlines()
        if self.take_word("in"):
            words = []
            while True:
                self.blanks()
                if self.eof() or self.peek() in ";\n":
                    break
                if self.peek() in _META:
                    raise self.error()
                words.append(self.word())
        self.blanks()
        self.take_op(";")
        self.newlines()
        self.expect_word("do")
        body = self.body()
        self.expect_word("done")
        return For(m.group(0), words, body)

    def while_(self, kind: str) -> While:
        self.expect_word(kind)
        cond = self.body()
        self.expect_word("do")
        body = self.body()
        self.expect_word("done")
        return While(cond, body, until=kind == "until")

    def if_(self) -> If:
        self.expect_word("if")
        branches = []
        cond = self.body()
        self.expect_word("then")
        body = self.body()
        branches.append((cond, body))
        orelse = None
        while True:
            if self.take_word("elif"):
                cond = self.body()
                self.expect_word("then")
                branches.append((cond, self.body()))
            elif self.take_word("else"):
                orelse = self.body()
                self.expect_word("fi")
                break
            else:
                self.expect_word("fi")
                break
        return If(branches, orelse)

    def redirect(self) -> Redirect | None:
        if re.match(r"\d*<<", self.s[self.i:]):
            raise ShellSyntaxError("here-documents are not supported by the lab shell")
        m = re.match(r"(\d*)(>>|>&|<&|>\||>|<)|&>", self.s[self.i:])
        if not m:
            return None
        if m.group(0) == "&>":
            fd, op = 1, "&>"
        else:
            op = m.group(2)
            if op == "<<":
                raise ShellSyntaxError("here-documents are not supported by the lab shell")
            fd = int(m.group(1)) if m.group(1) else (0 if op in ("<", "<&") else 1)
            op = ">" if op == ">|" else op
        self.i += m.end()
        self.blanks()
        if self.eof() or self.peek() in _META:
            raise self.error()
        return Redirect(fd, op, self.word())

    def simple(self) -> Simple:
        node = Simple([], [])
        while True:
            self.blanks()
            redirect = self.redirect()
            if redirect is None and (self.eof() or self.peek() in ";&|()\n"):
                break
            if redirect is not None:
                node.redirects.append(redirect)
                continue
            if not node.words:
                m = _ASSIGN.match(self.s, self.i)
                if m:
                    self.i = m.end()
                    value = self.word() if not (self.eof() or self.peek() in _META) else Word([Lit("", True)])
                    node.assigns.append((m.group(1), value))
                    continue
            node.words.append(self.word())
        if not node.words and not node.assigns and not node.redirects:
            raise self.error()
        return node

    # -- words

    def word(self) -> Word:
        parts: list[Lit | Var | Sub | Arith] = []
        buf: list[str] = []

        def flush() -> None:
            if buf:
                parts.append(Lit("".join(buf), False))
                buf.clear()

        while not self.eof():
            c = self.peek()
            if c in _META:
                break
            if c == "\\":
                flush()
                nxt = self.s[self.i + 1:self.i + 2]
                self.i += 2
                if nxt == "\n":
                    continue
                parts.append(Lit(nxt, True))
            elif c == "'":
                flush()
                end = self.s.find("'", self.i + 1)
                if end < 0:
                    raise ShellSyntaxError("syntax error: unterminated quoted string")
                parts.append(Lit(self.s[self.i + 1:end], True))
                self.i = end + 1
            elif c == '"':
                flush()
                self.i += 1
                parts.extend(self.double_quoted())
            elif c == "$":
                part = self.dollar(quoted=False)
                if part is None:
                    buf.append("$")
                else:
                    flush()
                    parts.append(part)
            elif c == "`":
                flush()
                parts.append(self.backquote(quoted=False))
            elif c == "~" and not parts and not buf:
                m = re.match(r"~(?=/|$|[\s;&|()<>])", self.s[self.i:])
                if m:
                    flush()
                    parts.append(Var("HOME", True))
                    self.i += 1
                else:
                    buf.append(c)
                    self.i += 1
            else:
                buf.append(c)
                self.i += 1
        flush()
        if not parts:
            raise self.error()
        return Word(parts)

    def double_quoted(self) -> list[Lit | Var | Sub | Arith]:
        parts: list[Lit | Var | Sub | Arith] = [Lit("", True)]  # "" is an (empty) field
        buf: list[str] = []

        def flush() -> None:
            if buf:
                parts.append(Lit("".join(buf), True))
                buf.clear()

        while True:
            if self.eof():
                raise ShellSyntaxError("syntax error: unterminated quoted string")
            c = self.peek()
            if c == '"':
                self.i += 1
                break
            if c == "\\":
                nxt = self.s[self.i + 1:self.i + 2]
                if nxt in ('"', "\\", "$", "`"):
                    buf.append(nxt)
                    self.i += 2
                elif nxt == "\n":
                    self.i += 2
                else:
                    buf.append("\\")
                    self.i += 1
            elif c == "$":
                part = self.dollar(quoted=True)
                if part is None:
                    buf.append("$")
                else:
                    flush()
                    parts.append(part)
            elif c == "`":
                flush()
                parts.append(self.backquote(quoted=True))
            else:
                buf.append(c)
                self.i += 1
        flush()
        return parts

    def dollar(self, quoted: bool) -> Var | Sub | Arith | None:
        s, i = self.s, self.i
        if s.startswith("$((", i):
            self.i += 3
            start = self.i
            depth = 0
            while not self.eof():
                if self.s.startswith("))", self.i) and depth == 0:
                    inner = _Parser(self.s[start:self.i])
                    self.i += 2
                    return Arith(inner.raw_word(), quoted)
                if self.peek() == "(":
                    depth += 1
                elif self.peek() == ")":
                    depth -= 1
                self.i += 1
            raise ShellSyntaxError("syntax error: unterminated $((")
        if s.startswith("$(", i):
            self.i += 2
            body = self.list_()
            self.blanks()
            if not self.take_op(")"):
                raise self.error()
            return Sub(body, quoted)
        if s.startswith("${", i):
            end = s.find("}", i)
            if end < 0:
                raise ShellSyntaxError("syntax error: missing }")
            inner = s[i + 2:end]
            self.i = end + 1
            if inner.startswith("#") and len(inner) > 1:
                return Var(inner[1:], quoted, "#")
            m = re.match(r"([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[?$#@*!])(:-|:=|:\+|-|=|\+)?(.*)$", inner, re.S)
            if not m or (m.group(3) and not m.group(2)):
                raise ShellSyntaxError(f"syntax error: bad substitution ${{{inner}}}")
            arg = _Parser(m.group(3)).raw_word() if m.group(2) else None
            return Var(m.group(1), quoted, m.group(2) or "", arg)
        m = re.match(r"\$([A-Za-z_][A-Za-z0-9_]*|[0-9?$#@*!])", s[i:])
        if m:
            self.i += m.end()
            return Var(m.group(1), quoted)
        self.i += 1
        return None

    def backquote(self, quoted: bool) -> Sub:
        end = self.s.find("`", self.i + 1)
        if end < 0:
            raise ShellSyntaxError("syntax error: unterminated `")
        body = _Parser(self.s[self.i + 1:end].replace("\\`", "`")).parse()
        self.i = end + 1
        return Sub(body, quoted)

    def raw_word(self) -> Word:
        """The whole remaining text as one word with expansions (for ${x:-…} and $((…)))."""
        parts: list[Lit | Var | Sub | Arith] = [Lit("", True)]
        buf: list[str] = []
        while not self.eof():
            c = self.peek()
            if c == "$":
                part = self.dollar(quoted=True)
                if part is None:
                    buf.append("$")
                else:
                    if buf:
                        parts.append(Lit("".join(buf), True))
                        buf.clear()
                    parts.append(part)
            elif c in "'\"":
                end = self.s.find(c, self.i + 1)
                end = len(self.s) if end < 0 else end
                buf.append(self.s[self.i + 1:end])
                self.i = end + 1
            else:
                buf.append(c)
                self.i += 1
        if buf:
            parts.append(Lit("".join(buf), True))
        return Word(parts)


def parse(line: str) -> Sequence:
    """Parse a command line (raises ShellSyntaxError)."""
    return _Parser(line).parse()


# ---------------------------------------------------------------------------- running


class _Exit(Exception):
    def __init__(self, code: int):
        self.code = code


class _Halt(Exception):
    """A program took the machine down (reboot): nothing after it runs."""


class _Sink(Protocol):
    """Where a command's output goes: a buffer, a pipe, a file, /dev/null."""

    def write(self, text: str) -> None: ...


class _Buffer(_Sink):
    def __init__(self) -> None:
        self.chunks: list[str] = []

    def write(self, text: str) -> None:
        if text:
            self.chunks.append(text)

    def text(self) -> str:
        return "".join(self.chunks)


class _Null(_Sink):
    def write(self, text: str) -> None:
        pass


class _FileSink(_Sink):
    """`> file`: collects what the command writes; the file is written when the command ends (one
    write, as `echo 106 > /sys/…` does), and a write the target refuses is the command's error."""

    def __init__(self, path: str, initial: str):
        self.path = path
        self.buf = [initial] if initial else []

    def write(self, text: str) -> None:
        if text:
            self.buf.append(text)

    def content(self) -> str:
        return "".join(self.buf)


_Fds = dict[int, _Sink]
Builtin = Callable[["_Shell", list[str], str, _Fds], int]


class _Shell:
    def __init__(self, ctx: Ctx, programs: dict[str, Program], write_file: FileWriter | None, esxi: bool,
                 unreadable: dict[str, str] | None = None, reload_files: Callable[[], dict[str, str]] | None = None):
        self.ctx = ctx
        self.programs = programs
        self.files = ctx.files
        self._write_file = write_file
        self._reload_files = reload_files
        self.unreadable = unreadable or {}
        self.esxi = esxi
        self.vars: dict[str, str] = {
            "PATH": ESXI_PATH if esxi else LINUX_PATH,
            "HOME": "/",
            "USER": "root",
            "LOGNAME": "root",
            "SHELL": "/bin/sh",
            "HOSTNAME": ctx.target,
            "PWD": "/",
            "IFS": " \t\n",
        }
        if not esxi:
            self.vars["HOME"] = "/root"
        self.vars.update(ctx.env)
        self.exported: set[str] = set(self.vars)
        self.status = 0
        self.action: str | None = None
        self.delay_s = 0.0
        self.jobs: list[tuple[int, Node, dict[str, str], _Fds]] = []  # started with `&`, not yet run
        self.job_status: dict[int, int] = {}  # pid -> exit status of a job that ran
        self.last_pid: int | None = None

    # -- files

    def write_file(self, path: str, content: str) -> str | None:
        """Write a whole file; the target's hook may refuse (its error text is returned)."""
        if self._write_file is not None:
            error = self._write_file(path, content)
            if error:
                return error
        if self._reload_files is not None:  # the target decides what the file reads back as
            fresh = self._reload_files()
            self.files.clear()
            self.files.update(fresh)
            if path in fresh or path.startswith(("/sys/", "/proc/")):
                return None
        self.files[path] = content
        return None

    def read_file(self, path: str) -> tuple[str | None, str | None]:
        """(content, None) or (None, reason): `No such file or directory`, `Permission denied`."""
        if path in self.unreadable:
            return None, self.unreadable[path]
        if path in self.files:
            return self.files[path], None
        if self.is_dir(path):
            return None, "Is a directory"
        return None, "No such file or directory"

    def close_sinks(self, sinks: list[_FileSink], err: _Sink) -> None:
        for sink in sinks:
            error = self.write_file(sink.path, sink.content())
            if error:
                err.write(error.rstrip("\n") + "\n")
                self.status = 1

    def is_dir(self, path: str) -> bool:
        prefix = path.rstrip("/") + "/"
        return path == "/" or any(k.startswith(prefix) for k in self.files)

    # -- resolution

    def resolve(self, name: str) -> tuple[str, Program | Builtin] | None:
        """(the path `command -v` prints, the callable) or None when not found."""
        if name in SPECIAL_BUILTINS:
            return name, SPECIAL_BUILTINS[name]
        default_dir = "/bin" if self.esxi else "/usr/bin"
        if "/" in name:
            if name in self.programs:
                return name, self.programs[name]
            base = name.rsplit("/", 1)[1]
            if base in self.programs and name == f"{default_dir}/{base}":
                return name, self.programs[base]
            if base in UTILITIES and base not in self.programs and name in (f"/bin/{base}", f"/usr/bin/{base}"):
                return name, UTILITIES[base]
            return None
        if name in self.programs:
            return f"{default_dir}/{name}", self.programs[name]
        for directory in self.vars.get("PATH", "").split(":"):
            path = f"{directory.rstrip('/')}/{name}"
            if path in self.programs:
                return path, self.programs[path]
        if name in UTILITIES:
            return f"{default_dir}/{name}", UTILITIES[name]
        return None

    # -- expansion

    def expand(self, word: Word, fds: _Fds) -> list[str]:
        fields: list[str] = []
        current: list[str] = []
        have = False  # the current field exists (even if empty: "")
        glob = False
        ifs = self.vars.get("IFS", " \t\n")

        for part in word.parts:
            if isinstance(part, Lit):
                current.append(part.text)
                have = True
                if not part.quoted and any(ch in part.text for ch in "*?["):
                    glob = True
                continue
            value = self.expand_part(part, fds)
            if part.quoted:
                current.append(value)
                have = True
                continue
            # field splitting of an unquoted expansion
            if not value:
                continue
            if not value.strip(ifs):
                if have:
                    fields.append("".join(current))
                    current, have = [], False
                continue
            pieces = re.split(f"[{re.escape(ifs)}]+", value) if ifs else [value]
            if value[0] in ifs and have:
                fields.append("".join(current))
                current, have = [], False
            pieces = [p for p in pieces if p != ""]
            for n, piece in enumerate(pieces):
                current.append(piece)
                have = True
                if n < len(pieces) - 1:
                    fields.append("".join(current))
                    current, have = [], False
            if value[-1] in ifs and have:
                fields.append("".join(current))
                current, have = [], False
        if have:
            fields.append("".join(current))
        if glob:
            out: list[str] = []
            for f in fields:
                out.extend(self.glob(f))
            return out
        return fields

    def glob(self, pattern: str) -> list[str]:
        if not any(ch in pattern for ch in "*?["):
            return [pattern]
        depth = pattern.count("/")
        names = set()
        for path in self.files:
            parts = path.split("/")
            if len(parts) > depth:
                names.add("/".join(parts[:depth + 1]))
        hits = sorted(n for n in names if fnmatch.fnmatchcase(n, pattern))
        return hits or [pattern]

    def expand_one(self, word: Word, fds: _Fds) -> str:
        """A word expanded without field splitting or globs (assignments, ${x:-word}, $((…)))."""
        return "".join(p.text if isinstance(p, Lit) else self.expand_part(p, fds) for p in word.parts)

    def expand_part(self, part: Var | Sub | Arith, fds: _Fds) -> str:
        if isinstance(part, Sub):
            out = _Buffer()
            saved = dict(self.vars), self.status
            try:
                self.exec(part.body, "", {0: fds.get(0, _Null()), 1: out, 2: fds[2]})
            except _Exit as e:
                self.status = e.code
            finally:
                status = self.status
                self.vars = saved[0]
                self.status = status
            return out.text().rstrip("\n")
        if isinstance(part, Arith):
            text = self.expand_one(part.expr, fds)
            return str(self.arith(text))
        value = self.var(part.name)
        if part.op == "#":
            return str(len(value or ""))
        if part.op in (":-", ":=", ":+") and part.arg is not None:
            empty = not value
            if part.op == ":+":
                return self.expand_one(part.arg, fds) if not empty else ""
            if empty:
                value = self.expand_one(part.arg, fds)
                if part.op == ":=":
                    self.vars[part.name] = value
            return value or ""
        if part.op in ("-", "=", "+") and part.arg is not None:
            unset = value is None
            if part.op == "+":
                return self.expand_one(part.arg, fds) if not unset else ""
            if unset:
                value = self.expand_one(part.arg, fds)
                if part.op == "=":
                    self.vars[part.name] = value
            return value or ""
        return value or ""

    def var(self, name: str) -> str | None:
        if name == "?":
            return str(self.status)
        if name == "$":
            return "4242"
        if name in ("#",):
            return "0"
        if name == "!":
            return "" if self.last_pid is None else str(self.last_pid)
        if name in ("@", "*") or name.isdigit() and name != "0":
            return ""
        if name == "0":
            return "sh"
        return self.vars.get(name)

    def arith(self, text: str) -> int:
        expr = re.sub(r"[A-Za-z_][A-Za-z0-9_]*", lambda m: self.vars.get(m.group(0), "0") or "0", text)
        if not re.fullmatch(r"[0-9\s+\-*/%()<>=!&|]*", expr) or "**" in expr:
            raise ShellSyntaxError(f"arithmetic syntax error: {text}")
        expr = expr.replace("&&", " and ").replace("||", " or ").replace("/", "//")
        expr = re.sub(r"!(?!=)", " not ", expr)
        try:
            return int(eval(expr, {"__builtins__": {}}, {}))  # noqa: S307 - digits and operators only
        except Exception as exc:  # noqa: BLE001
            raise ShellSyntaxError(f"arithmetic syntax error: {text}") from exc

    # -- execution

    def start_job(self, node: Node, fds: _Fds) -> int:
        """`node &`: fork now (a copy of the variables; the files its `>`/`&>` redirections name exist from
        this moment, empty), run later (`run_jobs`)."""
        self.last_pid = 4243 + len(self.job_status) + len(self.jobs)
        for r in getattr(node, "redirects", []):
            if r.op in (">", "&>", ">&", ">>"):
                target = self.expand(r.target, fds)
                path = target[0] if len(target) == 1 else ""
                if path.startswith("/") and not path.startswith(("/dev/", "/sys/", "/proc/")):  # opening is no write
                    if r.op != ">>" or path not in self.files:
                        self.write_file(path, "")
        self.jobs.append((self.last_pid, node, dict(self.vars), dict(fds)))
        self.status = 0
        return 0

    def run_jobs(self, until: int | None = None) -> None:
        """Let the background jobs run (in the order they were started), up to job `until` when given."""
        while self.jobs:
            pid, node, variables, fds = self.jobs.pop(0)
            saved, status = self.vars, self.status
            self.vars = variables
            try:
                self.exec(node, "", fds)
            except _Exit as e:
                self.status = e.code
            finally:
                self.vars = saved
            self.job_status[pid], self.status = self.status, status
            if pid == until:
                return

    def exec(self, node: Node, stdin: str, fds: _Fds) -> int:
        if isinstance(node, Background):
            return self.start_job(node.node, fds)
        if isinstance(node, Sequence):
            for item in node.items:
                self.exec(item, stdin, fds)
            return self.status
        if isinstance(node, AndOr):
            self.exec(node.first, stdin, fds)
            for op, nxt in node.rest:
                if (op == "&&") == (self.status == 0):
                    self.exec(nxt, stdin, fds)
            return self.status
        if isinstance(node, Pipeline):
            data = stdin
            for n, cmd in enumerate(node.commands):
                last = n == len(node.commands) - 1
                out: _Sink = fds[1] if last else _Buffer()
                self.exec(cmd, data, {**fds, 1: out})
                if not last:
                    data = out.text()  # type: ignore[attr-defined]
            if node.negate:
                self.status = 0 if self.status else 1
            return self.status
        if isinstance(node, Simple):
            return self.simple(node, stdin, fds)
        opened: list[_FileSink] = []
        inner, stdin = self.redirect(node.redirects, fds, stdin, opened)  # type: ignore[union-attr]
        if inner is None:
            return self.status
        try:
            return self.compound(node, stdin, inner)
        finally:
            self.close_sinks(opened, fds[2])

    def compound(self, node: Node, stdin: str, fds: _Fds) -> int:
        if isinstance(node, For):
            words = [] if node.words is None else [f for w in node.words for f in self.expand(w, fds)]
            self.status = 0
            for value in words:
                self.vars[node.var] = value
                self.exec(node.body, stdin, fds)
            return self.status
        if isinstance(node, While):
            status = 0
            for _ in range(MAX_LOOP):
                self.exec(node.cond, stdin, fds)
                if (self.status == 0) == node.until:
                    break
                self.exec(node.body, stdin, fds)
                status = self.status
            self.status = status
            return status
        if isinstance(node, If):
            for cond, body in node.branches:
                self.exec(cond, stdin, fds)
                if self.status == 0:
                    return self.exec(body, stdin, fds)
            if node.orelse is not None:
                return self.exec(node.orelse, stdin, fds)
            self.status = 0
            return 0
        if isinstance(node, Group):
            if not node.subshell:
                return self.exec(node.body, stdin, fds)
            saved = dict(self.vars)
            try:
                self.exec(node.body, stdin, fds)
            except _Exit as e:
                self.status = e.code
            finally:
                self.vars = saved
            return self.status
        raise TypeError(node)

    def redirect(self, redirects: list[Redirect], fds: _Fds, stdin: str,
                 opened: list[_FileSink]) -> tuple[_Fds | None, str]:
        if not redirects:
            return fds, stdin
        fds = dict(fds)
        for r in redirects:
            target = self.expand(r.target, fds)
            if len(target) != 1:
                shown = " ".join(target) or '""'
                fds[2].write(f"sh: {shown}: ambiguous redirect\n")
                self.status = 1
                return None, stdin
            path = target[0]
            if r.op in (">&", "<&"):
                if path == "-":
                    fds[r.fd] = _Null()
                elif path.isdigit() and int(path) in fds:
                    fds[r.fd] = fds[int(path)]
                elif r.op == ">&" and not path.isdigit():
                    sink = self.open_sink(path, False, fds, opened)
                    if sink is None:
                        return None, stdin
                    fds[1] = fds[2] = sink
                else:
                    fds[2].write(f"sh: {path}: bad file descriptor\n")
                    self.status = 1
                    return None, stdin
            elif r.op == "<":
                if path == "/dev/null":
                    stdin = ""
                else:
                    content, reason = self.read_file(path)
                    if content is None:
                        fds[2].write(f"sh: can't open {path}: {reason.lower() if reason else ''}\n" if self.esxi
                                     else f"sh: {path}: {reason}\n")
                        self.status = 1
                        return None, stdin
                    stdin = content
            else:
                sink = self.open_sink(path, r.op == ">>", fds, opened)
                if sink is None:
                    return None, stdin
                if r.op == "&>":
                    fds[1] = fds[2] = sink
                else:
                    fds[r.fd] = sink
        return fds, stdin

    def open_sink(self, path: str, append: bool, fds: _Fds, opened: list[_FileSink]) -> _Sink | None:
        if path == "/dev/null":
            return _Null()
        if path in ("/dev/stdout", "/dev/fd/1"):
            return fds[1]
        if path in ("/dev/stderr", "/dev/fd/2"):
            return fds[2]
        if not path.startswith("/"):
            path = self.vars.get("PWD", "/").rstrip("/") + "/" + path
        if self.is_dir(path):
            fds[2].write(f"sh: can't create {path}: Is a directory\n")
            self.status = 1
            return None
        for sink in opened:  # `> f 2> f`: one file
            if sink.path == path:
                return sink
        sink = _FileSink(path, self.files.get(path, "") if append else "")
        opened.append(sink)
        return sink

    def simple(self, node: Simple, stdin: str, fds: _Fds) -> int:
        argv: list[str] = []
        for word in node.words:
            argv.extend(self.expand(word, fds))
        assigns = [(name, self.expand_one(value, fds)) for name, value in node.assigns]
        opened: list[_FileSink] = []
        fds2, stdin = self.redirect(node.redirects, fds, stdin, opened)
        if fds2 is None:
            return self.status
        try:
            if not argv:
                for name, value in assigns:
                    self.vars[name] = value
                if not any(isinstance(p, Sub) for _, w in node.assigns for p in w.parts):
                    self.status = 0
                return self.status
            self.status = self.call(argv, stdin, fds2, dict(assigns))
            return self.status
        finally:
            self.close_sinks(opened, fds[2])

    def call(self, argv: list[str], stdin: str, fds: _Fds, env_extra: dict[str, str] | None = None) -> int:
        name = argv[0]
        found = self.resolve(name)
        if found is None:
            if name in self.files:
                fds[2].write(f"sh: {name}: Permission denied\n")
                return 126
            fds[2].write(f"sh: {name}: not found\n")
            return 127
        _, fn = found
        if fn in SPECIAL_BUILTINS.values() or fn in UTILITIES.values():
            return fn(self, argv, stdin, fds)  # type: ignore[call-arg]
        env = {k: v for k, v in self.vars.items() if k in self.exported}
        env.update(env_extra or {})
        ctx = Ctx(world=self.ctx.world, target=self.ctx.target, stdin=stdin, env=env, files=self.files)
        reply: Reply = fn(ctx, argv)  # type: ignore[call-arg]
        fds[1].write(reply.stdout)
        fds[2].write(reply.stderr)
        self.delay_s += float(getattr(reply, "delay_s", 0.0) or 0.0)
        if reply.action:
            self.action = reply.action
            if reply.action == "reboot":
                self.status = reply.exit
                raise _Halt()
        return reply.exit


# ---------------------------------------------------------------------------- built-ins


def _b_true(sh: _Shell, argv: list[str], stdin: str, fds: _Fds) -> int:
    return 0


def _b_false(sh: _Shell, argv: list[str], stdin: str, fds: _Fds) -> int:
    return 1


def _b_exit(sh: _Shell, argv: list[str], stdin: str, fds: _Fds) -> int:
    code = sh.status
    if len(argv) > 1:
        try:
            code = int(argv[1]) & 0xFF
        except ValueError:
            fds[2].write(f"sh: exit: Illegal number: {argv[1]}\n")
            code = 2
    raise _Exit(code)


def _echo_escapes(text: str) -> tuple[str, bool]:
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            n = text[i + 1]
            if n == "c":
                return "".join(out), True
            mapping = {"n": "\n", "t": "\t", "\\": "\\", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "0": "\0"}
            if n in mapping:
                out.append(mapping[n])
                i += 2
                continue
        out.append(c)
        i += 1
    return "".join(out), False


def _b_echo(sh: _Shell, argv: list[str], stdin: str, fds: _Fds) -> int:
    args = argv[1:]
    newline, escapes = True, False
    while args and re.fullmatch(r"-[neE]+", args[0]):
        newline = newline and "n" not in args[0]
        escapes = "e" in args[0] or (escapes and "E" not in args[0])
        args = args[1:]
    text = " ".join(args)
    if escapes:
        text, stop = _echo_escapes(text)
        if stop:
            newline = False
    fds[1].write(text + ("\n" if newline else ""))
    return 0


def _b_printf(sh: _Shell, argv: list[str], stdin: str, fds: _Fds) -> int:
    if len(argv) < 2:
        fds[2].write("printf: usage: printf format [arguments]\n")
        return 2
    fmt, args = argv[1], argv[2:]
    out: list[str] = []
    status = 0
    while True:
        consumed = 0
        i = 0
        while i < len(fmt):
            c = fmt[i]
            if c == "\\" and i + 1 < len(fmt):
                text, _ = _echo_escapes(fmt[i:i + 2])
                out.append(text)
                i += 2
                continue
            if c == "%" and i + 1 < len(fmt):
                m = re.match(r"%([-+ 0#]*)(\d*)(?:\.(\d+))?([sdibxXouc%])", fmt[i:])
                if not m:
                    out.append(c)
                    i += 1
                    continue
                i += m.end()
                conv = m.group(4)
                if conv == "%":
                    out.append("%")
                    continue
                arg = args[consumed] if consumed < len(args) else ""
                consumed += 1
                spec = f"%{m.group(1)}{m.group(2)}{'.' + m.group(3) if m.group(3) else ''}"
                if conv in "dioxXu":
                    try:
                        num = int(arg, 0) if arg else 0
                    except ValueError:
                        fds[2].write(f"printf: {arg}: invalid number\n")
                        num, status = 0, 1
                    out.append((spec + ("d" if conv in "iu" else conv)) % num)
                elif conv == "b":
                    out.append((spec + "s") % _echo_escapes(arg)[0])
                elif conv == "c":
                    out.append(arg[:1])
                else:
                    out.append((spec + "s") % arg)
                continue
            out.append(c)
            i += 1
        if consumed == 0 or consumed >= len(args):
            break
        args = args[consumed:]
    fds[1].write("".join(out))
    return status


def _b_export(sh: _Shell, argv: list[str], stdin: str, fds: _Fds) -> int:
    for arg in argv[1:]:
        if arg == "-p":
            for k in sorted(sh.exported):
                if k in sh.vars:
                    fds[1].write(f"export {k}='{sh.vars[k]}'\n")
            continue
        name, eq, value = arg.partition("=")
        if not _NAME.fullmatch(name):
            fds[2].write(f"sh: export: bad variable name: {arg}\n")
            return 1
        if eq:
            sh.vars[name] = value
        sh.exported.add(name)
    return 0


def _b_unset(sh: _Shell, argv: list[str], stdin: str, fds: _Fds) -> int:
    for name in argv[1:]:
        if name not in ("-v", "-f"):
            sh.vars.pop(name, None)
            sh.exported.discard(name)
    return 0


def _b_set(sh: _Shell, argv: list[str], stdin: str, fds: _Fds) -> int:
    if len(argv) == 1:
        for k in sorted(sh.vars):
            fds[1].write(f"{k}='{sh.vars[k]}'\n")
    return 0  # options (-e, -u, -o pipefail) are accepted and ignored


def _b_cd(sh: _Shell, argv: list[str], stdin: str, fds: _Fds) -> int:
    path = argv[1] if len(argv) > 1 else sh.vars.get("HOME", "/")
    if not path.startswith("/"):
        path = sh.vars.get("PWD", "/").rstrip("/") + "/" + path
    if not sh.is_dir(path) and path not in ("/", "/tmp", "/root", sh.vars.get("HOME", "/")):
        fds[2].write(f"sh: cd: can't cd to {argv[1]}\n")
        return 2
    sh.vars["PWD"] = path
    return 0


def _b_pwd(sh: _Shell, argv: list[str], stdin: str, fds: _Fds) -> int:
    fds[1].write(sh.vars.get("PWD", "/") + "\n")
    return 0


def _b_command(sh: _Shell, argv: list[str], stdin: str, fds: _Fds) -> int:
    args = argv[1:]
    verbose = 0
    while args and args[0].startswith("-") and args[0] != "--":
        if "v" in args[0]:
            verbose = 1
        if "V" in args[0]:
            verbose = 2
        args = args[1:]
    if args and args[0] == "--":
        args = args[1:]
    if not args:
        return 0
    if not verbose:
        return sh.call(args, stdin, fds)
    status = 0
    for name in args:
        found = sh.resolve(name)
        if found is None:
            if verbose == 2:
                fds[2].write(f"sh: {name}: not found\n")
            status = 1
            continue
        path = found[0]
        if verbose == 2:
            fds[1].write(f"{name} is a shell builtin\n" if path == name else f"{name} is {path}\n")
        else:
            fds[1].write(path + "\n")
    return status


def _b_type(sh: _Shell, argv: list[str], stdin: str, fds: _Fds) -> int:
    return _b_command(sh, ["command", "-V", *argv[1:]], stdin, fds)


def _b_which(sh: _Shell, argv: list[str], stdin: str, fds: _Fds) -> int:
    status = 0
    for name in argv[1:]:
        if name.startswith("-"):
            continue
        found = sh.resolve(name)
        if found is None or found[0] == name and "/" not in name:
            if not sh.esxi:
                fds[2].write(f"which: no {name} in ({sh.vars.get('PATH', '')})\n")
            status = 1
        else:
            fds[1].write(found[0] + "\n")
    return status


def _b_sleep(sh: _Shell, argv: list[str], stdin: str, fds: _Fds) -> int:
    total = 0.0
    for arg in argv[1:]:
        m = re.fullmatch(r"(\d+(?:\.\d*)?)([smhd]?)", arg)
        if not m:
            fds[2].write(f"sleep: invalid number '{arg}'\n")
            return 1
        total += float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]
    if len(argv) < 2:
        fds[2].write("sleep: missing operand\n")
        return 1
    sh.delay_s = min(SLEEP_CAP_S, sh.delay_s + total)
    sh.run_jobs()  # time passes: the background jobs get to run
    return 0


def _b_wait(sh: _Shell, argv: list[str], stdin: str, fds: _Fds) -> int:
    """`wait`: every background job, exit 0; `wait PID`: that job, its exit status (127 for a pid that is not a
    child of this shell, as dash says)."""
    if len(argv) < 2:
        sh.run_jobs()
        return 0
    status = 0
    for arg in argv[1:]:
        if not arg.isdigit():
            fds[2].write(f"sh: wait: Illegal number: {arg}\n" if not sh.esxi else f"sh: wait: {arg}: bad pid\n")
            return 2
        pid = int(arg)
        if pid not in sh.job_status and all(j[0] != pid for j in sh.jobs):
            status = 127
            continue
        sh.run_jobs(until=pid)
        status = sh.job_status.get(pid, 127)
    return status


def _b_test(sh: _Shell, argv: list[str], stdin: str, fds: _Fds) -> int:
    args = argv[1:]
    if argv[0] == "[":
        if not args or args[-1] != "]":
            fds[2].write("sh: [: missing ]\n")
            return 2
        args = args[:-1]
    try:
        return 0 if _test_expr(sh, args) else 1
    except ValueError as exc:
        fds[2].write(f"sh: {argv[0]}: {exc}\n")
        return 2


def _test_expr(sh: _Shell, args: list[str]) -> bool:
    # -o binds looser than -a, which binds looser than !
    if "-o" in args[1:-1]:
        i = args.index("-o", 1)
        return _test_expr(sh, args[:i]) or _test_expr(sh, args[i + 1:])
    if "-a" in args[1:-1]:
        i = args.index("-a", 1)
        return _test_expr(sh, args[:i]) and _test_expr(sh, args[i + 1:])
    if args and args[0] == "!" and len(args) > 1:
        return not _test_expr(sh, args[1:])
    if len(args) == 0:
        return False
    if len(args) == 1:
        return args[0] != ""
    if len(args) == 2:
        op, x = args
        if op == "-n":
            return x != ""
        if op == "-z":
            return x == ""
        if op in ("-e", "-f", "-r", "-s"):
            found = x in sh.files or x in sh.programs or x in sh.unreadable
            if op == "-r":
                return found and x not in sh.unreadable
            return found and (op != "-s" or bool(sh.files.get(x, "x")))
        if op == "-d":
            return sh.is_dir(x)
        if op == "-x":
            return x in sh.programs or sh.resolve(x) is not None and "/" in x
        if op in ("-L", "-h", "-p", "-S", "-b", "-c", "-t"):
            return False
        raise ValueError(f"{op}: unexpected operator")
    if len(args) == 3:
        a, op, b = args
        if op in ("=", "=="):
            return a == b
        if op == "!=":
            return a != b
        ints = {"-eq": int.__eq__, "-ne": int.__ne__, "-lt": int.__lt__, "-le": int.__le__,
                "-gt": int.__gt__, "-ge": int.__ge__}
        if op in ints:
            try:
                return ints[op](int(a), int(b))
            except ValueError:
                raise ValueError(f"{a if not a.lstrip('-').isdigit() else b}: bad number") from None
        raise ValueError(f"{op}: unexpected operator")
    raise ValueError("too many arguments")


def _read_inputs(sh: _Shell, name: str, paths: list[str], stdin: str, fds: _Fds) -> tuple[list[str], int]:
    """Contents of the files named (stdin when none or `-`), and the exit status."""
    named, status = _read_named(sh, name, paths, stdin, fds)
    return [text for _, text in named], status


def _read_named(sh: _Shell, name: str, paths: list[str], stdin: str, fds: _Fds) -> tuple[list[tuple[str, str]], int]:
    """(path, content) of each file read (an unreadable one is skipped, its error written), and the exit
    status: grep names each hit by the file it came from, so it needs the pairs."""
    if not paths:
        return [("(standard input)", stdin)], 0
    texts, status = [], 0
    for path in paths:
        if path == "-":
            texts.append(("(standard input)", stdin))
            continue
        content, reason = sh.read_file(path)
        if content is None:
            if name == "cat" and reason == "Is a directory" and not sh.esxi:
                fds[2].write(f"cat: {path}: Is a directory\n")
            else:
                fds[2].write(f"{name}: {path}: {reason}\n")
            status = 1 if name != "grep" else 2
        else:
            texts.append((path, content))
    return texts, status


def _b_cat(sh: _Shell, argv: list[str], stdin: str, fds: _Fds) -> int:
    paths = [a for a in argv[1:] if not (a.startswith("-") and a != "-")]
    texts, status = _read_inputs(sh, "cat", paths, stdin, fds)
    fds[1].write("".join(texts))
    return status


def _b_tee(sh: _Shell, argv: list[str], stdin: str, fds: _Fds) -> int:
    append = "-a" in argv[1:]
    status = 0
    for path in (a for a in argv[1:] if not a.startswith("-")):
        if path != "/dev/null":
            error = sh.write_file(path, (sh.files.get(path, "") if append else "") + stdin)
            if error:
                fds[2].write(f"tee: {path}: {error.rsplit(': ', 1)[-1].strip()}\n")
                status = 1
    fds[1].write(stdin)
    return status


def _b_ls(sh: _Shell, argv: list[str], stdin: str, fds: _Fds) -> int:
    opts = "".join(a[1:] for a in argv[1:] if a.startswith("-") and len(a) > 1)
    paths = [a for a in argv[1:] if not a.startswith("-") or a == "-"] or [sh.vars.get("PWD", "/")]
    status = 0
    listings: list[tuple[str, list[str]]] = []
    for path in paths:
        if path in sh.files or path in sh.programs:
            fds[1].write(path + "\n")
        elif sh.is_dir(path):
            prefix = path.rstrip("/") + "/"
            names = sorted({k[len(prefix):].split("/", 1)[0] for k in (*sh.files, *sh.programs)
                            if k.startswith(prefix) and len(k) > len(prefix)})
            if "a" in opts:
                names = [".", "..", *names]
            listings.append((path, names))
        else:
            fds[2].write(f"ls: {path}: No such file or directory\n" if sh.esxi
                         else f"ls: cannot access '{path}': No such file or directory\n")
            status = 1 if sh.esxi else 2
    for n, (path, names) in enumerate(listings):
        if len(paths) > 1:
            fds[1].write(("\n" if n else "") + f"{path}:\n")
        fds[1].write("".join(f"{name}\n" for name in names))
    return status


def _bre_to_python(pattern: str) -> str:
    """A POSIX basic regular expression as Python `re` reads it."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            n = pattern[i + 1]
            out.append(n if n in "|(){}+?" else "\\" + n)
            i += 2
            continue
        out.append("\\" + c if c in "|(){}+?" else c)
        i += 1
    return "".join(out)


def _b_grep(sh: _Shell, argv: list[str], stdin: str, fds: _Fds) -> int:
    patterns: list[str] = []
    flags = {"i": False, "v": False, "E": False, "F": False, "q": False, "c": False, "w": False, "x": False,
             "o": False, "n": False, "h": False, "H": False, "l": False, "s": False}
    files: list[str] = []
    args = argv[1:]
    i = 0
    opts_done = False
    while i < len(args):
        a = args[i]
        if not opts_done and a == "--":
            opts_done = True
        elif not opts_done and a.startswith("-") and len(a) > 1:
            j = 1
            while j < len(a):
                ch = a[j]
                if ch == "e":
                    rest = a[j + 1:]
                    if rest:
                        patterns.append(rest)
                    else:
                        i += 1
                        if i >= len(args):
                            fds[2].write("grep: option requires an argument -- 'e'\n")
                            return 2
                        patterns.append(args[i])
                    break
                if ch in flags:
                    flags[ch] = True
                elif ch == "P":
                    flags["E"] = True
                else:
                    fds[2].write(f"grep: invalid option -- '{ch}'\n")
                    return 2
                j += 1
        elif not patterns and not any(x.startswith("-e") for x in args[:i]):
            patterns.append(a)
        else:
            files.append(a)
        i += 1
    if not patterns:
        fds[2].write("Usage: grep [OPTION]... PATTERNS [FILE]...\n")
        return 2
    named, status = _read_named(sh, "grep", files, stdin, fds)
    if flags["s"]:
        status = min(status, 2)
    regexes = []
    for p in patterns:
        for line in p.split("\n"):
            src = re.escape(line) if flags["F"] else (line if flags["E"] else _bre_to_python(line))
            if flags["w"]:
                src = rf"(?<!\w)(?:{src})(?!\w)"
            if flags["x"]:
                src = rf"^(?:{src})$"
            try:
                regexes.append(re.compile(src, re.I if flags["i"] else 0))
            except re.error:
                fds[2].write(f"grep: invalid regular expression: {line}\n")
                return 2
    matched = 0
    out: list[str] = []
    for source, text in named:
        prefix = f"{source}:" if (len(files) > 1 or flags["H"]) and not flags["h"] else ""  # GNU grep -H
        for lineno, line in enumerate(text.splitlines(), 1):
            hit = any(r.search(line) for r in regexes)
            if hit != flags["v"]:
                matched += 1
                if flags["o"] and not flags["v"]:
                    for r in regexes:
                        out.extend(f"{prefix}{m.group(0)}\n" for m in r.finditer(line) if m.group(0))
                else:
                    out.append(f"{prefix}{f'{lineno}:' if flags['n'] else ''}{line}\n")
    if flags["q"]:
        return 0 if matched else (status or 1)
    if flags["c"]:
        fds[1].write(f"{matched}\n")
    elif flags["l"]:
        fds[1].write("".join(f"{f}\n" for f in files[:1]) if matched else "")
    else:
        fds[1].write("".join(out))
    return status if status else (0 if matched else 1)


def _count_arg(argv: list[str], name: str, fds: _Fds) -> tuple[int | str, list[str]] | None:
    count: int | str = 10
    files: list[str] = []
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "-n" or a == "-c":
            if i + 1 >= len(argv):
                fds[2].write(f"{name}: option requires an argument -- 'n'\n")
                return None
            count = argv[i + 1]
            i += 2
            continue
        if re.fullmatch(r"-n[+-]?\d+", a):
            count = a[2:]
        elif re.fullmatch(r"-\d+", a):
            count = a[1:]
        elif a.startswith("-") and a != "-":
            pass
        else:
            files.append(a)
        i += 1
    return count, files


def _b_head(sh: _Shell, argv: list[str], stdin: str, fds: _Fds) -> int:
    parsed = _count_arg(argv, "head", fds)
    if parsed is None:
        return 1
    count, files = parsed
    try:
        n = int(count)
    except ValueError:
        fds[2].write(f"head: invalid number of lines: '{count}'\n")
        return 1
    texts, status = _read_inputs(sh, "head", files, stdin, fds)
    for text in texts:
        lines = text.splitlines(keepends=True)
        fds[1].write("".join(lines[:n]))  # head -n -K: all but the last K, as GNU head
    return status


def _b_tail(sh: _Shell, argv: list[str], stdin: str, fds: _Fds) -> int:
    parsed = _count_arg(argv, "tail", fds)
    if parsed is None:
        return 1
    count, files = parsed
    text_count = str(count)
    try:
        n = int(text_count.lstrip("+"))
    except ValueError:
        fds[2].write(f"tail: invalid number of lines: '{count}'\n")
        return 1
    texts, status = _read_inputs(sh, "tail", files, stdin, fds)
    for text in texts:
        lines = text.splitlines(keepends=True)
        if text_count.startswith("+"):
            fds[1].write("".join(lines[max(n - 1, 0):]))
        else:
            fds[1].write("".join(lines[-n:] if n else []))
    return status


def _b_wc(sh: _Shell, argv: list[str], stdin: str, fds: _Fds) -> int:
    opts = "".join(a[1:] for a in argv[1:] if a.startswith("-") and len(a) > 1) or "lwc"
    files = [a for a in argv[1:] if not a.startswith("-") or a == "-"]
    texts, status = _read_inputs(sh, "wc", files, stdin, fds)
    for n, text in enumerate(texts):
        counts = []
        if "l" in opts:
            counts.append(text.count("\n"))
        if "w" in opts:
            counts.append(len(text.split()))
        if "c" in opts or "m" in opts:
            counts.append(len(text.encode()))
        line = " ".join(str(c) for c in counts) if len(counts) == 1 else " ".join(f"{c:7d}" for c in counts)
        fds[1].write(line + (f" {files[n]}" if files else "") + "\n")
    return status


def _b_sort(sh: _Shell, argv: list[str], stdin: str, fds: _Fds) -> int:
    opts = "".join(a[1:] for a in argv[1:] if a.startswith("-") and len(a) > 1)
    files = [a for a in argv[1:] if not a.startswith("-") or a == "-"]
    texts, status = _read_inputs(sh, "sort", files, stdin, fds)
    lines = [ln for t in texts for ln in t.splitlines()]

    def key(line: str) -> Any:
        if "n" in opts:
            m = re.match(r"\s*(-?\d+(?:\.\d+)?)", line)
            return (float(m.group(1)) if m else 0.0, line)
        return line.lower() if "f" in opts else line

    lines.sort(key=key, reverse="r" in opts)
    if "u" in opts:
        seen: set[str] = set()
        lines = [ln for ln in lines if not (ln in seen or seen.add(ln))]
    fds[1].write("".join(f"{ln}\n" for ln in lines))
    return status


def _b_uniq(sh: _Shell, argv: list[str], stdin: str, fds: _Fds) -> int:
    count = "-c" in argv[1:]
    out: list[tuple[str, int]] = []
    for line in stdin.splitlines():
        if out and out[-1][0] == line:
            out[-1] = (line, out[-1][1] + 1)
        else:
            out.append((line, 1))
    fds[1].write("".join(f"{n:7d} {ln}\n" if count else f"{ln}\n" for ln, n in out))
    return 0


def _b_cut(sh: _Shell, argv: list[str], stdin: str, fds: _Fds) -> int:
    delim, fields_spec, files = "\t", None, []
    args = argv[1:]
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("-d"):
            delim = a[2:] if len(a) > 2 else (args[i + 1] if i + 1 < len(args) else "\t")
            i += 0 if len(a) > 2 else 1
        elif a.startswith("-f"):
            fields_spec = a[2:] if len(a) > 2 else (args[i + 1] if i + 1 < len(args) else None)
            i += 0 if len(a) > 2 else 1
        else:
            files.append(a)
        i += 1
    if not fields_spec:
        fds[2].write("cut: you must specify a list of bytes, characters, or fields\n")
        return 1
    wanted: list[tuple[int, int]] = []
    for piece in fields_spec.split(","):
        lo, dash, hi = piece.partition("-")
        wanted.append((int(lo or 1), int(hi) if hi else (10**9 if dash else int(lo))))
    texts, status = _read_inputs(sh, "cut", files, stdin, fds)
    for text in texts:
        for line in text.splitlines():
            if delim not in line:
                fds[1].write(line + "\n")
                continue
            cols = line.split(delim)
            fds[1].write(delim.join(c for n, c in enumerate(cols, 1) if any(lo <= n <= hi for lo, hi in wanted)) + "\n")
    return status


def _b_tr(sh: _Shell, argv: list[str], stdin: str, fds: _Fds) -> int:
    args = [a for a in argv[1:] if not a.startswith("-")]
    delete = "-d" in argv[1:]
    if delete and args:
        fds[1].write("".join(c for c in stdin if c not in _tr_set(args[0])))
        return 0
    if len(args) < 2:
        fds[2].write("tr: missing operand\n")
        return 1
    a, b = _tr_set(args[0]), _tr_set(args[1])
    b = b + b[-1:] * (len(a) - len(b)) if b else b
    fds[1].write(stdin.translate(str.maketrans(a, b[:len(a)])))
    return 0


def _tr_set(spec: str) -> str:
    named = {"[:upper:]": "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "[:lower:]": "abcdefghijklmnopqrstuvwxyz",
             "[:space:]": " \t\n\r\f\v", "[:digit:]": "0123456789"}
    if spec in named:
        return named[spec]
    spec, _ = _echo_escapes(spec)
    out = []
    i = 0
    while i < len(spec):
        if i + 2 < len(spec) and spec[i + 1] == "-":
            out.extend(chr(c) for c in range(ord(spec[i]), ord(spec[i + 2]) + 1))
            i += 3
        else:
            out.append(spec[i])
            i += 1
    return "".join(out)


def _b_xargs(sh: _Shell, argv: list[str], stdin: str, fds: _Fds) -> int:
    cmd = argv[1:] or ["echo"]
    return sh.call([*cmd, *stdin.split()], "", fds)


SPECIAL_BUILTINS: dict[str, Builtin] = {
    "true": _b_true, ":": _b_true, "false": _b_false, "exit": _b_exit, "echo": _b_echo, "printf": _b_printf,
    "export": _b_export, "unset": _b_unset, "set": _b_set, "cd": _b_cd, "pwd": _b_pwd,
    "command": _b_command, "type": _b_type, "test": _b_test, "[": _b_test, "wait": _b_wait,
}
UTILITIES: dict[str, Builtin] = {
    "cat": _b_cat, "ls": _b_ls, "grep": _b_grep, "egrep": lambda sh, a, s, f: _b_grep(sh, ["grep", "-E", *a[1:]], s, f),
    "head": _b_head, "tail": _b_tail, "wc": _b_wc, "sort": _b_sort, "uniq": _b_uniq, "cut": _b_cut,
    "tr": _b_tr, "tee": _b_tee, "xargs": _b_xargs, "sleep": _b_sleep, "which": _b_which,
}


# ---------------------------------------------------------------------------- entry point


def run(
    line: str,
    ctx: Ctx,
    programs: dict[str, Program],
    *,
    write_file: FileWriter | None = None,
    esxi: bool | None = None,
    unreadable: dict[str, str] | None = None,
    reload_files: Callable[[], dict[str, str]] | None = None,
) -> Reply:
    """Run one command line on a simulated target.

    `programs` maps a full path (``/opt/mellanox/bin/mst``) or a bare name (``esxcli``) to a
    program; `ctx.files` is the target's virtual files (read by cat/ls/grep/test, written by
    ``>``/``>>``/tee: a write goes to `write_file` when given, which may refuse it with the error
    text the shell prints; `reload_files` then gives the files as the target shows them after the
    write). `unreadable` maps paths that exist but cannot be read to the reason (`Permission
    denied`). `esxi` selects busybox
    conventions (PATH /bin:/sbin, `command -v` printing /bin/NAME); by default it is guessed from
    whether the world knows the target as an ESXi host.
    """
    if esxi is None:
        esxi = ctx.target in getattr(ctx.world, "hosts", {})
    shell = _Shell(ctx, programs, write_file, esxi, unreadable, reload_files)
    out, err = _Buffer(), _Buffer()
    try:
        tree = parse(line)
    except ShellSyntaxError as exc:
        return Reply(stdout="", stderr=f"sh: {exc}\n", exit=2)
    for phase in ("line", "jobs"):  # then the jobs the line left running (their output still reaches the client)
        status = shell.status
        try:
            if phase == "line":
                shell.exec(tree, ctx.stdin, {0: _Null(), 1: out, 2: err})
            else:
                shell.run_jobs()
        except _Exit as e:
            shell.status = e.code
        except _Halt:
            break
        except ShellSyntaxError as exc:
            err.write(f"sh: {exc}\n")
            shell.status = 2
        except RecursionError:
            err.write("sh: nesting too deep\n")
            shell.status = 2
        if phase == "jobs":
            shell.status = status  # the line's exit status is its own, not its jobs'
    reply = Reply(stdout=out.text(), stderr=err.text(), exit=shell.status, action=shell.action)
    if shell.delay_s:
        try:
            reply.delay_s = shell.delay_s  # type: ignore[attr-defined]
        except AttributeError:  # a slotted Reply: no delay then
            pass
    return reply
