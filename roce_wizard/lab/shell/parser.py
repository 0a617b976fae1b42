"""The lab shell's parser: a POSIX sh command line (as ESXi's busybox ash and bash take it) -> syntax tree."""

from __future__ import annotations

import re

from roce_wizard.lab.shell.syntax import (
    _ASSIGN,
    _META,
    _NAME,
    _RESERVED_END,
    AndOr,
    Background,
    For,
    Group,
    If,
    Lit,
    Node,
    Pipeline,
    Redirect,
    Sequence,
    ShellSyntaxError,
    Simple,
    While,
    Word,
)
from roce_wizard.lab.shell.words import _Words


class _Parser(_Words):
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


def parse(line: str) -> Sequence:
    """Parse a command line (raises ShellSyntaxError)."""
    return _Parser(line).parse()
