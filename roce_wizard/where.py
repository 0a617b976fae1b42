"""`explain CODE --where`: where a check lives — its file, probes (commands, parsers), fix, tests, lab fault.

Everything is read from the code itself (the catalog, ``PROBES``, the pair probes, ``PARSERS``, the lab's fault
registry, the test files), so the answer cannot drift from what runs. Paths are relative to the directory that holds the
``roce_wizard`` package: the project in a source checkout, ``site-packages`` for an installed wheel (which
ships no tests: the answer then says so).
"""

from __future__ import annotations

import ast
import inspect
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from roce_wizard.model import LoadedCheck, RoceSpec, Stage, Target, TargetKind

ROOT = Path(__file__).resolve().parent.parent

# the example target a probe's command is shown for: the real values come from the inventory and earlier probes
EXAMPLE = {"pf_pci": "0000:3b:00.0", "vmnic": "vmnic2", "netdev": "ens256", "rdma_dev": "mlx5_0",
           "mst device": "mt4119_pciconf0"}
_FACTS = {"mst_status": {"devices": [{"pci": "3b:00.0", "mst": f"/dev/mst/{EXAMPLE['mst device']}"}]}}
_CASE = r"\b[A-Za-z_]\w*\(\s*[\"']{code}[\"']\s*,\s*[\"']([^\"']+)[\"']"  # Case("RW208", "name", ...), after_fix("RW208", ...)


def rel(path: str | Path) -> str:
    p = Path(path).resolve()
    try:
        return p.relative_to(ROOT).as_posix()
    except ValueError:
        return str(p)  # a site check outside the project


def _example(kind: TargetKind, device_type: str | None = None) -> Target:
    roce = RoceSpec(pf_pci=EXAMPLE["pf_pci"], vmnics=(EXAMPLE["vmnic"],), netdev=EXAMPLE["netdev"],
                    rdma_dev=EXAMPLE["rdma_dev"])
    return Target(name=f"example-{kind.value}", kind=kind, address="127.0.0.1", roce=roce, device_type=device_type)


def _commands(probe: Any, kinds: tuple[TargetKind, ...]) -> list[dict[str, str]]:
    """[{targets, command}] for each target kind (each switch vendor), equal commands grouped."""
    from roce_wizard.probes.switch import _NAMES  # noqa: PLC0415

    rows: list[tuple[str, str]] = []
    for kind in kinds:
        variants = [(dt, _example(kind, dt)) for dt in _NAMES] if kind is TargetKind.SWITCH else [(None, _example(kind))]
        for device_type, target in variants:
            try:
                if probe.items is not None and probe.item_command is not None:
                    command = f"{probe.item_command(target, dict(_FACTS), EXAMPLE['vmnic'])}  (once per RoCE vmnic)"
                else:
                    command = probe.command(target, dict(_FACTS))
            except Exception as exc:  # noqa: BLE001 — a command builder's refusal is shown, never raised
                command = f"(not built for the example target: {exc})"
            if command is None:
                if kind is TargetKind.SWITCH:
                    continue  # another vendor's command
                command = f"(not run: {probe.why_not or 'not applicable'})"
            rows.append((f"{kind.value} ({device_type})" if device_type else kind.value, command))
    grouped: dict[str, list[str]] = {}
    for label, command in rows:
        grouped.setdefault(command, []).append(label)
    return [{"targets": ", ".join(labels), "command": command} for command, labels in grouped.items()]


def _parser(kind: str) -> dict[str, str] | None:
    from roce_wizard.parsers import PARSERS  # noqa: PLC0415

    parser = PARSERS.get(kind)
    if parser is None:
        return None
    module = inspect.getmodule(parser.parse)
    # the name the module binds it to (a wrapped parser, e.g. per_host(...), has a generic __qualname__)
    bound = [name for name, value in vars(module).items() if value is parser.parse] if module is not None else []
    return {"module": parser.parse.__module__, "function": bound[0] if bound else parser.parse.__qualname__,
            "file": rel(module.__file__) if module is not None and module.__file__ else "?"}


def probes(check: LoadedCheck) -> list[dict[str, Any]]:
    from roce_wizard.probes import PROBES  # noqa: PLC0415

    out = []
    for name in (*check.meta.probes, *check.meta.optional_probes):
        entry: dict[str, Any] = {"name": name, "optional": name in check.meta.optional_probes,
                                 "parser": _parser(name), "commands": []}
        probe = PROBES.get(name)
        if probe is not None:
            kinds = tuple(k for k in probe.kinds if k in check.meta.target_kinds) or probe.kinds
            entry["commands"] = _commands(probe, kinds)
            module = inspect.getmodule(probe.command)
            entry["defined_in"] = rel(module.__file__) if module is not None and module.__file__ else "?"
        elif check.meta.stage is Stage.VALIDATE:
            entry["note"] = "measured between two nodes: see its pair probes (roce_wizard/engine/pairs.py runs them)"
        elif entry["parser"] is not None:
            entry["note"] = "no live probe: `roce-wizard analyze` reads it from a pasted file"
        else:
            entry["note"] = "a fact the engine provides (roce_wizard/engine/gather.py), no command"
        out.append(entry)
    return out


