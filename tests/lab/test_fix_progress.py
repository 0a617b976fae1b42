"""`fix` on a terminal shows the check pass's progress (roce_wizard/cli/progress.py) before its plan, against
the practice lab over SSH; into a pipe, none of it. (The reboot side: tests/unit/test_progress.py.)"""

from __future__ import annotations

import re
import subprocess
import sys

from roce_wizard.lab.control import BackgroundLab
from roce_wizard.lab.scenarios import Scenario, healthy
from tests.unit.test_progress import env_for, plain, through_pty


def test_fix_preview_shows_targets_judged_on_a_terminal_and_not_in_a_pipe(tmp_path):
    background = BackgroundLab(Scenario("healthy", healthy(1)), tmp_path / "lab", services=())
    running = background.start()
    try:
        background.call(running.inject("RW202@esx-01"))  # mst not started: a safe fix to preview
        args = [sys.executable, "-m", "roce_wizard.cli", "fix", "-i", str(tmp_path / "lab" / "inventory.yaml"),
                "--stage", "esxi", "--dry-run"]
        code, out = through_pty(args, env_for(tmp_path / "state"))
        text = plain(out)
        assert code == 0, text
        assert re.search(r"checking.*\b(\d+)/\1 targets judged", text), text  # every target judged
        assert text.index("targets judged") < text.index("Fix plan")  # the bar first, erased, then the plan
        piped = subprocess.run(args, capture_output=True, text=True, env=env_for(tmp_path / "state2"), timeout=120,
                                check=False)
        assert piped.returncode == 0 and "Fix plan" in piped.stdout
        assert "targets judged" not in piped.stdout + piped.stderr
    finally:
        background.stop()
