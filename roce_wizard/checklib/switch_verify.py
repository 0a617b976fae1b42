"""The read-back after a switch change: what the switch, asked again, still gets wrong.

A `switch-config` step names what to read back (`verify`: field, ports, expected values). The switch transport
does not parse: whoever builds it (session.live_transports, a test) GIVES it `read_back`, which for one verify
entry returns the show command to send and a function of that command's output -> the problems left ([]: the
change is verified). Parsing and judging stay here, on the check side: the probe's own parser, the switch
checks' port view (checklib.switch).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from roce_wizard.checklib.switch import ALL_PORTS, FIELD_KINDS, UNLISTED_PORTS, dscp_priority, probe_names, select
from roce_wizard.model import Facts

__all__ = ["read_back", "verify_kind", "verify_problems"]


def read_back(target: Any, vendor: str, entry: dict[str, Any]) -> tuple[str, Callable[[str], list[str]]] | None:
    """For one `verify` entry of a step on `target`: (the show command that reads it back, output -> what is
    still wrong); None when this vendor has no way to read the field back."""
    from roce_wizard.probes import PROBES

    fld = entry["field"]
    kind = verify_kind(vendor, fld)
    if kind is None:
        return None
    show = PROBES[kind].command(target, {})
    if show is None:
        return None
    ports, expect = list(entry["ports"]), dict(entry["expect"])
    return show, lambda output: verify_problems(target, fld, ports, expect, kind, output)


def verify_kind(vendor: str, fld: str) -> str | None:
    """The probe kind a verify reads `fld` from on this vendor (the first one doctor probes)."""
    names = probe_names()
    return next((k for k in FIELD_KINDS[fld].get(vendor, ()) if k in names), None)


def verify_problems(target: Any, fld: str, ports: list[str], expect: dict[str, Any], kind: str,
                    output: str) -> list[str]:
    """What the switch, read back (`output` of the `kind` probe), still gets wrong on `ports`."""
    from roce_wizard.parsers import PARSERS, ParseError
    from roce_wizard.parsers.base import parser_bug
    from roce_wizard.probes import PROBES

    named = [{"port": p} for p in ports if p not in (ALL_PORTS, UNLISTED_PORTS)]
    # no port named (a switch-wide setting): judge whatever the output shows, as `analyze` does
    parse = PARSERS[PROBES[kind].parser].parse
    try:
        parsed = parse(output)
    except Exception as exc:  # ParseError or a parser's own bug: not read back, so the change is not verified
        return [f"{fld}: cannot read it back (`{kind}`: {exc if isinstance(exc, ParseError) else parser_bug(exc, parse)})"]
    facts = Facts(data={kind: parsed, "roce_ports": named}, target=target if named else None)
    sel = select(facts, fld)
    if sel.why_none:
        return [f"{fld}: cannot read it back ({sel.why_none})"]
    problems = []
    for item in sel.items:
        entry = item.entry
        if entry is None:
            problems.append(f"{item.subject}: not in `{kind}`")
            continue
        for key, want in expect.items():
            if key == "mtu_min":
                ok = isinstance(entry.get("mtu"), int) and entry["mtu"] >= want
                have = entry.get("mtu")
            elif key == "ecn_queue":
                have = entry.get("ecn_queues")
                ok = want in (have or [])
            elif key == "no_drop":
                have = sorted(entry.get("no_drop") or [])
                ok = have == sorted(want)
            elif key == "dscp_priority":  # [dscp, priority]: the switch's DSCP map as RW507 reads it
                have, _how = dscp_priority(facts, sel.vendor, kind, int(want[0]), item)
                ok = have == int(want[1])
            else:
                have = entry.get(key)
                ok = have == want
            if not ok:
                problems.append(f"{item.subject}: {key} is {have}, wanted {want}")
    return problems
