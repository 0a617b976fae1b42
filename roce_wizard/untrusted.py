"""Reading files a user hands to `analyze`: bounded, regular files only, archives checked before extraction.

A pasted output, a support bundle or a sysinfo-snapshot archive may come from anywhere. So:
- only regular files are read (a FIFO or a device would block or never end): the file is opened
  non-blocking and checked with fstat before one byte is read, and read with a byte bound;
- an archive is read twice: first every header (names, types, sizes, count) is checked and nothing
  is written; then regular files and directories only are written into the temporary directory,
  each through `tarfile.data_filter` and our own checks, counting the bytes actually written (a
  header that lies is caught by the count, not trusted).
Every refusal is an `InputError` naming the file and the member; the CLI turns it into exit 2.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import stat
import tarfile
import zlib
from pathlib import Path, PurePosixPath
from typing import IO

MAX_FILE_BYTES = 8 * 1024 * 1024  # a pasted output larger than this is not a tool output we read
MAX_ARCHIVE_BYTES = 256 * 1024 * 1024  # the archive file itself, compressed
MAX_TOTAL_BYTES = 256 * 1024 * 1024  # everything an archive expands to (a 100-host bundle: tens of MiB)
MAX_MEMBERS = 20_000  # a bundle of a 100-host run holds a few thousand files
_CHUNK = 1024 * 1024
# what a corrupt, truncated or non-archive file raises while tarfile reads it
_READ_ERRORS = (tarfile.TarError, EOFError, zlib.error, lzma.LZMAError, OSError, ValueError)
# the decompressed stream may be read this far: the files, their headers (a PAX or GNU long-name header is
# data tarfile reads whole, so a header claiming gigabytes is stopped here, before the read), the end blocks
_MAX_STREAM_BYTES = MAX_TOTAL_BYTES + 64 * 1024 * 1024


class InputError(Exception):
    """A file `analyze` refuses to read; the message names the file (and the archive member)."""


class TooLarge(InputError):
    """A file larger than the byte bound; reading stopped at the bound."""


def _mib(n: int) -> str:
    return f"{n // (1024 * 1024)} MiB"


def _kind_of(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def check_argument(path: Path) -> None:
    """A directory or a regular file; anything else (FIFO, device, socket) is refused before it is opened."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
        raise InputError(f"{path}: is {_kind_of(mode)}, not a file: refused (only regular files and directories "
                         "are read; save the output to a file first)")


