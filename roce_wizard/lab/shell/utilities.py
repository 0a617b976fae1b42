"""Text utilities the lab shell has built in (cat, tee, ls, grep, head, tail, wc, sort, uniq, cut, tr, xargs)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from roce_wizard.lab.shell.streams import _Fds

if TYPE_CHECKING:
    from roce_wizard.lab.shell.interp import _Shell


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
