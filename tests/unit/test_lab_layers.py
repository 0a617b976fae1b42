"""The lab's layer rule (DESIGN.md): it imports only the lab, the model, and the one leaf utility it is allowed, with
no import inside a function (a lazy import hides a cycle) and no import cycle among its modules.

Read from the source with ast (TYPE_CHECKING blocks aside: they never run)."""

from __future__ import annotations

import ast
from pathlib import Path

import roce_wizard
from roce_wizard.records import runlog
from roce_wizard.lab import control

ROOT = Path(roce_wizard.__file__).resolve().parent
LAB = ROOT / "lab"
# a leaf (imports nothing of the project; PyYAML only) that bounds a user's YAML: forking it into the lab would fork a
# security guard, so the lab's scenario files are read through it
ALLOWED_OUTSIDE = {"roce_wizard.model", "roce_wizard.yamlguard"}


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> list[tuple[str, int, bool]]:
    """(module imported, line, inside a function) for each project import outside TYPE_CHECKING."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = {id(n) for b in ast.walk(tree) if isinstance(b, ast.If) and "TYPE_CHECKING" in ast.unparse(b.test)
            for n in ast.walk(b)}
    nested = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
              for n in ast.walk(f)}
    module = _module(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([node.module] if node.module else [])])
            names = [f"{base}.{a.name}" for a in node.names]
            targets = [n if (ROOT.parent / (n.replace(".", "/") + ".py")).is_file()
                       or (ROOT.parent / n.replace(".", "/")).is_dir() else base for n in names]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            continue
        out += [(t, node.lineno, id(node) in nested) for t in targets if t.startswith("roce_wizard")]
    return out


FILES = sorted(LAB.rglob("*.py"))


def test_the_lab_imports_only_lab_and_model():
    bad = [f"{p.relative_to(ROOT)}:{line} imports {t}" for p in FILES for t, line, _ in _imports(p)
           if not t.startswith("roce_wizard.lab") and t not in ALLOWED_OUTSIDE]
    assert bad == []


def test_the_lab_has_no_lazy_imports():
    lazy = [f"{p.relative_to(ROOT)}:{line} imports {t} inside a function" for p in FILES
            for t, line, inside in _imports(p) if inside]
    assert lazy == []


def test_the_lab_has_no_import_cycle():
    graph = {_module(p): {t for t, _, _ in _imports(p) if t.startswith("roce_wizard.lab")} for p in FILES}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt):], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])
    assert cycles == []


def test_labs_live_under_roce_wizards_state_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("ROCE_WIZARD_STATE_DIR", str(tmp_path))
    assert control.labs_root() == runlog.state_dir() / "lab" == tmp_path / "lab"
    monkeypatch.delenv("ROCE_WIZARD_STATE_DIR")
    assert control.labs_root() == runlog.state_dir() / "lab"
