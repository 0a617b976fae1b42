"""Shell completion of check codes and slugs (roce_wizard/completion.py).

`complete_codes` is tested directly against the real catalog, then through typer's completion protocol
in a subprocess: a small typer app named `roce-wizard` that declares `--select` and `explain`'s argument
with `autocompletion=complete_codes`, exactly as the CLI does, driven by the bash function
`--show-completion bash` prints (a real bash, COMP_WORDS/COMP_CWORD as readline sets them) and by the
zsh protocol (`_TYPER_COMPLETE_ARGS`), which carries the help texts.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from roce_wizard.catalog import load_catalog
from roce_wizard.completion import builtin_checks, complete_codes

ROOT = Path(__file__).resolve().parents[2]

TINY_APP = '''\
from typing import Annotated

import typer

from roce_wizard.completion import complete_codes

app = typer.Typer(name="roce-wizard", add_completion=True)


@app.command()
def doctor(
    select_: Annotated[list[str] | None, typer.Option("--select", autocompletion=complete_codes)] = None,
    skip: Annotated[list[str] | None, typer.Option("--skip", autocompletion=complete_codes)] = None,
) -> None:
    pass


@app.command()
def explain(code_or_slug: Annotated[str, typer.Argument(autocompletion=complete_codes)]) -> None:
    pass


app(prog_name="roce-wizard")
'''


@pytest.fixture(scope="module")
def catalog() -> list[tuple[str, str, str]]:
    return sorted((c.code, c.meta.slug, c.meta.title) for c in load_catalog([]).values())


def test_read_without_importing_agrees_with_the_catalog(catalog):
    assert list(builtin_checks()) == catalog


def test_code_prefixes(catalog):
    got = complete_codes("RW2")
    assert [value for value, _ in got] == [code for code, _, _ in catalog if code.startswith("RW2")]
    assert ("RW208", "num-vfs-covers-max-vfs: NUM_OF_VFS covers max_vfs") in got
    assert complete_codes("rw20") == complete_codes("RW20")
    assert [value for value, _ in complete_codes("")] == [code for code, _, _ in catalog]  # codes only


def test_slugs_with_their_code_as_help(catalog):
    got = complete_codes("pfc")
    assert ("pfc-on-roce-priority", "RW209: PFC on the RoCE priority (nmlx5_core)") in got
    assert {value for value, _ in got} == {slug for _, slug, _ in catalog if slug.startswith("pfc")}
    assert complete_codes("no-such-check") == []


def test_the_last_item_of_a_comma_list(catalog):
    got = [value for value, _ in complete_codes("RW201,RW20")]
    assert got == [f"RW201,{code}" for code, _, _ in catalog if code.startswith("RW20") and code != "RW201"]
    got = [value for value, _ in complete_codes("RW201, mft")]
    assert got == []  # mft-installed IS RW201: not offered twice
    assert [value for value, _ in complete_codes("RW001, pfc-on")] == ["RW001,pfc-on-roce-priority"]


def _tiny_app(tmp_path: Path) -> Path:
    """An executable `roce-wizard` on a PATH of its own: the tiny app above."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    program = bin_dir / "roce-wizard"
    program.write_text(f"#!{sys.executable}\n{TINY_APP}", encoding="utf-8")
    program.chmod(0o755)
    return bin_dir


def _env(bin_dir: Path, **extra: str) -> dict[str, str]:
    # typer detects the calling shell by walking up the process tree (shellingham) unless told not to; under a
    # test runner the ancestors are python processes, so the shell is named on the command line instead
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(ROOT),
            "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1", **extra}


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completes_through_the_script_typer_prints(tmp_path):
    bin_dir = _tiny_app(tmp_path)
    shown = subprocess.run(["roce-wizard", "--show-completion", "bash"], capture_output=True, text=True,
                           env=_env(bin_dir), timeout=60)
    assert shown.returncode == 0 and "complete -o default -F _roce_wizard_completion roce-wizard" in shown.stdout
    (tmp_path / "completion.bash").write_text(shown.stdout, encoding="utf-8")
    # what readline does on <Tab>: the words so far, the index of the one under the cursor, then the function
    driver = ('source "$1"; COMP_WORDS=(roce-wizard doctor --select "$2"); COMP_CWORD=3; '
              '_roce_wizard_completion roce-wizard; printf "%s\\n" "${COMPREPLY[@]}"')
    for typed, expected in (("RW20", [f"RW20{n}" for n in range(1, 10)]),
                            ("RW201,RW20", [f"RW201,RW20{n}" for n in range(2, 10)]),
                            ("pfc-on", ["pfc-on-roce-priority"])):
        run = subprocess.run(["bash", "-c", driver, "bash", str(tmp_path / "completion.bash"), typed],
                             capture_output=True, text=True, env=_env(bin_dir), timeout=60)
        assert run.returncode == 0, run.stderr
        assert run.stdout.split() == expected, typed
        assert run.stderr == ""


def test_zsh_protocol_carries_the_titles(tmp_path):
    bin_dir = _tiny_app(tmp_path)
    run = subprocess.run(["roce-wizard"], capture_output=True, text=True, timeout=60, env=_env(
        bin_dir, _ROCE_WIZARD_COMPLETE="complete_zsh", _TYPER_COMPLETE_ARGS="roce-wizard explain RW20"))
    assert run.returncode == 0, run.stderr
    assert '"RW208":"num-vfs-covers-max-vfs\\\\: NUM_OF_VFS covers max_vfs"' in run.stdout
    run = subprocess.run(["roce-wizard"], capture_output=True, text=True, timeout=60, env=_env(
        bin_dir, _ROCE_WIZARD_COMPLETE="complete_zsh", _TYPER_COMPLETE_ARGS="roce-wizard doctor --skip RW20"))
    assert '"RW209":"pfc-on-roce-priority' in run.stdout and "RW301" not in run.stdout
