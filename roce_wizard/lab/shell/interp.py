"""The lab shell's interpreter: expansion, redirections, pipelines, compound commands, programs."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable

from roce_wizard.lab.proto import Ctx, Program, Reply
from roce_wizard.lab.shell.builtins import SPECIAL_BUILTINS, UTILITIES
from roce_wizard.lab.shell.streams import Builtin, _Buffer, _Exit, _Fds, _FileSink, _Halt, _Null, _Sink
from roce_wizard.lab.shell.syntax import (
    ESXI_PATH,
    LINUX_PATH,
    MAX_LOOP,
    AndOr,
    Arith,
    Background,
    FileWriter,
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
    Sub,
    Var,
    While,
    Word,
)


class _Shell:
    def __init__(self, ctx: Ctx, programs: dict[str, Program], write_file: FileWriter | None, esxi: bool,
                 unreadable: dict[str, str] | None = None, reload_files: Callable[[], dict[str, str]] | None = None):
        self.ctx = ctx
        self.programs = programs
        self.files = ctx.files
        self._write_file = write_file
        self._reload_files = reload_files
        self.unreadable = {} if unreadable is None else unreadable  # `or` would load a lazy one
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
