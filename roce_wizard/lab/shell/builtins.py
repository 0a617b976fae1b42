"""The lab shell's built-ins (echo, printf, export, cd, command, sleep, wait, test, ...) and the built-in tables."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from roce_wizard.lab.shell.streams import Builtin, _Exit, _Fds
from roce_wizard.lab.shell.syntax import _NAME, SLEEP_CAP_S
from roce_wizard.lab.shell.utilities import (
    _b_cat,
    _b_cut,
    _b_grep,
    _b_head,
    _b_ls,
    _b_sort,
    _b_tail,
    _b_tee,
    _b_tr,
    _b_uniq,
    _b_wc,
    _b_xargs,
    _echo_escapes,
)

if TYPE_CHECKING:
    from roce_wizard.lab.shell.interp import _Shell


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
