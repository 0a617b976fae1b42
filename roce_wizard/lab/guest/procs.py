"""Process control in the simulated guest: timeout, nohup, pgrep, pkill, rm."""

from __future__ import annotations

import re
import time
from typing import Any

from roce_wizard.lab.guest.state import WIRED, _err, _gs, _guest, _lab
from roce_wizard.lab.proto import Ctx, Reply
from roce_wizard.lab.world import Guest, World


def _reap_servers(world: World) -> None:
    """perftest servers started under `timeout N` are gone N seconds later (timeout killed them)."""
    lab, now = _lab(world), time.monotonic()
    for key, server in list(lab["perftest"].items()):
        if server.get("expires") is not None and server["expires"] <= now:
            _drop_server(world, key)


def _drop_server(world: World, key: tuple[str, int]) -> None:
    lab = _lab(world)
    server = lab["perftest"].pop(key, None)
    if server is not None and lab["waves"].get(server["wave"], 0) > 0:
        lab["waves"][server["wave"]] -= 1


def _processes(world: World, guest: Guest) -> list[tuple[tuple[str, int], dict[str, Any]]]:
    """The long-running processes the lab models on a guest: perftest servers waiting for a client."""
    _reap_servers(world)
    return [(k, v) for k, v in _lab(world)["perftest"].items() if k[0] == guest.name]


def _inner(ctx: Ctx, argv: list[str], name: str) -> Reply:
    """Run the command a wrapper (timeout, nohup) was given, as the shell would have."""
    table = WIRED.programs(ctx.world, ctx.target)
    prog = table.get(argv[0]) or table.get(argv[0].rsplit("/", 1)[-1])
    if prog is None:
        return _err(f"{name}: failed to run command '{argv[0]}': No such file or directory", 127)
    return prog(ctx, argv)


def _duration_s(text: str) -> float | None:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([smhd]?)", text)
    if not m:
        return None
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]


def prog_timeout(ctx: Ctx, argv: list[str]) -> Reply:
    """coreutils `timeout [-s SIG] [-k DUR] DURATION COMMAND...`: what it starts dies DURATION later."""
    args = argv[1:]
    while args and args[0].startswith("-") and args[0] != "--":
        args = args[2:] if args[0] in ("-s", "--signal", "-k", "--kill-after") else args[1:]
    if args and args[0] == "--":
        args = args[1:]
    limit = _duration_s(args[0]) if args else None
    if limit is None or len(args) < 2:
        return _err("timeout: invalid time interval" + (f" '{args[0]}'" if args else "") +
                    "\nTry 'timeout --help' for more information.", 125)
    guest = _guest(ctx.world, ctx.target)
    before = {k for k, _ in _processes(ctx.world, guest)}
    reply = _inner(ctx, args[1:], "timeout")
    for key, server in _processes(ctx.world, guest):
        if key not in before:
            server["expires"] = time.monotonic() + limit
    return reply


def prog_nohup(ctx: Ctx, argv: list[str]) -> Reply:
    if len(argv) < 2:
        return _err("nohup: missing operand\nTry 'nohup --help' for more information.", 125)
    return _inner(ctx, argv[1:], "nohup")


def _match_processes(ctx: Ctx, argv: list[str], name: str) -> tuple[list[tuple[tuple[str, int], dict]], bool] | Reply:
    full, listing, pattern = False, False, None
    for a in argv[1:]:
        if a == "--full":
            full = True
        elif a == "--list-full":
            listing = True
        elif a.startswith("-") and pattern is None and len(a) > 1:
            if a[1:].isdigit() or a[1:].isupper() or a == "--":
                continue  # a signal (-9, -TERM) or the end of options
            if set(a[1:]) - set("fal"):
                return _err(f"{name}: invalid option -- '{sorted(set(a[1:]) - set('fal'))[0]}'", 2)
            full = full or "f" in a
            listing = listing or "a" in a or "l" in a
        elif pattern is None:
            pattern = a
    if pattern is None:
        return _err(f"{name}: no matching criteria specified\nTry `{name} --help' for more information.", 2)
    try:
        rx = re.compile(pattern)
    except re.error:
        return _err(f"{name}: invalid regular expression", 2)
    guest = _guest(ctx.world, ctx.target)
    found = [(k, v) for k, v in _processes(ctx.world, guest)
             if rx.search(" ".join(v["argv"]) if full else v["argv"][0][:15])]
    return found, listing


def prog_pgrep(ctx: Ctx, argv: list[str]) -> Reply:
    """procps `pgrep [-f] [-a] PATTERN` over the processes the lab models (perftest servers)."""
    got = _match_processes(ctx, argv, "pgrep")
    if isinstance(got, Reply):
        return got
    found, listing = got
    lines = [f"{v['pid']} {' '.join(v['argv'])}" if listing else str(v["pid"]) for _, v in found]
    return Reply(stdout="".join(f"{ln}\n" for ln in lines), exit=0 if found else 1)


def prog_pkill(ctx: Ctx, argv: list[str]) -> Reply:
    """procps `pkill [-SIGNAL] [-f] PATTERN`: silent, exit 1 when nothing matched."""
    got = _match_processes(ctx, argv, "pkill")
    if isinstance(got, Reply):
        return got
    found, _ = got
    for key, _v in found:
        _drop_server(ctx.world, key)
    return Reply(exit=0 if found else 1)


def prog_rm(ctx: Ctx, argv: list[str]) -> Reply:
    """`rm [-f] FILE...` for the files the lab keeps (under /etc, /tmp, /root)."""
    st = _gs(ctx.world, _guest(ctx.world, ctx.target))
    force = any(a.startswith("-") and "f" in a for a in argv[1:])
    errors = []
    for path in (a for a in argv[1:] if not a.startswith("-")):
        if st["etc"].pop(path, None) is None and not force:
            errors.append(f"rm: cannot remove '{path}': No such file or directory")
    return Reply(stderr="".join(e + "\n" for e in errors), exit=1 if errors else 0)
