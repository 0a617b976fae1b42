"""The project documents itself inside itself (issue 18, items 3-4): `roce-wizard checks --json` for
scripts, `roce-wizard checks --markdown` committed as docs/checks.md (compared here, so it cannot go
stale), every policy key in docs/policy.md, every fact kind a check reads in docs/facts.md, and a README
that points at docs/ rather than at files a user of the package does not have."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from roce_wizard.catalog import load_catalog
from roce_wizard.model import POLICY_KEYS

ROOT = Path(__file__).resolve().parents[2]
CATALOG = load_catalog()


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "60"}  # a narrow terminal must not matter
    return subprocess.run([sys.executable, "-m", "roce_wizard.cli", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=120)


def test_checks_markdown_is_the_committed_docs_checks_md():
    out = _cli("checks", "--markdown")
    assert out.returncode == 0, out.stderr
    committed = (ROOT / "docs" / "checks.md").read_text(encoding="utf-8")
    assert out.stdout == committed, "docs/checks.md is stale: roce-wizard checks --markdown > docs/checks.md"
    for code, check in CATALOG.items():
        assert f"| [{code}](#{code.lower()}) | `{check.meta.slug}` |" in committed
        assert f"\n## {code}\n" in committed
        how = check.doc["How to fix by hand"].splitlines()[0]
        assert how in committed  # the docstring's sections are there, unwrapped


def test_checks_json_lists_the_catalog_in_order():
    out = _cli("checks", "--json")
    assert out.returncode == 0, out.stderr
    entries = json.loads(out.stdout)
    assert [e["code"] for e in entries] == list(CATALOG)
    by_code = {e["code"]: e for e in entries}
    rw208 = by_code["RW208"]
    assert rw208 == {"code": "RW208", "slug": "num-vfs-covers-max-vfs", "title": "NUM_OF_VFS covers max_vfs",
                     "stage": "esxi", "targets": ["esxi"], "severity": "fail", "reboot": "host",
                     "has_fix": True, "fix_safety": "disruptive", "depends_on": list(CATALOG["RW208"].meta.depends_on)}
    assert by_code["RW212"]["fix_safety"] == "safe" and by_code["RW001"]["has_fix"] is False
    for e in entries:
        assert e["has_fix"] == (CATALOG[e["code"]].plan_fix is not None)
        assert e["fix_safety"] in ("safe", "disruptive", "manual"), e["code"]


def test_checks_json_and_markdown_together_is_a_usage_error():
    out = _cli("checks", "--json", "--markdown")
    assert out.returncode == 2 and "pick one" in out.stderr


def test_every_policy_key_is_documented():
    doc = (ROOT / "docs" / "policy.md").read_text(encoding="utf-8")
    missing = sorted(k for k in POLICY_KEYS if f"### `{k}`" not in doc)
    assert not missing, f"docs/policy.md lacks a section for policy key(s): {', '.join(missing)}"


def _kinds_checks_read() -> set[str]:
    kinds: set[str] = set()
    for check in CATALOG.values():
        kinds |= set(check.meta.probes) | set(check.meta.optional_probes)
    sources = [*(ROOT / "checks").rglob("*.py"), *(ROOT / "roce_wizard" / "checklib").rglob("*.py")]
    for path in sources:
        kinds |= set(re.findall(r"\.need\(\s*[\"']([a-z0-9_]+)[\"']", path.read_text(encoding="utf-8")))
    return kinds


def test_every_fact_kind_a_check_reads_is_in_docs_facts_md():
    doc = (ROOT / "docs" / "facts.md").read_text(encoding="utf-8")
    kinds = _kinds_checks_read()
    assert {"mlxconfig_query", "esxi_dcb_status", "ucx_config"} <= kinds  # the scan finds what it should
    missing = sorted(k for k in kinds if f"`{k}`" not in doc)
    assert not missing, f"docs/facts.md does not describe fact kind(s): {', '.join(missing)}"


def test_readme_and_written_docs_stand_alone():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page in ("docs/checks.md", "docs/policy.md", "docs/facts.md"):
        assert f"]({page})" in readme, f"README does not link {page}"
    for path in (ROOT / "README.md", ROOT / "docs" / "policy.md", ROOT / "docs" / "facts.md"):
        text = path.read_text(encoding="utf-8")
        assert "../shared" not in text and not re.search(r"\bDOMAIN\b", text), path.name


def test_readme_shows_what_the_user_types_for_each_ecosystem_item():
    """Issue 18's items, each shown in the README as a user types it."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for line in ("pipx install .", "uv tool install .", "roce-wizard checks --json", "roce-wizard checks --markdown",
                 "roce-wizard lab up --baremetal 2 --hosts 0", "roce-wizard demo --baremetal",
                 "roce-wizard doctor -i DIR/inventory.yaml --env-file DIR/lab.env", "--install-completion"):
        assert line in " ".join(readme.split()), line


