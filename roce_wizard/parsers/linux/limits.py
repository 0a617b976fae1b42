"""The locked-memory limit RDMA needs (RW414): `ulimit -l`, `ulimit -a`/`-Ha`, `/proc/<pid>/limits`, and
`systemctl show -p LimitMEMLOCK <unit>`.

Kinds:
- ``ulimit_memlock``: bash's `ulimit -l` (a number in KiB, or `unlimited`), the `max locked memory (kbytes,
  -l)` line of `ulimit -a`, or the `Max locked memory  <soft>  <hard>  bytes` row of `/proc/<pid>/limits`
  (bytes; the limit a running slurmd or MPI launcher passes to its ranks). Facts: `source`, `unlimited`,
  `memlock_kib` (ulimit shapes), `memlock_bytes`, `hard` (a `-H` read), `hard_bytes`/`hard_unlimited`
  (/proc only). Real captures in tests/data/corpus/ulimit_memlock/.
- ``systemd_limit_memlock``: `systemctl show` prints properties as `Name=value`; `LimitMEMLOCK=` (and
  `LimitMEMLOCKSoft=`) is the unit's RLIMIT_MEMLOCK in bytes, or `infinity` for no limit (systemd.exec(5),
  "Process Properties": "Use the string infinity to configure no limit on a specific resource", LimitMEMLOCK
  = `ulimit -l`). Facts: `unit`, `limit_bytes`, `unlimited`, `soft_bytes`, `soft_unlimited`.
A value written any other way is unknown (None), never a guess.
"""

from __future__ import annotations

import re

from roce_wizard.parsers.base import Facts, ParseError, is_bare_command, is_prompt, lines, prompt_command
from roce_wizard.parsers.unwrap import per_host

_ULIMIT_A = re.compile(r"^\s*max locked memory\s+\(kbytes,\s*-l\)\s+(\S+)\s*$")
_PROC = re.compile(r"^\s*Max locked memory\s+(\S+)\s+(\S+)\s+bytes\s*$")
_LONE = re.compile(r"^\s*(unlimited|[0-9]+)\s*$")


def _kib(value: str) -> tuple[bool | None, int | None]:
    if value == "unlimited":
        return True, None
    if re.fullmatch(r"[0-9]+", value):
        return False, int(value)
    return None, None


def _ulimit_memlock_one(text: str) -> Facts:
    facts: Facts = {"source": None, "unlimited": None, "memlock_kib": None, "memlock_bytes": None, "hard": None}
    lone: list[str] = []
    said_l = False
    for ln in lines(text):
        cmd = prompt_command(ln)
        if cmd is None and is_bare_command(ln, ("ulimit", "cat")):
            cmd = ln.strip()
        if cmd is not None or (is_prompt(ln) and not _LONE.match(ln)):
            m = re.search(r"\bulimit\s+-(\w+)", cmd or ln)
            if m:
                facts["hard"] = "H" in m.group(1)
                said_l = said_l or "l" in m.group(1)
            continue
        if (m := _ULIMIT_A.match(ln)):
            facts["source"] = "ulimit -a"
            facts["unlimited"], facts["memlock_kib"] = _kib(m.group(1))
        elif (m := _PROC.match(ln)):
            facts["source"] = "/proc/<pid>/limits"
            soft_unl, soft = (True, None) if m.group(1) == "unlimited" else (
                (False, int(m.group(1))) if re.fullmatch(r"[0-9]+", m.group(1)) else (None, None))
            hard_unl, hard = (True, None) if m.group(2) == "unlimited" else (
                (False, int(m.group(2))) if re.fullmatch(r"[0-9]+", m.group(2)) else (None, None))
            facts.update(unlimited=soft_unl, memlock_bytes=soft, hard_unlimited=hard_unl, hard_bytes=hard)
            facts.pop("memlock_kib", None)
            facts["hard"] = None
        elif (m := _LONE.match(ln)) or (said_l and (m := re.match(r"^\s*(\S+)\s*$", ln))):
            lone.append(m.group(1))  # after `ulimit -l` a lone word is its answer, read or not
    if facts["source"] is None:
        if not lone:
            raise ParseError("ulimit_memlock", "no `ulimit -l` value, `max locked memory` or `Max locked memory` line")
        facts["source"] = "ulimit -l"
        if len(set(lone)) == 1:
            facts["unlimited"], facts["memlock_kib"] = _kib(lone[0])
        else:
            facts["values"] = lone  # several reads that differ: which one is the user's is not said
    if facts.get("memlock_kib") is not None:
        facts["memlock_bytes"] = facts["memlock_kib"] * 1024
    return facts


parse_ulimit_memlock = per_host(_ulimit_memlock_one)


def sniff_ulimit_memlock(text: str) -> int:
    ls = lines(text)
    if any(_ULIMIT_A.match(ln) or _PROC.match(ln) for ln in ls):
        return 95
    said = any(re.search(r"\bulimit\s+-\w*l\w*\b", ln) for ln in ls)
    body = [ln for ln in ls if ln.strip() and not re.search(r"\bulimit\b", ln)]
    if said and body and all(_LONE.match(ln) for ln in body):
        return 92
    return 0


# ---------------------------------------------------------------------------------------------
# systemctl show -p LimitMEMLOCK <unit>

_PROP = re.compile(r"^\s*(LimitMEMLOCK|LimitMEMLOCKSoft)=(.*?)\s*$")


def _bytes(value: str) -> tuple[bool | None, int | None]:
    if value == "infinity":
        return True, None
    if re.fullmatch(r"[0-9]+", value):
        return False, int(value)
    return None, None


def _systemd_limit_memlock_one(text: str) -> Facts:
    facts: Facts = {"unit": None, "unlimited": None, "limit_bytes": None}
    seen = False
    for ln in lines(text):
        cmd = prompt_command(ln)
        if cmd is None and is_bare_command(ln, ("systemctl",)):
            cmd = ln.strip()
        if cmd is not None:
            m = re.search(r"\bsystemctl\s+show\s+(.*)$", cmd)
            if m:
                words = re.split(r"\s+", m.group(1).split("|")[0].strip())
                units = [w for i, w in enumerate(words) if w and not w.startswith("-")
                         and not (i and words[i - 1] in ("-p", "--property"))]
                facts["unit"] = units[0] if len(units) == 1 and re.fullmatch(r"[\w@.:-]+", units[0]) else None
            continue
        m = _PROP.match(ln)
        if m:
            seen = True
            unl, val = _bytes(m.group(2))
            if m.group(1) == "LimitMEMLOCK":
                facts["unlimited"], facts["limit_bytes"] = unl, val
            else:
                facts["soft_unlimited"], facts["soft_bytes"] = unl, val
    if not seen:
        raise ParseError("systemd_limit_memlock", "no `LimitMEMLOCK=` line")
    return facts


parse_systemd_limit_memlock = per_host(_systemd_limit_memlock_one)


def sniff_systemd_limit_memlock(text: str) -> int:
    return 95 if any(_PROP.match(ln) for ln in lines(text)) else 0
