"""The shape of the house (DESIGN.md, "The house after its first year"): the project reads its own imports and
fails when a layer rule breaks.

How imports are read (with `ast`, nothing is imported):
- every `import` / `from … import` in a module, at module level AND inside functions, methods, `try` blocks
  (lazy imports count: they load the module all the same); `from . import x` / `from ..a import b` are resolved
  against the importing module's package; `from pkg import name` is an import of `pkg.name` when that is a module
  of the project, else of `pkg`.
- imports under `if TYPE_CHECKING:` are left out: they never run, they only name types.
- `importlib.import_module(f"…")` cannot be read statically and is not followed.
- checks/ is the installed package `roce_wizard_checks` (pyproject's package-dir), so its modules are named so.

Layers: checks = roce_wizard_checks.*; transports, lab, parsers = roce_wizard.<layer>.*; front ends =
roce_wizard.cli(.*) and roce_wizard.tui.*; model = roce_wizard.model.

LEAF rule (computed, no hand list): a module that imports no project module and sits in none of the layers above
(textsafe, yamlguard, untrusted, …) is a leaf utility and may be imported from any layer. A module inside a layer
is never a leaf for another layer (a parser that imports nothing is still a parser, and the lab may not use it).

Rules (the name is what a violation and KNOWN_VIOLATIONS say):
  checks-reach      a check never reaches (directly or through any chain) a transport, the lab or a front end
  parsers-only      a parser imports only parsers, model and leaves
  lab-only          the lab imports only the lab, model and leaves
  transports-reach  a transport never reaches (through any chain) a check, a parser or a front end
  front-ends        nothing outside the front ends imports them
  cycle             no import cycle: (a, b) when a imports b and b leads back to a
  max-lines         no source file in roce_wizard/ or checks/ over 500 lines

For a `*-reach` rule an entry is (rule, the check/transport module, the first forbidden module on the chain); for
the others (rule, importer, imported); for max-lines (rule, file, ">500").

Print the current violations (for the lead, or to refresh the set): `python3 tests/unit/test_layers.py --list [REPO]`.
"""

from __future__ import annotations

import ast
import itertools
import sys
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROJECT_ROOTS = {"roce_wizard": REPO / "roce_wizard", "roce_wizard_checks": REPO / "checks"}
MAX_LINES = 500

CHECKS, TRANSPORTS, LAB, PARSERS, FRONT, MODEL = "checks", "transports", "lab", "parsers", "front ends", "model"
_LAYER_PREFIXES = [
    ("roce_wizard_checks", CHECKS), ("roce_wizard.transports", TRANSPORTS), ("roce_wizard.lab", LAB),
    ("roce_wizard.parsers", PARSERS), ("roce_wizard.cli", FRONT), ("roce_wizard.tui", FRONT),
    ("roce_wizard.model", MODEL),
]


def layer_of(module: str) -> str | None:
    for prefix, layer in _LAYER_PREFIXES:
        if module == prefix or module.startswith(prefix + "."):
            return layer
    return None


@dataclass
class Graph:
    """Modules of the project, their files and what each imports (module -> {imported: first line})."""

    files: dict[str, Path] = field(default_factory=dict)
    imports: dict[str, dict[str, int]] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    base: Path = REPO

    def where(self, module: str, line: int | None = None) -> str:
        rel = self.files[module].relative_to(self.base) if self.files[module].is_relative_to(self.base) \
            else self.files[module]
        return f"{rel}:{line}" if line is not None else str(rel)

    def leaves(self) -> set[str]:
        return {m for m, imps in self.imports.items() if not imps and layer_of(m) is None}


# ------------------------------------------------------------------------------------------------- reading


