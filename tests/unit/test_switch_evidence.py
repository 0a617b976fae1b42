"""The switch checks' lookups per port (issue 16: doctor was quadratic in a switch's ports).

- evidence (checklib.switch_evidence): each output is indexed once, and a port's lines come from the index
  instead of a regex scan of the whole output per port and check. The lines must be exactly those of the scan:
  `_scan` below is the scan as the checks ran it before, and every switch output in tests/data (parser seeds,
  corpus, variants: every vendor) plus the lab's recorded switch outputs is compared, for every port name it
  prints and every pattern set of RW501–RW507.
- the port view's match of a RoCE port to a printed name (checklib.switch.select): a dict lookup instead of a
  scan of every printed name per port; the same name as the scan, on the same outputs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from roce_wizard.checklib.switch import ALL_PORTS, READERS, UNLISTED_PORTS, Item, _matches, _PrintedPorts
from roce_wizard.checklib.switch_evidence import evidence_lines
from roce_wizard.parsers.switch import PARSERS as SWITCH_PARSERS
from roce_wizard.parsers.switch import port_key

DATA = Path(__file__).resolve().parents[1] / "data"
# the pattern sets the switch checks pass (RW506's queue and RW507's DSCP filled in as the checks do)
PATTERNS: list[tuple[str, ...]] = [
    (r"Global PFC", r"^PFC:", r"dcb priority-flow-control enable", r"^\s*mode\s", r"pfc-priority"),
    (r"Priority Enabled List", r"pfc-cos", r"pfc-priority", r"dcb priority-flow-control priority"),
    (r"Trust Mode", r"qos trust", r"trust-map", r"trust-mode"),
    (r"\bMTU\b", r"^\s*mtu\b"),
    (r"flowcontrol (receive|send|transmit)",),
    (r"ECN", r"random-detect", r"congestion-control", r"enabled-tc", r"^\s+3\s"),
    (r"^\s*2\s*:", r"dscp-to-switch-priority.*\b26\b", r"trust-map", r"qos-group \d+ dscp", r"\b26\b.*switch-prio",
     r"qos map dscp"),
    (),
]


def _scan(raw: str | None, item: Item, *patterns: str, limit: int = 6) -> str | None:
    """The lookup as it was: every line of the output against the port's pattern and each of `patterns`."""
    if not raw:
        return None
    regexes = [re.compile(p, re.IGNORECASE) for p in patterns]
    name = item.printed_as if item.printed_as not in (None, ALL_PORTS, UNLISTED_PORTS) else None
    port_re = re.compile(rf"(^|\s|\"){re.escape(name)}(\s|:|\"|$)") if name else None
    hits = [ln.rstrip() for ln in raw.splitlines()
            if (port_re is not None and port_re.search(ln)) or any(r.search(ln) for r in regexes)]
    return "\n".join(hits[:limit]) or None


def _outputs() -> list[tuple[str, str | None, str]]:
    """(name, kind when known, text) of every switch output the project keeps, and the lab's."""
    out: list[tuple[str, str | None, str]] = []
    for kind in sorted(SWITCH_PARSERS):
        for path in sorted((DATA / "parser_seeds" / kind).glob("*.txt")):
            out.append((f"parser_seeds/{kind}/{path.name}", kind, path.read_text(encoding="utf-8")))
    for folder in ("cumulus_nv_show_qos_roce", "onyx_show_dcb_pfc", "onyx_show_interfaces", "sonic_show_pfc"):
        for path in sorted((DATA / "corpus" / folder).glob("*.txt")):
            out.append((f"corpus/{folder}/{path.name}", None, path.read_text(encoding="utf-8")))
    for path in sorted((DATA / "variants" / "switch").glob("*.txt")):
        out.append((f"variants/switch/{path.name}", None, path.read_text(encoding="utf-8")))
    from tests.unit.checks.test_switch_checks import recorded

    for vendor in ("eos", "onyx", "os10"):  # the lab's switches (its NVUE switch has no scenario of its own)
        out += [(f"lab/{vendor}/{kind}", kind, text) for kind, text in recorded(vendor).items()]
    return out


