"""Meta-tests over the whole catalog: every check is complete, documented and has cases."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import tests.unit.checks as check_tests
from roce_wizard.catalog import SECTIONS, load_catalog
from roce_wizard.engine.fixes import plan_for as planned_fix
from roce_wizard.model import Severity, Status
from roce_wizard.parsers import PARSERS
from roce_wizard.playbook import load_playbook, playbooks_dir
from roce_wizard.probes import PROBES
from tests.checkcases import AFTER_FIX_CASES, Case, build_facts, run_case

CATALOG = load_catalog()


def all_cases() -> list[Case]:
    cases: list[Case] = []
    for info in pkgutil.iter_modules(check_tests.__path__):
        module = importlib.import_module(f"tests.unit.checks.{info.name}")
        cases.extend(getattr(module, "CASES", []))
    return cases + AFTER_FIX_CASES  # the ESXi / guest after-fix cases recorded from the lab (checkcases.py)


CASES = all_cases()


@pytest.mark.parametrize("code", list(CATALOG))
def test_every_check_has_a_pass_case_and_a_fail_case(code):
    statuses = {c.expect for c in CASES if c.code == code}
    assert Status.PASS in statuses, f"{code} has no pass case"
    bad = {Status.FAIL, Status.ERROR} if CATALOG[code].meta.severity is Severity.FAIL else {Status.WARN}
    assert statuses & bad, f"{code} has no {'/'.join(s.value for s in bad)} case"


@pytest.mark.parametrize("code", list(CATALOG))
def test_every_check_is_documented_and_reads_known_facts(code):
    check = CATALOG[code]
    for section in SECTIONS:
        assert check.doc[section].strip(), f"{code}: empty docstring section {section!r}"
    for probe in (*check.meta.probes, *check.meta.optional_probes):
        assert probe == "connection" or probe in PROBES or probe in PARSERS, f"{code}: unknown probe {probe}"
    for dep in check.meta.depends_on:
        assert dep.rpartition(":")[2] in CATALOG or dep.rpartition(":")[2].startswith("RW3"), f"{code}: {dep}?"


def test_the_catalog_holds_every_preflight_esxi_and_guest_check_of_the_domain():
    wanted = {"RW001", "RW002", "RW003", *(f"RW2{n:02d}" for n in range(1, 16)), *(f"RW4{n:02d}" for n in range(1, 13))}
    assert wanted <= set(CATALOG)


@pytest.mark.parametrize("path", sorted(playbooks_dir().glob("*.yaml")), ids=lambda p: p.stem)
def test_playbooks_name_only_existing_checks(path):
    book = load_playbook(str(path))
    for code in book.codes:
        assert code in CATALOG, f"{path.name} names {code}, which does not exist"
    assert [s.id.value for s in book.stages][0] == "preflight"


def test_readme_check_index_lists_every_check():
    from tests.conftest import REPO

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for code, check in CATALOG.items():
        assert f"| {code} | `{check.meta.slug}` | {check.meta.stage.value} | {check.meta.severity.value} |" in readme, code


FIXABLE = [code for code, check in CATALOG.items() if check.plan_fix is not None]


@pytest.mark.parametrize("code", FIXABLE)
def test_every_fixable_check_has_an_after_fix_case_that_plans_nothing(code):
    """`fix` right after `fix` plans nothing: each check with plan_fix has a case recorded after its
    fix (Case.after_fix) on which plan_fix returns None."""
    cases = [c for c in CASES if c.code == code and c.after_fix]
    assert cases, f"{code} has plan_fix but no after-fix case (Case(..., after_fix=True)) that plans nothing"
    for case in cases:
        assert planned_fix(CATALOG[code], build_facts(case), case.policy) is None, f"{case.id}: plans again"


@pytest.mark.parametrize("case", AFTER_FIX_CASES, ids=lambda c: c.id)
def test_recorded_after_fix_cases_judge_as_expected(case):
    """The ESXi / guest after-fix recordings (tests/unit/data/after_fix) are judged like every other case."""
    run_case(case)


@pytest.mark.parametrize("code", FIXABLE)
def test_a_fixable_check_plans_nothing_where_it_passes(code):
    for case in (c for c in CASES if c.code == code and c.expect is Status.PASS):
        assert planned_fix(CATALOG[code], build_facts(case), case.policy) is None, f"{case.id}: passes, yet plans a fix"