def _module_name(top: str, root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([top, *parts])


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement that can run: all depths, minus `if TYPE_CHECKING:` bodies."""
    found: list[ast.Import | ast.ImportFrom] = []
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
            continue
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            todo.extend(node.orelse)
            continue
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):  # statements only: imports are statements
            todo.extend(getattr(node, name, ()))
    return found


def _resolve(node: ast.Import | ast.ImportFrom, module: str, is_package: bool, known: set[str]) -> list[str]:
    """The project modules one import statement loads."""
    def project(name: str) -> str | None:
        while name and name not in known:  # `import a.b.attr` style, or a name inside a module
            name = name.rpartition(".")[0]
        return name or None

    if isinstance(node, ast.Import):
        return [m for alias in node.names if (m := project(alias.name))]
    if node.level:
        package = module if is_package else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{node.module}" if node.module else package
    else:
        base = node.module or ""
    out = []
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        target = sub if sub in known else project(base)
        if target:
            out.append(target)
    return out


def collect(roots: dict[str, Path], base: Path = REPO) -> Graph:
    """Read every .py file under each root (top-level package name -> directory)."""
    graph = Graph(base=base)
    for top, root in roots.items():
        for path in sorted(root.rglob("*.py")):
            graph.files[_module_name(top, root, path)] = path
    known = set(graph.files)
    for module, path in graph.files.items():
        text = path.read_text(encoding="utf-8")
        graph.lines[module] = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        tree = ast.parse(text, filename=str(path))
        imps: dict[str, int] = {}
        for node in _import_nodes(tree):
            for target in _resolve(node, module, path.name == "__init__.py", known):
                if target != module and (target not in imps or node.lineno < imps[target]):
                    imps[target] = node.lineno
        graph.imports[module] = imps
    return graph


# ------------------------------------------------------------------------------------------------- rules


def _chain(graph: Graph, path: list[str]) -> str:
    hops = [f"{a} ({graph.where(a, graph.imports[a][b])}) -> {b}" for a, b in itertools.pairwise(path)]
    return "\n      ".join(hops)


def _reach(graph: Graph, start: str, forbidden: set[str]) -> dict[str, list[str]]:
    """The first forbidden modules `start` reaches, each with its shortest chain (forbidden modules are not
    walked through: their own imports are their rule's business)."""
    parent: dict[str, str | None] = {start: None}
    hits: dict[str, list[str]] = {}
    queue = deque([start])
    while queue:
        cur = queue.popleft()
        for nxt in sorted(graph.imports[cur]):
            if nxt in parent:
                continue
            parent[nxt] = cur
            if layer_of(nxt) in forbidden:
                path, node = [], nxt
                while node is not None:
                    path.append(node)
                    node = parent[node]
                hits[nxt] = path[::-1]
            else:
                queue.append(nxt)
    return hits


def _sccs(graph: Graph) -> list[set[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[set[str]] = []
    for root in sorted(graph.imports):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.imports[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.imports[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        comp.add(member)
                        if member == node:
                            break
                    if len(comp) > 1:
                        out.append(comp)
    return out


def _path_within(graph: Graph, start: str, goal: str, allowed: set[str]) -> list[str]:
    parent: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        cur = queue.popleft()
        if cur == goal:
            path, node = [], cur
            while node is not None:
                path.append(node)
                node = parent[node]
            return path[::-1]
        for nxt in sorted(graph.imports[cur]):
            if nxt in allowed and nxt not in parent:
                parent[nxt] = cur
                queue.append(nxt)
    return []  # pragma: no cover - members of one SCC always reach each other


Violation = tuple[str, str, str]


def check(graph: Graph) -> dict[Violation, str]:
    """Every broken rule: (rule, importer, imported) -> a message with the file:line chain."""
    found: dict[Violation, str] = {}
    leaves = graph.leaves()

    for module in sorted(graph.imports):
        layer = layer_of(module)
        for rule, forbidden, applies in (("checks-reach", {TRANSPORTS, LAB, FRONT}, layer == CHECKS),
                                         ("transports-reach", {CHECKS, PARSERS, FRONT}, layer == TRANSPORTS)):
            if not applies:
                continue
            for hit, path in _reach(graph, module, forbidden).items():
                found[(rule, module, hit)] = (
                    f"[{rule}] {layer} module {module} reaches {layer_of(hit)} module {hit}:\n      "
                    + _chain(graph, path))
        for imported, line in sorted(graph.imports[module].items()):
            target_layer = layer_of(imported)
            for rule, own in (("parsers-only", PARSERS), ("lab-only", LAB)):
                if layer == own and target_layer not in (own, MODEL) and imported not in leaves:
                    found[(rule, module, imported)] = (
                        f"[{rule}] {graph.where(module, line)}: {own} module {module} imports {imported} "
                        f"({target_layer or 'no layer'}, not a leaf); {own} may import only {own}, model and "
                        "leaf utilities")
            if target_layer == FRONT and layer != FRONT:
                found[("front-ends", module, imported)] = (
                    f"[front-ends] {graph.where(module, line)}: {module} imports the front end {imported}; only "
                    "the CLI and the TUI may import them")

    for comp in _sccs(graph):
        members = " , ".join(sorted(comp))
        for a in sorted(comp):
            for b, line in sorted(graph.imports[a].items()):
                if b in comp:
                    back = _path_within(graph, b, a, comp)
                    found[("cycle", a, b)] = (
                        f"[cycle] {graph.where(a, line)}: {a} imports {b}, which leads back to it:\n      "
                        + _chain(graph, back) + f"\n      (cycle members: {members})")

    for module, count in sorted(graph.lines.items()):
        if count > MAX_LINES:
            found[("max-lines", graph.where(module), f">{MAX_LINES}")] = (
                f"[max-lines] {graph.where(module)} has {count} lines (at most {MAX_LINES}): split it")
    return found


def compare(found: dict[Violation, str], known: set[Violation]) -> str:
    """'' when the violations are exactly the known ones; else what is new and what no longer occurs."""
    new = sorted(set(found) - known)
    gone = sorted(known - set(found))
    out = []
    if new:
        out.append(f"{len(new)} layer rule violation(s) not in KNOWN_VIOLATIONS — fix the import (DESIGN.md, "
                   "'The house after its first year'):")
        out.extend("  " + found[v] for v in new)
    if gone:
        out.append(f"{len(gone)} KNOWN_VIOLATIONS entr(y/ies) no longer occur — good: delete them from the set "
                   "in tests/unit/test_layers.py (it only shrinks):")
        out.extend(f"  {v!r}," for v in gone)
    return "\n".join(out)


# ------------------------------------------------------------------------------------------------- known
# The house reshape (issue 14) ended with no violation left. Keep it that way: never add an entry to make a new
# import pass; fix the import. (The set stays so `--list` can show a diff while a reshape is under way.)
KNOWN_VIOLATIONS: set[Violation] = set()


# ------------------------------------------------------------------------------------------------- tests


def test_the_layer_rules_hold():
    problems = compare(check(collect(PROJECT_ROOTS)), KNOWN_VIOLATIONS)
    assert not problems, "\n" + problems


def _listing(found: dict[Violation, str]) -> str:
    lines = [found[v] for v in sorted(found)]
    lines.append(f"\n{len(found)} violation(s); as a KNOWN_VIOLATIONS block:\nKNOWN_VIOLATIONS: set[Violation] = {{")
    lines.extend(f"    {v!r}," for v in sorted(found))
    lines.append("}")
    return "\n".join(lines)


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args or args[0] != "--list" or len(args) > 2:
        sys.exit("usage: python3 tests/unit/test_layers.py --list [REPO]   (REPO: another checkout, default this one)")
    repo = Path(args[1]).resolve() if len(args) == 2 else REPO
    current = check(collect({"roce_wizard": repo / "roce_wizard", "roce_wizard_checks": repo / "checks"}, base=repo))
    print(_listing(current))
    diff = compare(current, KNOWN_VIOLATIONS)
    print("\n" + (diff or "matches KNOWN_VIOLATIONS exactly"))
    sys.exit(1 if diff else 0)
