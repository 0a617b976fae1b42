"""The report's validate verdicts: one sentence per node pair (lossless? congestion-controlled? with the numbers)
and the incast plot with each step's pause and ECN/CNP deltas beside its throughput — from the checks' findings
on the lab's measurements (tests/unit/checks/test_validate_traffic.py runs the real pair probes)."""

from __future__ import annotations

import json

from roce_wizard.model import Policy
from roce_wizard.records.fabric import pair_sentences
from roce_wizard.records.markup import html
from roce_wizard.records.report import results_sections
from roce_wizard.records.svg import incast_svg
from tests.checkcases import Case, build_facts
from tests.unit.checks.test_validate_traffic import CATALOG, ECN_LATE, HEALTHY, REMARKED, T

PAIR = "node-01<->node-02"


def _rows(facts: dict) -> list[dict]:
    rows = []
    for code in ("RW605", "RW606", "RW607", "RW608"):
        for f in CATALOG[code].evaluate(build_facts(Case(code, "x", None, facts=facts, target=T)), Policy()):
            rows.append(json.loads(json.dumps({"check": code, "subject": PAIR, "target": f.target, "status": f.status.value,
                                               "summary": f.summary, "details": f.details, "stage": "validate",
                                               "blocked_by": None}, default=str)))
    return rows


def test_healthy_pair_is_lossless_and_congestion_controlled_with_its_numbers():
    (sentence,) = pair_sentences(_rows(HEALTHY))
    assert sentence.startswith(f"{PAIR} is lossless (RW607 on node-02: RoCE rides priority 3 both ways")
    assert "and congestion-controlled (RW608" in sentence and "ECN-marked packets" in sentence
    assert "pauses on priority 3" in sentence


def test_a_pair_that_never_marks_is_lossless_but_not_congestion_controlled():
    (sentence,) = pair_sentences(_rows(ECN_LATE | {k: v for k, v in HEALTHY.items() if k.startswith("validate_traffic_")
                                                   and k != "validate_traffic_incast"}))
    assert " is lossless " in sentence and "NOT congestion-controlled (RW608 on node-02: np_ecn_marked_roce_packets" \
        in sentence


def test_a_pair_on_priority_0_is_not_lossless_naming_the_priority():
    rows = _rows(REMARKED)
    (sentence,) = pair_sentences(rows)
    assert "is NOT lossless (RW607 on node-02" in sentence and "priority 0" in sentence


def test_no_sentence_without_rw607_or_rw608():
    assert pair_sentences([r for r in _rows(HEALTHY) if r["check"] in ("RW605", "RW606")]) == []


def test_incast_plot_shows_pauses_and_ecn_cnp_beside_throughput():
    rw605 = next(r for r in _rows(HEALTHY) if r["check"] == "RW605")
    points = rw605["details"]["incast"]
    big = next(p for p in points if p["streams"] == 4 and p["size"] == 1048576)
    assert big["pauses_p"] > 0 and big["ecn_marked"] > 0 and big["cnp_sent"] and big["cnp_handled"]
    svg = incast_svg(points)
    assert "pauses prio 3 +" in svg and f"ECN marked +{big['ecn_marked']}" in svg and "CNPs sent +" in svg
    assert svg.startswith("<svg") and svg.endswith("</svg>") and 'height="300"' not in svg  # grown for the rows
    page = html("report", [], results_sections(_rows(HEALTHY)))
    assert "Fabric (per node pair)" in page and "counters during each step" in page


def test_a_blocked_check_is_cited_with_its_root_cause_in_either_shape():
    rows = _rows(HEALTHY)
    for blocked in ({"check": "RW501", "target": "leaf-01"}, ["RW501", "leaf-01"]):
        for r in rows:
            if r["check"] == "RW607":
                r.update(status="skip", blocked_by=blocked)
        (sentence,) = pair_sentences(rows)
        assert "could not be proven lossless (RW607 blocked by RW501 on leaf-01)" in sentence