# the example pair a pair probe's steps are shown for: the real values come from each node's facts
PAIR_EXAMPLE = {"sender": "192.168.100.11", "receiver": "192.168.100.12", "device": "mlx5_0", "gid index": 3}
PAIR_STEPS_SHOWN = 8


def _example_pair(kind: TargetKind) -> Any:
    from roce_wizard.model import Facts  # noqa: PLC0415
    from roce_wizard.probes.pairs import Node, Pair, PairNodes  # noqa: PLC0415

    def node(side: str) -> Node:
        target = replace(_example(kind), name=f"example-{side}")
        facts = Facts(data={"ip_json": {"interfaces": [{"name": EXAMPLE["netdev"]}]}}, target=target)
        return Node(target, facts, dev=PAIR_EXAMPLE["device"], netdev=EXAMPLE["netdev"], ip=PAIR_EXAMPLE[side],
                    gid_index=PAIR_EXAMPLE["gid index"], gid_kind="v2-ipv4", speed_gbps=100.0)

    sender, receiver = node("sender"), node("receiver")
    return PairNodes(Pair(sender.target, receiver.target, 0), sender, receiver)


def _source_line(function: Any) -> str:
    try:
        return f"{rel(inspect.getsourcefile(function) or '?')}:{inspect.getsourcelines(function)[1]}"
    except (OSError, TypeError):
        return "?"


def pair_probes(check: LoadedCheck) -> list[dict[str, Any]]:
    """The measurements between two nodes the check declares: where each is defined, what reads its
    outputs, and its steps for an example pair (the first few: an incast has dozens)."""
    from roce_wizard.model import Policy  # noqa: PLC0415
    from roce_wizard.probes.pairs import declared  # noqa: PLC0415

    out = []
    for probe in declared(check.meta.pair_probes):
        module = inspect.getmodule(probe.command)
        entry: dict[str, Any] = {
            "name": probe.name, "defined_in": rel(module.__file__) if module is not None and module.__file__ else "?",
            "reader": _source_line(probe.parser),
            "parsers": [p for p in (_parser(kind) for kind in probe.parsers) if p is not None],
            "node_probes": list(probe.node_probes), "steps": [], "more_steps": 0}
        try:
            steps = probe.command(_example_pair(check.meta.target_kinds[0]), Policy())
        except Exception as exc:  # noqa: BLE001 — a command builder's refusal is shown, never raised
            entry["note"] = f"(not built for the example pair: {exc})"
            steps = []
        if steps is None:
            entry["note"] = f"(not run: {probe.why_not or 'not applicable'})"
        elif not steps:
            entry["note"] = "no command: computed from both nodes' facts"
        else:
            entry["steps"] = [{"on": s.side, "command": s.command} for s in steps[:PAIR_STEPS_SHOWN]]
            entry["more_steps"] = max(0, len(steps) - PAIR_STEPS_SHOWN)
        out.append(entry)
    return out


def fix(check: LoadedCheck) -> dict[str, Any]:
    plan = check.plan_fix
    where = None
    if plan is not None:
        try:
            where = f"{rel(inspect.getsourcefile(plan) or check.path)}:{inspect.getsourcelines(plan)[1]}"
        except (OSError, TypeError):
            where = rel(check.path)
    return {"plan_fix": where, "fix_hint": check.meta.fix_hint, "reboot": check.meta.reboot.value}


def tests(check: LoadedCheck, tests_dir: Path | None = None) -> dict[str, Any]:
    """Test files under tests/ that mention the code (or the slug), with the test functions and cases that do."""
    if tests_dir is None:  # only the project's own tests/ (site-packages may hold another package's `tests`)
        tests_dir = ROOT / "tests" if (ROOT / "pyproject.toml").is_file() else ROOT / "tests-not-shipped"
    if not tests_dir.is_dir():
        return {"available": False, "files": [],
                "note": "this installation has no tests/ (an installed wheel ships none); "
                        f"in a source checkout: grep -rn {check.code} tests/"}
    word = re.compile(rf"\b(?:{re.escape(check.code)}|{re.escape(check.meta.slug)})\b")
    case = re.compile(_CASE.format(code=re.escape(check.code)))
    files = []
    for path in sorted(tests_dir.rglob("*.py")):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if not word.search(text):
            continue
        lines = text.splitlines()
        functions: list[str] = []
        try:
            tree = ast.parse(text)
        except SyntaxError:
            tree = None
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
                body = "\n".join(lines[node.lineno - 1:node.end_lineno])
                if word.search(body):
                    functions.append(node.name)
        files.append({"path": rel(path), "functions": sorted(set(functions)),
                      "cases": list(dict.fromkeys(case.findall(text)))})
    return {"available": True, "files": files}


