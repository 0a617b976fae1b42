"""Which machine a pasted file is from, and which files `analyze` may judge together.

A directory's files are one machine's outputs only as far as nothing says otherwise. A shell prompt
pasted with the command (`[root@esx-01:~] esxcli …`, `[root@node1 ~]# …`, `user@node1:~$ …`) or a host
name in the file name (`esx-01_vibs.txt`, a name another file's prompt uses) says otherwise: files naming
different hosts are never joined. A file that names none joins the files of the one host the group names;
with two or more hosts in the group it is judged on its own (joining it to either would be a guess).

Two files of one kind for one machine are never merged either: each is judged with the others
(every combination of them, up to COMBINATIONS), and its findings name the files they read.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

COMBINATIONS = 32  # a check's file combinations judged per group, at most

_HOSTNAME = r"[A-Za-z0-9][A-Za-z0-9._-]*"
_PROMPTS = (
    re.compile(rf"^\[\w[\w.-]*@(?P<host>{_HOSTNAME}):[^\]]*\]\s*[#$]?"),  # ESXi: [root@esx-01:~]
    re.compile(rf"^\[\w[\w.-]*@(?P<host>{_HOSTNAME})\s[^\]]*\][#$]"),  # RHEL: [root@node1 ~]#
    re.compile(rf"^\w[\w.-]*@(?P<host>{_HOSTNAME}):[^\s]*\s?[#$]\s"),  # Debian: root@node1:~#
)
# a file name's leading token that reads as a host: letters, a dash, a number (esx-01, gpu-node-12), with more
# name after it (esx-01_vibs.txt); a name that is only such a token (mlxconfig-2.txt) is a numbered copy, no host
_NAME_HOST = re.compile(r"^(?P<host>[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*-\d+[a-z]?)(?:[_ ]|--|\.(?=[^.]+\.))\w")


class Judged(Protocol):
    path: str
    kind: str
    facts: dict[str, Any] | None
    host: str | None


def prompt_host(text: str) -> str | None:
    """The host a shell prompt at the top of the text names (the first non-blank lines only)."""
    for line in [ln for ln in text.splitlines() if ln.strip()][:3]:
        line = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", line).lstrip("\ufeff").strip()
        for prompt in _PROMPTS:
            m = prompt.match(line)
            if m:
                return m.group("host").rstrip(".")
    return None


def name_host(name: str, known: set[str]) -> str | None:
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    for host in sorted(known, key=len, reverse=True):  # a host a prompt named, anywhere in the name
        if re.search(rf"(?<![A-Za-z0-9]){re.escape(host)}(?![A-Za-z0-9])", base):
            return host
    m = _NAME_HOST.match(base)
    return m.group("host") if m else None


def by_host(members: Sequence[Judged]) -> list[list[Judged]]:
    """The group split into units that may be judged together."""
    known = {m.host for m in members if m.host}
    for m in members:
        if not m.host:
            m.host = name_host(m.path, known)
    hosts = sorted({m.host for m in members if m.host})
    if len(hosts) <= 1:
        return [list(members)] if members else []
    units = [[m for m in members if m.host == h] for h in hosts]
    units += [[m] for m in members if not m.host]
    return units


def combinations(picks: dict[str, list[Any]], used: Sequence[str]) -> Iterator[tuple[Any, ...]]:
    """Every way to pick one reading per kind the check reads (one when no kind is doubled), bounded."""
    return itertools.islice(itertools.product(*(picks[k] for k in used)), COMBINATIONS)
