"""Property tests: no output, however damaged, makes a parser raise anything but ParseError.

Seeds are the real outputs (and the hand-written fixtures) the parser tests use, copied into
tests/data/parser_seeds/<kind>/ (tests/data/PROVENANCE.md). Each is damaged the way terminals,
pastes and odd hosts damage output (tests/unit/parser_mutations.py). Bounded and derandomized: the
module runs in seconds and the same examples every time.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roce_wizard.parsers import PARSERS, ParseError
from roce_wizard.parsers.base import is_digits, to_int
from roce_wizard.parsers.detect import Detection, detect
from tests.unit.parser_mutations import ODD_DIGITS, SEEDS, mutated, seeds

BOUNDED = settings(max_examples=100, deadline=None, derandomize=True, database=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
KINDS = sorted(PARSERS)


def test_every_parser_has_seeds():
    assert {p.name for p in SEEDS.iterdir() if any(p.glob("*.txt"))} == set(KINDS)


@pytest.mark.parametrize("kind", KINDS)
def test_damaged_output_raises_only_parse_error(kind):
    parser = PARSERS[kind]

    @BOUNDED
    @given(mutated(seeds(kind)))
    def check(text: str) -> None:
        try:
            parser.parse(text)
        except ParseError:
            pass

    check()


@settings(BOUNDED, max_examples=40)
@given(st.one_of(st.sampled_from(KINDS).flatmap(lambda k: mutated(seeds(k))), st.text(max_size=200)))
def test_detect_and_every_sniffer_never_raise(text):
    for parser in PARSERS.values():
        assert isinstance(parser.sniff(text), int | float | bool)
    assert isinstance(detect(text), Detection)


def _numbers(value, path=""):
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, int) and not isinstance(k, bool):
                yield f"{path}/<key>", k
            yield from _numbers(v, f"{path}/{k}")
    elif isinstance(value, list):
        for v in value:
            yield from _numbers(v, f"{path}[]")


# numbers a parser counts itself (not read from the text): they may be 3 whatever the digits
COUNTED = {("openmpi_ucx_log", "/error_lines")}


@pytest.mark.parametrize("odd", ["٣", "３"])
@pytest.mark.parametrize("kind", KINDS)
def test_non_ascii_digits_are_never_read_as_numbers(kind, odd):
    """Every ASCII digit of a real output replaced by '٣' (Arabic-Indic) or '３' (fullwidth): `int()`
    reads both as 3, no tool prints them as a number. Whatever the parser makes of that text, no
    number it reports may come from them (a 3, 33, 3333 …)."""
    for text in seeds(kind):
        try:
            facts = PARSERS[kind].parse(re.sub(r"[0-9]", odd, text))
        except ParseError:
            continue
        read = [(p, v) for p, v in _numbers(facts)
                if (kind, p) not in COUNTED and re.fullmatch(r"-?3+(\.3*)?", str(v))]
        assert not read, f"{kind} read {odd!r} as a number: {read[:5]}"


def test_show_gids_row_with_a_superscript_or_arabic_digit_is_not_read():
    row = "mlx5_0\t1\t{idx}\t0000:0000:0000:0000:0000:ffff:c0a8:640b\t192.168.100.11\tv2\tens1f0np0"
    good = PARSERS["show_gids"].parse("DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n" + row.format(idx="3"))
    assert [g["index"] for g in good["gids"]] == [3]
    for odd in ODD_DIGITS:
        text = "DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n" + row.format(idx=odd)
        try:
            facts = PARSERS["show_gids"].parse(text)
        except ParseError:
            continue
        assert all(g.get("index") != 3 for g in facts.get("gids", [])), odd


@pytest.mark.parametrize("text, value", [("16", 16), ("0x08", 8), (" -2 ", -2), ("٣", None), ("３", None),
                                         ("²", None), ("1_000", None), ("", None), ("0x", None)])
def test_to_int_reads_ascii_numbers_only(text, value):
    assert to_int(text) == value


def test_is_digits_is_ascii_only():
    assert is_digits("0123") and not any(is_digits(d) for d in (*ODD_DIGITS, "", "1a"))


def _damaged(kind: str, old: str, new: str, count: int = 1) -> str:
    text = next(t for t in seeds(kind) if old in t)
    return text.replace(old, new, count)


# the crashes the properties above found, pinned: (kind, real output damaged so)
CRASHES = {
    "ip_json-address-without-prefixlen": ("ip_json", '"prefixlen": 24,', ""),
    "ip_json-addr_info-a-number": ("ip_json", '"addr_info": [', '"addr_info": 1.5, "x": ['),
    "mlxfwmanager-versions-as-a-value": ("mlxfwmanager", "Versions:         Current        Available", "Versions: 1"),
    "flint_query-superscript-guid-count": ("flint_query", "ec0d9a030076eae2        4", "ec0d9a030076eae2        ²"),
    "nvue_qos_roce-superscript-traffic-class": ("nvue_qos_roce", "    3  3            3 ", "    3  3            ² "),
    "sonic_pfc-superscript-watermark": ("sonic_pfc", "8193", "²"),
    "show_gids-superscript-index": ("show_gids", "\t0\t", "\t²\t"),
    "onyx_pfc-oper-a-number": ("onyx_pfc", '"PFC oper": "Disabled"', '"PFC oper": 3'),
    "vsphere_hosts-pnics-a-number": ("vsphere_hosts", '"config.network.pnic": [', '"config.network.pnic": 3, "x": ['),
    "vsphere_dvs-portgroup-name-a-number": ("vsphere_dvs", '"name": "', '"name": 5, "n": "'),
}


@pytest.mark.parametrize("case", sorted(CRASHES))
def test_found_crashes_are_parse_errors_or_facts(case):
    kind, old, new = CRASHES[case]
    text = _damaged(kind, old, new, count=-1 if kind == "vsphere_dvs" else 1)
    assert text != next(t for t in seeds(kind) if old in t)
    try:
        PARSERS[kind].parse(text)
    except ParseError:
        pass