def lab_fault(code: str) -> dict[str, str] | None:
    from roce_wizard.lab.faults import registry  # noqa: PLC0415

    fault = registry().get(code)
    if fault is None:
        return None
    module = inspect.getmodule(fault.apply)
    return {"code": fault.code, "kind": fault.kind, "description": fault.description,
            "defined_in": rel(module.__file__) if module is not None and module.__file__ else "?",
            "inject": f"roce-wizard lab up --fault {fault.code}"}


def where(check: LoadedCheck) -> dict[str, Any]:
    """Everything `explain --where` prints, as plain data (also the --json output)."""
    return {"version": 1, "code": check.code, "slug": check.meta.slug, "title": check.meta.title, "root": str(ROOT),
            "file": rel(check.path), "probes": probes(check), "example_target": dict(EXAMPLE),
            "pair_probes": pair_probes(check), "example_pair": dict(PAIR_EXAMPLE), "fix": fix(check),
            "tests": tests(check), "lab_fault": lab_fault(check.code)}


def render(data: dict[str, Any]) -> list[str]:
    """The --where text, one finding per line (the caller strips control characters)."""
    out = [f"{data['code']} {data['slug']} — where it lives (paths relative to {data['root']})",
           f"check file:  {data['file']}", "probes:      (commands shown for an example target: "
           + ", ".join(f"{k} {v}" for k, v in data["example_target"].items()) + ")"]
    for probe in data["probes"]:
        parser = probe["parser"]
        parsed_by = f"parser {parser['module']}.{parser['function']} ({parser['file']})" if parser else "no parser"
        out.append(f"  {probe['name']}{' (optional)' if probe['optional'] else ''} — {parsed_by}")
        for row in probe["commands"]:
            out.append(f"      {row['targets']}: {row['command']}")
        if probe.get("note"):
            out.append(f"      {probe['note']}")
    if data["pair_probes"]:
        out.append("pair probes: (measured between two nodes by roce_wizard/engine/pairs.py; steps shown for an example pair: "
                   + ", ".join(f"{k} {v}" for k, v in data["example_pair"].items()) + ")")
    for probe in data["pair_probes"]:
        out.append(f"  {probe['name']} — defined in {probe['defined_in']}; outputs read at {probe['reader']}")
        for parser in probe["parsers"]:
            out.append(f"      parser {parser['module']}.{parser['function']} ({parser['file']})")
        if probe["node_probes"]:
            out.append(f"      needs on each node: {', '.join(probe['node_probes'])}")
        for step in probe["steps"]:
            out.append(f"      {step['on']}: {step['command']}")
        if probe["more_steps"]:
            out.append(f"      … and {probe['more_steps']} more step{'s' if probe['more_steps'] > 1 else ''}")
        if probe.get("note"):
            out.append(f"      {probe['note']}")
    fx = data["fix"]
    out.append(f"fix:         plan_fix at {fx['plan_fix']} (reboot: {fx['reboot']})" if fx["plan_fix"]
               else "fix:         no plan_fix: fixed by hand only")
    if fx["fix_hint"]:
        out.append(f"  by hand:   {fx['fix_hint']}")
    tst = data["tests"]
    if not tst["available"]:
        out.append(f"tests:       {tst['note']}")
    elif not tst["files"]:
        out.append("tests:       no test file mentions it")
    else:
        out.append("tests:")
        for entry in tst["files"]:
            out.append(f"  {entry['path']}")
            if entry["functions"]:
                out.append(f"      tests: {', '.join(entry['functions'])}")
            if entry["cases"]:
                out.append(f"      cases: {', '.join(entry['cases'])}")
    fault = data["lab_fault"]
    if fault is None:
        out.append("lab fault:   none registered for this code (roce_wizard/lab/faults.py; `roce-wizard lab faults`)")
    else:
        out.append(f"lab fault:   {fault['code']} (target kind {fault['kind']}) — {fault['description']}")
        out.append(f"  defined in {fault['defined_in']}; inject: {fault['inject']}")
    return out

