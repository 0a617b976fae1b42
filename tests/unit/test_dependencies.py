"""What the code imports is what the package declares, and what the wheel ships is what the code reads.

On a clean Python, `pip install .` installs only the declared dependencies: a module the code imports
that arrives only on the developer's machine (httpx, for the Redfish transport) crashes the README's
first command there. And a file the code reads at run time (a check module, a playbook, the lab's Go
sources, the wizard's stylesheet) that is not package data is missing from every installed copy.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OWN = {"roce_wizard", "roce_wizard_checks", "checks", "tests"}  # the project's own packages


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_names(requirements: list[str]) -> set[str]:
    names = set()
    for req in requirements:
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
        assert match, f"unreadable requirement {req!r} in pyproject.toml"
        names.add(_canonical(match.group(1)))
    return names


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def declared(*extras: str) -> set[str]:
    """Distribution names pyproject.toml declares: the runtime dependencies, plus the given extras."""
    project = _pyproject()["project"]
    names = _requirement_names(project.get("dependencies", []))
    for extra in extras:
        names |= _requirement_names(project.get("optional-dependencies", {}).get(extra, []))
    return names


def imported_modules(*dirs: str) -> dict[str, set[str]]:
    """Top-level module name -> files importing it, for every absolute import in every .py under `dirs`
    (imports inside functions, try blocks and `if TYPE_CHECKING:` included: ast sees them all)."""
    found: dict[str, set[str]] = {}
    for d in dirs:
        for path in sorted((ROOT / d).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    found.setdefault(name.split(".")[0], set()).add(str(path.relative_to(ROOT)))
    return found


def undeclared(dirs: tuple[str, ...], allowed: set[str]) -> list[str]:
    """One line per third-party module imported under `dirs` whose distribution is not in `allowed`."""
    distributions = importlib.metadata.packages_distributions()
    problems = []
    for module, files in sorted(imported_modules(*dirs).items()):
        if module in sys.stdlib_module_names or module in OWN:
            continue
        dists = {_canonical(d) for d in distributions.get(module, [])}
        where = ", ".join(sorted(files)[:3]) + (" …" if len(files) > 3 else "")
        if not dists:
            problems.append(f"{module} (imported by {where}) belongs to no installed distribution")
        elif not dists & allowed:
            problems.append(f"{module} (imported by {where}) comes from {'/'.join(sorted(dists))}, "
                            "which pyproject.toml does not declare")
    return problems


def test_undeclared_is_not_blind():
    """The scan itself: a module the project imports and does not declare is reported."""
    assert any(line.startswith("httpx ") for line in undeclared(("roce_wizard",), declared() - {"httpx"}))


def test_package_imports_are_declared_dependencies():
    problems = undeclared(("roce_wizard", "checks"), declared())
    assert not problems, "add to [project].dependencies in pyproject.toml:\n" + "\n".join(problems)


def test_test_imports_are_declared_with_the_test_extra():
    problems = undeclared(("tests",), declared("test"))
    assert not problems, "add to [project.optional-dependencies].test in pyproject.toml:\n" + "\n".join(problems)


# ---------------------------------------------------------------------------- the wheel


def _expected_in_wheel() -> dict[str, str]:
    """Wheel path -> source path of every file the code may read at run time: every file under the
    packages' directories (modules and data alike), mapped through [tool.setuptools.package-dir]."""
    package_dir = _pyproject()["tool"]["setuptools"].get("package-dir", {})
    sources = {"roce_wizard": "roce_wizard"} | {pkg.replace(".", "/"): src for pkg, src in package_dir.items()}
    expected = {}
    for dest, src in sources.items():
        for path in (ROOT / src).rglob("*"):
            if not path.is_file() or "__pycache__" in path.parts or path.suffix in (".pyc", ".pyo"):
                continue
            rel = path.relative_to(ROOT / src).as_posix()
            expected[f"{dest}/{rel}"] = f"{src}/{rel}"
    return expected


def clean_source(source: Path) -> Path:
    """A copy of what a fresh clone builds from, in `source`: setuptools reuses a checkout's build/ and
    *.egg-info/SOURCES.txt, which would ship files a fresh clone's wheel lacks (and a build would write
    into the checkout)."""
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    junk = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "dist")
    for src in {"roce_wizard", *_pyproject()["tool"]["setuptools"].get("package-dir", {}).values()}:
        shutil.copytree(ROOT / src, source / src, ignore=junk)
    return source


def build_wheel(source: Path, out: Path) -> Path:
    """`pip wheel --no-deps` of `source` into `out`: the path of the one wheel."""
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet",
         "--disable-pip-version-check", "-w", str(out), str(source)],
        capture_output=True, text=True, timeout=300, cwd=out)
    assert build.returncode == 0, f"pip wheel failed:\n{build.stdout}\n{build.stderr}"
    wheels = list(out.glob("roce_wizard-*.whl"))
    assert len(wheels) == 1, f"expected one wheel in {out}: {wheels}"
    return wheels[0]


@pytest.fixture(scope="module")
def wheel_files(tmp_path_factory) -> set[str]:
    wheel = build_wheel(clean_source(tmp_path_factory.mktemp("source")), tmp_path_factory.mktemp("wheel"))
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def test_wheel_ships_every_module_and_data_file(wheel_files):
    expected = _expected_in_wheel()
    # the parts named in the issue are really among them (the mapping above did not lose a directory)
    assert "roce_wizard/lab/vcsim/main.go" in expected and "roce_wizard/lab/vcsim/go.sum" in expected
    assert "roce_wizard/_playbooks/vsphere-sriov.yaml" in expected
    stages = {p.split("/")[1] for p in expected if p.startswith("roce_wizard_checks/") and p.count("/") == 2}
    assert {"preflight", "bios", "esxi", "vsphere", "guest", "switch", "validate"} <= stages
    missing = sorted(f"{src} (as {dest})" for dest, src in expected.items() if dest not in wheel_files)
    assert not missing, ("not in the wheel: add the package to [tool.setuptools].packages or the file to "
                         "[tool.setuptools.package-data]:\n" + "\n".join(missing))
