"""The contract between the lab's shell (lab/shell/) and the simulated tools (lab/esxi/, lab/guest/).

A simulated program is a function ``(ctx, argv) -> Reply``. The shell parses the command line a
client sent (sequences, pipes, `for`, `if`, `$(...)`, redirections), expands words, and calls the
program registered under ``argv[0]`` (full path or bare name, as the target's PATH resolves it).
A program that is not installed on that target right now is simply absent from the table the
target's ``programs()`` returns, so the shell answers the way a real one does
(``sh: mst: not found``, exit 127) and ``command -v`` finds nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from roce_wizard.lab.world import World


@dataclass
class Reply:
    stdout: str = ""
    stderr: str = ""
    exit: int = 0
    # side effects the server carries out after answering: "reboot" (drop the connection, the
    # target is down for world.reboot_delay_s, then comes back rebooted)
    action: str | None = None


@dataclass
class Ctx:
    world: World
    target: str  # the host or guest name
    stdin: str = ""
    env: dict[str, str] = field(default_factory=dict)
    # virtual files the target shows (/proc/..., /sys/..., /etc/...): path -> content; `cat`, `>`
    # and `ls` in the shell read and write these
    files: dict[str, str] = field(default_factory=dict)


Program = Callable[[Ctx, list[str]], Reply]


def usage(program: str, message: str, code: int = 1) -> Reply:
    """A bad-arguments answer the way most tools print it."""
    return Reply(stderr=f"{program}: {message}\n", exit=code)