def open_regular(path: Path) -> int:
    """A read-only descriptor on a regular file. Non-blocking open + fstat: a FIFO swapped in after a
    stat() is refused here too, never waited on."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise InputError(f"{path}: is {_kind_of(mode)}, not a file: refused")
    return fd


def read_bounded(path: Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """The file's bytes, at most `limit`; `TooLarge` when there are more (the size on disk is not trusted:
    /proc files say 0, a growing file says less than it will be)."""
    fd = open_regular(path)
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(f"{path}: larger than {_mib(limit)}: reading stopped there (not a tool output roce-wizard "
                       "reads)")
    return data


def extract_archive(path: Path, dest: Path) -> None:
    """Check every header of the archive, then write its regular files and directories under `dest` only."""
    fd = open_regular(path)
    with os.fdopen(fd, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > MAX_ARCHIVE_BYTES:
            raise InputError(f"{path}: the archive is {_mib(size)}, over the {_mib(MAX_ARCHIVE_BYTES)} roce-wizard "
                             "reads: refused")
        try:
            tar = tarfile.open(fileobj=_Bounded(path, _decompressed(path, fh)), mode="r:")
        except InputError:
            raise
        except _READ_ERRORS as exc:
            raise InputError(f"{path}: not a readable .tar.gz archive: "
                             f"{_reason(exc)}") from None
        with tar:
            members = _checked_headers(path, tar, dest)
            dest.mkdir(mode=0o700, parents=True, exist_ok=False)
            written = 0
            for member in members:
                written += _write_member(path, tar, member, dest, MAX_TOTAL_BYTES - written)


def _decompressed(path: Path, fh: IO[bytes]) -> IO[bytes]:
    magic = fh.read(6)
    fh.seek(0)
    if magic.startswith(b"\x1f\x8b"):
        return gzip.GzipFile(fileobj=fh, mode="rb")
    if magic.startswith(b"BZh"):
        return bz2.BZ2File(fh)
    if magic.startswith(b"\xfd7zXZ\x00"):
        return lzma.LZMAFile(fh)
    fh.seek(257)
    ustar = fh.read(5)
    fh.seek(0)
    if ustar != b"ustar":
        raise InputError(f"{path}: not an archive: neither gzip, bzip2 nor xz compressed, "
                         "and no tar header")
    return fh


class _Bounded:
    """The decompressed stream, never read past _MAX_STREAM_BYTES: a read that would go further is
    refused before it is made (a gzip bomb, or a header claiming gigabytes, costs nothing)."""

    def __init__(self, path: Path, inner: IO[bytes]) -> None:
        self.path, self.inner = path, inner

    def read(self, size: int = -1) -> bytes:
        pos = self.inner.tell()
        if size is None or size < 0:
            size = _MAX_STREAM_BYTES - pos + 1
        if pos + size > _MAX_STREAM_BYTES:
            raise InputError(f"{self.path}: expands to more than {_mib(MAX_TOTAL_BYTES)}: refused before extraction")
        return self.inner.read(size)

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.inner.seek(offset, whence)

    def tell(self) -> int:
        return self.inner.tell()


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0][:200]


def _checked_headers(path: Path, tar: tarfile.TarFile, dest: Path) -> list[tarfile.TarInfo]:
    """Every header read and judged before anything is written: the members to write (files and dirs)."""
    keep: list[tarfile.TarInfo] = []
    total = 0
    count = 0
    try:
        for member in tar:
            count += 1
            if count > MAX_MEMBERS:
                raise InputError(f"{path}: more than {MAX_MEMBERS} members: refused before extraction")
            where = f"{path}: member {member.name!r}"
            _check_name(where, member.name)
            if member.issym() or member.islnk():
                _check_link(where, member, tar)
                continue  # links are never written: the files they point at are read as themselves
            if member.isdir():
                keep.append(member)
                continue
            if not member.isreg() or member.issparse():
                what = ("a sparse file" if member.issparse() else "a character device" if member.ischr() else
                        "a block device" if member.isblk() else "a FIFO" if member.isfifo() else
                        f"of type {member.type!r}")
                raise InputError(f"{where} is {what}: refused (an archive roce-wizard reads holds only files "
                                 "and directories)")
            if member.size > MAX_FILE_BYTES:
                raise InputError(f"{where} is {_mib(member.size)} uncompressed, over the {_mib(MAX_FILE_BYTES)} "
                                 "of a tool output: refused before extraction")
            total += member.size
            if total > MAX_TOTAL_BYTES:
                raise InputError(f"{path}: expands to more than {_mib(MAX_TOTAL_BYTES)}: refused before extraction")
            try:
                tarfile.data_filter(member, str(dest))
            except tarfile.FilterError as exc:
                raise InputError(f"{where}: {_reason(exc)}: refused") from None
            keep.append(member)
    except _READ_ERRORS as exc:
        raise InputError(f"{path}: corrupt or truncated archive (after {count} members): {_reason(exc)}") from None
    return keep


def _check_name(where: str, name: str) -> None:
    parts = PurePosixPath(name).parts
    if name.startswith("/"):
        raise InputError(f"{where} has an absolute path: refused (nothing was extracted)")
    if ".." in parts:
        raise InputError(f"{where} climbs out of the archive ('..'): refused (nothing was extracted)")
    if "\0" in name:
        raise InputError(f"{where} has a binary name: refused")


def _check_link(where: str, member: tarfile.TarInfo, tar: tarfile.TarFile) -> None:
    if member.islnk():
        raise InputError(f"{where} is a hard link (to {member.linkname!r}): refused (an archive roce-wizard reads "
                         "holds only files and directories)")
    target = member.linkname
    if target.startswith("/"):
        raise InputError(f"{where} is a symbolic link to an absolute path ({target!r}): refused")
    resolved = PurePosixPath(member.name).parent
    for part in PurePosixPath(target).parts:
        if part == "..":
            if not resolved.parts:
                raise InputError(f"{where} is a symbolic link leaving the archive ({target!r}): refused")
            resolved = resolved.parent
        elif part != ".":
            resolved = resolved / part


def _write_member(path: Path, tar: tarfile.TarFile, member: tarfile.TarInfo, dest: Path, budget: int) -> int:
    """Write one checked member under dest, counting the bytes actually produced. Returns that count."""
    where = f"{path}: member {member.name!r}"
    out = dest.joinpath(*PurePosixPath(member.name).parts)
    root = os.path.realpath(dest)
    parent = out if member.isdir() else out.parent
    try:
        parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if os.path.commonpath([root, os.path.realpath(parent)]) != root:  # never: no links are written
            raise InputError(f"{where} would be written outside the temporary directory: refused")
        if member.isdir():
            return 0
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        written = 0
        limit = min(MAX_FILE_BYTES, budget, member.size)
        source = tar.extractfile(member)
        if source is None:
            return 0
        with os.fdopen(os.open(out, flags, 0o600), "wb") as sink:
            while chunk := source.read(_CHUNK):
                written += len(chunk)
                if written > limit:  # more bytes than its header said (or than the budget left)
                    raise InputError(f"{where} holds more than the {limit} bytes its header and the limits "
                                     "allow: refused")
                sink.write(chunk)
    except FileExistsError:
        raise InputError(f"{where} appears twice in the archive: refused") from None
    except _READ_ERRORS as exc:
        raise InputError(f"{where}: cannot extract: {_reason(exc)}") from None
    return written