# What a user of the package does not have: the project's internal spec (DOMAIN.md, cited "DOMAIN §N"), the shared
# folder beside the repository (../shared/corpus, ../shared/seeds) and the seed files' paths (seeds/004_….txt).
_INTERNAL = {"DOMAIN": re.compile(r"\bDOMAIN\b"), "../shared": re.compile(r"\.\./shared"),
             "seeds/": re.compile(r"(?<![\w.-])seeds/")}
_SEED_CITED = re.compile(r"\bseeds?\s+(0\d\d)\b", re.IGNORECASE)


def _internal_refs(text: str) -> list[str]:
    return [name for name, pattern in _INTERNAL.items() if pattern.search(text)]


def _seed_names_spelled_out(text: str) -> list[str]:
    """Seed numbers `text` cites without a `seed NNN: <title …>` note in the same text."""
    cited = {m.group(1) for m in _SEED_CITED.finditer(text)}
    return sorted(n for n in cited if not re.search(rf"^(?:- )?seed {n}: \S.*\"[^\"]+\"", text, re.MULTILINE))


def test_docs_checks_md_cites_nothing_a_user_lacks():
    text = (ROOT / "docs" / "checks.md").read_text(encoding="utf-8")
    assert not _internal_refs(text), _internal_refs(text)
    assert {"000", "001", "004"} <= {m.group(1) for m in _SEED_CITED.finditer(text)}  # the scan finds them
    assert not _seed_names_spelled_out(text), "docs/checks.md cites seeds it does not name"
    assert "https://blog.qarnot.com/setting-up-a-roce-cluster/" in text  # seed 004's public origin


def test_explain_stands_alone_for_every_check():
    """`roce-wizard explain CODE` for every check (in-process, the same command): no internal reference, and every
    "seed NNN" it cites is spelled out (title, author, where) in the same output."""
    from typer.testing import CliRunner  # noqa: PLC0415

    from roce_wizard.cli import app  # noqa: PLC0415

    runner = CliRunner()
    bad: dict[str, list[str]] = {}
    for code in CATALOG:
        result = runner.invoke(app, ["explain", code], env={"COLUMNS": "200", "NO_COLOR": "1"})
        assert result.exit_code == 0, (code, result.output)
        assert "What it checks" in result.output and "Fix safety" in result.output, code
        problems = _internal_refs(result.output) + [f"seed {n} unexplained" for n in
                                                    _seed_names_spelled_out(result.output)]
        if problems:
            bad[code] = problems
    assert not bad, bad


def test_explain_spells_out_a_seed_for_the_user():
    out = _cli("explain", "RW604")
    assert out.returncode == 0, out.stderr
    assert "Seed 004: UCX_IB_TRAFFIC_CLASS=124" in " ".join(out.stdout.split())
    assert 'seed 004: A. de la Fournière, "Setting up a RoCE cluster"' in " ".join(out.stdout.split())
    assert "DOMAIN" not in out.stdout


def test_shipped_sources_cite_no_internal_document():
    """checks/ and roce_wizard/ ship in the wheel: their text (docstrings, comments, messages) cites what a user can
    open, never DOMAIN.md or the shared folder."""
    hits = [f"{path.relative_to(ROOT)}: {name}"
            for path in [*(ROOT / "checks").rglob("*.py"), *(ROOT / "roce_wizard").rglob("*.py")]
            for name in _internal_refs(path.read_text(encoding="utf-8")) if name != "seeds/"]
    assert not hits, hits


def test_playbook_stage_order_error_names_the_order(tmp_path):
    from roce_wizard.playbook import PlaybookError, load_playbook  # noqa: PLC0415

    path = tmp_path / "backwards.yaml"
    path.write_text("name: backwards\nstages:\n  - id: switch\n  - id: bios\n", encoding="utf-8")
    try:
        load_playbook(str(path))
    except PlaybookError as exc:
        message = str(exc)
    else:
        raise AssertionError("a playbook with bios after switch loaded")
    assert "stage bios is out of order" in message and "preflight, bios, esxi, vsphere" in message, message
    assert "DOMAIN" not in message
