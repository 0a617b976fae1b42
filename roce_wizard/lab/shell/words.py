"""The lab shell's words: quoting, `$…` expansions, backquotes (the word half of shell/parser.py's _Parser)."""

from __future__ import annotations

import re

from roce_wizard.lab.shell.syntax import _META, Arith, Lit, ShellSyntaxError, Sub, Var, Word


class _Words:
    """A mixin of _Parser: `s` the source, `i` the cursor; nested text is parsed by a parser of the same class."""

    s: str
    i: int

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
            elif c in "$`":
                self._expansion(False, parts, buf)
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
            elif c in "$`":
                self._expansion(True, parts, buf)
            else:
                buf.append(c)
                self.i += 1
        flush()
        return parts

    def _expansion(self, quoted: bool, parts: list[Lit | Var | Sub | Arith], buf: list[str]) -> None:
        """`$…` or a backquote at the cursor: its part goes after the literal text so far (quoted as the
        expansion is); a `$` that starts nothing stays literal text."""
        part = self.dollar(quoted) if self.peek() == "$" else self.backquote(quoted)
        if part is None:
            buf.append("$")
            return
        if buf:
            parts.append(Lit("".join(buf), quoted))
            buf.clear()
        parts.append(part)

    def dollar(self, quoted: bool) -> Var | Sub | Arith | None:
        s, i = self.s, self.i
        if s.startswith("$((", i):
            self.i += 3
            start = self.i
            depth = 0
            while not self.eof():
                if self.s.startswith("))", self.i) and depth == 0:
                    inner = type(self)(self.s[start:self.i])
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
            arg = type(self)(m.group(3)).raw_word() if m.group(2) else None
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
        body = type(self)(self.s[self.i + 1:end].replace("\\`", "`")).parse()
        self.i = end + 1
        return Sub(body, quoted)

    def raw_word(self) -> Word:
        """The whole remaining text as one word with expansions (for ${x:-…} and $((…)))."""
        parts: list[Lit | Var | Sub | Arith] = [Lit("", True)]
        buf: list[str] = []
        while not self.eof():
            c = self.peek()
            if c == "$":
                self._expansion(True, parts, buf)
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
