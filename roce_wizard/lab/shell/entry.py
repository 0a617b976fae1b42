"""The lab shell's entry point: run one command line against a target's programs and files."""

from __future__ import annotations

import functools
from collections.abc import Callable

from roce_wizard.lab.proto import Ctx, Program, Reply
from roce_wizard.lab.shell.interp import _Shell
from roce_wizard.lab.shell.parser import parse
from roce_wizard.lab.shell.streams import _Buffer, _Exit, _Halt, _Null
from roce_wizard.lab.shell.syntax import FileWriter, ShellSyntaxError

# ---------------------------------------------------------------------------- entry point

# A client sends the same few lines to every target (doctor: one probe line per check and target): parse
# each once. The interpreter only reads a tree (tests/unit/test_lab_lazy_files.py holds a cached tree equal
# to a fresh parse after running it); a line that does not parse is not cached (lru_cache keeps no errors).
_parsed = functools.lru_cache(maxsize=4096)(parse)


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
        tree = _parsed(line)
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
