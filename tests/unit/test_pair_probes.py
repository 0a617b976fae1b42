"""Pair probes are declared by checks, like any probe (issue 14, items 1-2).

- The validate stage runs the measurements the selected checks declare (`CHECK.pair_probes`) and knows no
  check code: a site check adds a measurement of its own (a `PairProbe` object) or reads a built-in one
  by name, and only what is declared runs.
- The validate checks import only pure modules: following their imports (lazy ones too) never reaches a
  transport, the engine or the pair measurement I/O (roce_wizard/engine/pairs.py).
"""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

from roce_wizard.catalog import load_catalog
from roce_wizard.engine import run_checks
from roce_wizard.lab import scenarios
from roce_wizard.model import Policy, Status
from tests.fixkit import WorldTransport, target_for

PROJECT = Path(__file__).resolve().parents[2]

SITE_CHECK = '''"""RW961 pair-mtu-agrees — both nodes of a pair have the same RoCE netdev MTU (a site's own measurement)

What it checks
    `cat /sys/class/net/<netdev>/mtu` on both nodes of each pair, and the latency table of the built-in
    `perftest_lat` pair probe.

Why it matters
    A test of the pair probe declarations.

How to fix by hand
    Set the same MTU on both nodes.

Fix safety
    manual: a measurement.
"""

from roce_wizard.model import Check, Finding, Severity, Stage, Status, TargetKind
from roce_wizard.probes.pairs import PairProbe, PairStep
from roce_wizard.probes import safe


def _command(nodes, policy):
    return [PairStep(f"mtu.{side}", side, f"cat /sys/class/net/{safe(node.netdev)}/mtu")
            for side, node in (("sender", nodes.sender), ("receiver", nodes.receiver))]


def _parser(nodes, policy, outputs):
    return {"pair_mtu": {side: outputs[f"mtu.{side}"][1].strip() for side in ("sender", "receiver")}}


CHECK = Check(code="RW961", slug="pair-mtu-agrees", title="pair MTU agrees", stage=Stage.VALIDATE,
              target=(TargetKind.GUEST, TargetKind.LINUX), severity=Severity.FAIL, probes=(),
              pair_probes=(PairProbe("site_mtu", _command, _parser), "perftest_lat"))


def evaluate(facts, policy):
    mtu = facts.need("pair_mtu")
    rows = facts.need("perftest")["rows"]
    status = Status.PASS if mtu["sender"] == mtu["receiver"] else Status.FAIL
    return [Finding(CHECK.code, status, f"MTU {mtu['sender']} and {mtu['receiver']}; {len(rows)} latency rows")]
'''


def test_a_site_check_adds_a_measurement_and_only_declared_pair_probes_run(tmp_path):
    (tmp_path / "rw961_pair_mtu_agrees.py").write_text(SITE_CHECK)
    checks = {c: v for c, v in load_catalog([tmp_path]).items() if c == "RW961"}
    world = scenarios.healthy()
    events: list = []
    report = asyncio.run(run_checks([target_for(world, n) for n in ("compute-01", "compute-02")], checks,
                                    WorldTransport(world), Policy(), on_event=events.append))
    (finding,) = report.findings
    assert finding.status is Status.PASS, finding.summary
    assert finding.summary.startswith("MTU 9000 and 9000; ") and finding.subject == "compute-01<->compute-02"
    probes = {e.probe: e.command for e in events if e.TYPE == "probe" and e.probe.startswith("validate.")}
    assert probes["validate.p0.mtu.sender"] == "cat /sys/class/net/ens256/mtu"
    assert "validate.p0.mtu.receiver" in probes and "validate.p0.lat.client" in probes
    ran = " ".join(probes.values())
    assert "ib_send_lat" in ran  # the built-in it named
    assert "ib_send_bw" not in ran and "ib_write_bw" not in ran and "mpirun" not in ran  # nothing undeclared


def _imports(path: Path) -> set[str]:
    """Every roce_wizard module a file imports, at the top or lazily (inside functions, TYPE_CHECKING)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m.split(".")[0] == "roce_wizard"}


def _module_file(name: str) -> Path | None:
    base = PROJECT / Path(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def test_validate_checks_reach_no_transport_engine_or_pair_io():
    start = sorted((PROJECT / "checks" / "validate").glob("rw6*.py"))
    assert len(start) == 10  # RW601-RW610
    direct = {m for path in start for m in _imports(path) if _module_file(m)}
    allowed = ("roce_wizard.model", "roce_wizard.checklib", "roce_wizard.probes", "roce_wizard.probes.pairs",
               "roce_wizard.checklib.findings")  # checkkit: the finding builders, on their way into checklib/
    assert all(m.startswith(allowed) for m in direct), sorted(direct)
    seen: set[str] = set()
    todo = [*direct, "roce_wizard.probes.pairs"]  # the declarations their pair_probes names resolve to
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo += [m for m in _imports(_module_file(name)) if _module_file(m)]  # type: ignore[arg-type]
    forbidden = ("roce_wizard.transports", "roce_wizard.engine", "roce_wizard.engine.pairs", "roce_wizard.records.runlog",
                 "roce_wizard.lab", "roce_wizard.cli", "roce_wizard.tui")
    assert "roce_wizard.parsers" in seen  # the walk follows chains (pair_probes reads with the parsers)
    reached = sorted(m for m in seen if m.startswith(forbidden))
    assert reached == [], reached
