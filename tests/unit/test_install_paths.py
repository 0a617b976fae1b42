"""The package as users install it: a non-editable wheel, `pipx install .`, `uv tool install .`.

tests/unit/test_dependencies.py checks what the wheel holds (every module and data file) and that every
import is declared; .ci/run installs it with its dependencies from the index and runs the demo. Here
the installed copy is RUN, from a directory outside the checkout: the check catalog, `explain`, and a
whole doctor run (playbooks, checks, parsers over the recorded sample cluster), which must answer
exactly as the source tree does; and the files the code opens at run time (the lab's vCenter
simulator's Go sources, the wizard's stylesheet, the playbooks) are found where the installed code
looks for them.

The wheel test needs no network: the venv gets the wheel with --no-deps and sees the third-party
packages of the running interpreter through a .pth line (that directory's own .pth files, the
editable install's among them, are not executed that way, so only the venv's roce_wizard can be
imported; the test checks that too). pipx and uv resolve the dependencies themselves, from the
package index: those two tests run where pipx / uv are on PATH and skip elsewhere.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

from roce_wizard.catalog import load_catalog
from tests.unit.test_dependencies import build_wheel, clean_source

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sample-cluster"
DOCTOR = ["doctor", "-i", str(SAMPLE / "inventory.yaml"), "--replay", str(SAMPLE / "recordings.yaml"), "--json"]
PROBE_FILES = """\
import json, roce_wizard, roce_wizard_checks
from roce_wizard.lab.vcenter.config import VCSIM_SOURCE
from roce_wizard.playbook import playbooks_dir
from roce_wizard.catalog import builtin_checks_dir
import roce_wizard.tui.app as tui
from pathlib import Path
print(json.dumps({
    "roce_wizard": roce_wizard.__file__, "roce_wizard_checks": roce_wizard_checks.__file__,
    "vcsim": sorted(p.name for p in VCSIM_SOURCE.iterdir()),
    "playbooks": sorted(p.name for p in playbooks_dir().glob("*.yaml")),
    "checks_dir": str(builtin_checks_dir()),
    "tcss": (Path(tui.__file__).parent / tui.WizardApp.CSS_PATH).is_file(),
}))
"""


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, **extra}


def _run(cmd: list[str], cwd: Path, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=_env(**extra), timeout=600)


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    return clean_source(tmp_path_factory.mktemp("source"))


@pytest.fixture(scope="module")
def outside(tmp_path_factory) -> Path:
    """A working directory with no checkout around it (and a state dir of its own for the run log)."""
    return tmp_path_factory.mktemp("elsewhere")


@pytest.fixture(scope="module")
def venv(tmp_path_factory, source) -> Path:
    wheel = build_wheel(source, tmp_path_factory.mktemp("wheel"))
    env_dir = tmp_path_factory.mktemp("venv")
    made = _run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], env_dir)
    assert made.returncode == 0, made.stderr
    python = env_dir / "bin" / "python"
    purelib = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                        env_dir).stdout.strip())
    (purelib / "_third_party.pth").write_text("\n".join(site.getsitepackages()) + "\n", encoding="utf-8")
    installed = _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                      "--quiet", str(wheel)], env_dir)
    assert installed.returncode == 0, installed.stderr
    return env_dir


def _catalog_codes() -> list[str]:
    return list(load_catalog([]))


def _works(program: Path, where: Path) -> None:
    """`checks` lists the catalog, `explain RW208` prints its documentation, from `where`."""
    listed = _run([str(program), "checks"], where, ROCE_WIZARD_STATE_DIR=str(where / "state"))
    assert listed.returncode == 0, listed.stderr
    assert re.findall(r"^(RW\d{3})  ", listed.stdout, re.MULTILINE) == _catalog_codes()
    explained = _run([str(program), "explain", "RW208"], where, ROCE_WIZARD_STATE_DIR=str(where / "state"))
    assert explained.returncode == 0, explained.stderr
    assert explained.stdout.startswith("RW208 num-vfs-covers-max-vfs — NUM_OF_VFS covers max_vfs\n")
    assert "How to fix by hand" in explained.stdout and "mlxconfig" in explained.stdout


def test_the_installed_wheel_runs_outside_the_checkout(venv, outside):
    _works(venv / "bin" / "roce-wizard", outside)


def test_the_installed_wheel_finds_its_data_files(venv, outside):
    run = _run([str(venv / "bin" / "python"), "-c", PROBE_FILES], outside)
    assert run.returncode == 0, run.stderr
    found = json.loads(run.stdout)
    for module in ("roce_wizard", "roce_wizard_checks"):  # not the checkout's (editable) copy
        assert Path(found[module]).is_relative_to(venv), found[module]
    assert Path(found["checks_dir"]).is_relative_to(venv)
    assert {"main.go", "go.mod", "go.sum"} <= set(found["vcsim"])
    assert found["playbooks"] == sorted(p.name for p in (ROOT / "playbooks").glob("*.yaml"))
    assert found["tcss"] is True


def test_the_installed_doctor_answers_as_the_source_tree(venv, outside):
    installed = _run([str(venv / "bin" / "roce-wizard", ), *DOCTOR], outside,
                     ROCE_WIZARD_STATE_DIR=str(outside / "state-installed"))
    source_tree = _run([sys.executable, "-m", "roce_wizard.cli", *DOCTOR], ROOT, PYTHONPATH=str(ROOT),
                       ROCE_WIZARD_STATE_DIR=str(outside / "state-source"))
    assert (installed.returncode, source_tree.returncode) == (1, 1), installed.stderr + source_tree.stderr
    ours, theirs = json.loads(installed.stdout), json.loads(source_tree.stdout)
    assert ours["results"] == theirs["results"] and len(ours["results"]) > 100
    drop = ("duration_s", "run_dir")
    assert {k: v for k, v in ours["summary"].items() if k not in drop} == {
        k: v for k, v in theirs["summary"].items() if k not in drop}


@pytest.mark.skipif(shutil.which("pipx") is None, reason="pipx is not on PATH (pip install pipx)")
def test_pipx_install(source, tmp_path):
    home = tmp_path / "pipx"
    env = {"PIPX_HOME": str(home / "home"), "PIPX_BIN_DIR": str(home / "bin"), "PIPX_MAN_DIR": str(home / "man")}
    done = _run(["pipx", "install", str(source)], tmp_path, **env)
    assert done.returncode == 0, done.stdout + done.stderr
    _works(home / "bin" / "roce-wizard", tmp_path)


@pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not on PATH (pip install uv)")
def test_uv_tool_install(source, tmp_path):
    env = {"UV_TOOL_DIR": str(tmp_path / "uv" / "tools"), "UV_TOOL_BIN_DIR": str(tmp_path / "uv" / "bin")}
    done = _run(["uv", "tool", "install", str(source)], tmp_path, **env)
    assert done.returncode == 0, done.stdout + done.stderr
    _works(tmp_path / "uv" / "bin" / "roce-wizard", tmp_path)
