"""Would pasting a displayed fix line into a shell run something? (issue 11, item 1)

`runs_canary(line, tmp)` runs the line through `bash -r` (restricted: no output redirection, no
command with a `/` in its name, so the fix lines' own commands cannot touch the machine) with a PATH
that holds only `touch`, in an empty scratch directory. A payload like `$(touch CANARY)` that the
shell would execute creates the canary file there.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

CANARY = "CANARY"
BASH = shutil.which("bash") or "/bin/bash"


def runs_canary(line: str, tmp: Path) -> bool:
    """Whether pasting `line` would run the payload: True when the canary file appears."""
    work = tmp / "paste"
    shutil.rmtree(work, ignore_errors=True)
    (work / "bin").mkdir(parents=True)
    (work / "bin" / "touch").symlink_to(shutil.which("touch") or "/usr/bin/touch")
    subprocess.run([BASH, "-r", "-c", line], cwd=work, env={"PATH": str(work / "bin")}, capture_output=True,
                   timeout=10, check=False)
    return (work / CANARY).exists()
