"""`--env-file FILE` (issue 18 item 6): docker compose's .env rules, and the CLI's errors (exit 2 naming
FILE:LINE, the value never shown) on every command that reads an inventory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from roce_wizard.envfile import EnvFileError, parse_env_text

ROOT = Path(__file__).resolve().parents[2]

TEXT = """\
# a comment
ROCE_LAB_BMC_PASSWORD='s3cr$t #1'

export ROCE_LAB_SWITCH_PASSWORD=plain value # inline comment
  VC_PW="say \\"hi\\" \\\\ $HOME"
EMPTY=
HASH=a#b
"""


def test_compose_rules():
    assert parse_env_text(TEXT, "x.env") == {
        "ROCE_LAB_BMC_PASSWORD": "s3cr$t #1",  # single quotes: literal, no expansion
        "ROCE_LAB_SWITCH_PASSWORD": "plain value",  # `export ` prefix; ` #` starts a comment
        "VC_PW": 'say "hi" \\ $HOME',  # double quotes: \" and \\ unescaped, $HOME left as written
        "EMPTY": "",
        "HASH": "a#b",  # a # inside a word is part of the value
    }


@pytest.mark.parametrize(("text", "line", "why"), [
    ("A=1\nno equals sign here\n", 2, "expected KEY=VALUE"),
    ("A=1\n\n1BAD=x\n", 3, "variable name"),
    ("PW='unterminated\n", 1, "not closed"),
    ("PW='x' y\n", 1, "after the closing"),
])
def test_malformed_lines_name_the_line(text, line, why):
    with pytest.raises(EnvFileError) as err:
        parse_env_text(text, "site.env")
    assert str(err.value).startswith(f"site.env:{line}: ") and why in str(err.value)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ROCE_WIZARD_STATE_DIR": str(cwd / "state")}
    return subprocess.run([sys.executable, "-m", "roce_wizard.cli", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=120)


@pytest.mark.parametrize("command", [["doctor"], ["fix", "--dry-run"], ["export", "--list"], []],
                         ids=["doctor", "fix", "export", "wizard"])
def test_malformed_env_file_is_a_usage_error_naming_file_and_line(tmp_path, command):
    bad = tmp_path / "site.env"
    bad.write_text("# creds\nESXI_PASSWORD=fine\nhunter2-without-a-key\n", encoding="utf-8")
    out = _cli(*command, "--env-file", str(bad), "-i", str(tmp_path / "none.yaml"), cwd=tmp_path)
    assert out.returncode == 2, out.stdout + out.stderr
    assert f"{bad}:3: expected KEY=VALUE" in out.stderr
    assert "hunter2" not in out.stdout + out.stderr and "fine" not in out.stdout + out.stderr


def test_missing_env_file_is_a_usage_error(tmp_path):
    out = _cli("doctor", "--env-file", str(tmp_path / "nope.env"), cwd=tmp_path)
    assert out.returncode == 2 and f"{tmp_path / 'nope.env'}: no such file" in out.stderr