def _names(kind: str | None, text: str) -> set[str | None]:
    """Every port name the checks can look up in this output: what the port view makes of it (when its kind is
    known), every word a port name parses from, the switch-wide subjects, and names the text does not hold."""
    names: set[str | None] = {None, ALL_PORTS, UNLISTED_PORTS, "Ethernet999", "ethernet 1/1", "Eth1/1 "}
    if kind is not None:
        try:
            parsed = SWITCH_PARSERS[kind].parse(text)
        except Exception:  # noqa: BLE001 - a seed a parser refuses still has words to look up
            parsed = None
        if parsed is not None:
            for reader in READERS.values():
                names.update(reader(kind, parsed)[0])
    for word in set(re.split(r'[\s"]+', text)):
        for candidate in (word, word.rstrip(":,")):
            if candidate and port_key(candidate) is not None:
                names.add(candidate)
    return names


OUTPUTS = _outputs()


def test_the_outputs_cover_every_vendor_and_many_ports():
    kinds = {kind.split("_")[0] for _, kind, _ in OUTPUTS if kind}
    assert {"arista", "eos", "onyx", "os10", "nvue", "sonic"} <= kinds
    assert sum(len(_names(kind, text)) for _, kind, text in OUTPUTS) > 1000


@pytest.mark.parametrize(("name", "kind", "text"), OUTPUTS, ids=[o[0] for o in OUTPUTS])
def test_the_indexed_lookup_returns_what_the_scan_returned(name, kind, text):
    for port in sorted(_names(kind, text), key=str):
        item = Item(port or "-", {}, printed_as=port)
        for patterns in PATTERNS:
            for limit in (6, 1, 10_000):
                want = _scan(text, item, *patterns, limit=limit)
                got = evidence_lines(text, item, *patterns, limit=limit)
                assert got == want, f"{name}: port {port!r}, patterns {patterns}, limit {limit}"


def test_an_empty_output_has_no_evidence():
    assert evidence_lines("", Item("Ethernet1", {}, printed_as="Ethernet1"), r"mtu") is None
    assert evidence_lines(None, Item("Ethernet1", {}, printed_as="Ethernet1"), r"mtu") is None


def _printed(kind: str | None, text: str) -> list[list[str]]:
    """The printed names each reader makes of an output, in its order (what `select` matches ports against)."""
    if kind is None:
        return []
    try:
        parsed = SWITCH_PARSERS[kind].parse(text)
    except Exception:  # noqa: BLE001
        return []
    return [list(reader(kind, parsed)[0]) for reader in READERS.values()]


RANGES = ["Ethernet1/1-3/4", "Eth1/1-1/4", "ethernet1/1/1-1/1/4", "Ethernet2-4", "swp1-4", "Ethernet1/1-2",
          "1/1-1/4", "Po1-2", "Ethernet-BP0", "junk-name"]


@pytest.mark.parametrize(("name", "kind", "text"), OUTPUTS, ids=[o[0] for o in OUTPUTS])
def test_a_roce_port_matches_the_printed_name_the_scan_matched(name, kind, text):
    for printed in _printed(kind, text):
        # as printed, and with range names before, among and after the ports (the first match wins)
        for names in (printed, RANGES + printed, printed[:2] + RANGES + printed[2:], printed + RANGES):
            index = _PrintedPorts(names)
            for port in sorted(_names(kind, text) - {None}, key=str) + ["Ethernet1/2", "Eth1/3", "eth1/1/2", "swp3"]:
                key = port_key(port)
                want = next((n for n in names if n not in (ALL_PORTS, UNLISTED_PORTS) and _matches(key, n)), None)
                assert index.first(key) == want, f"{name}: {port!r} in {names}"
