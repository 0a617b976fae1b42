"""Output sinks, file descriptors and the control-flow exceptions of the lab shell."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from roce_wizard.lab.shell.interp import _Shell


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
