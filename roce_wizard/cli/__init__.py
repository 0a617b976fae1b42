"""The typer app: `roce-wizard doctor | analyze | explain | checks | lab up|down|status | demo`.

Exit codes (ExitCode): 0 nothing failed (warnings allowed) · 1 a check failed ·
2 usage or inventory error · 3 nothing failed but some checks could not run.

One module per command family (doctor, fix, info, lab, wizard); importing them registers their
commands on `app` in the order `--help` lists them.
"""

from __future__ import annotations

from roce_wizard.cli import doctor as _doctor  # noqa: F401 - registers `doctor`
from roce_wizard.cli import fix as _fix  # noqa: F401 - registers `fix`
from roce_wizard.cli import info as _info  # noqa: F401 - analyze, export, reboots, explain, checks, version
from roce_wizard.cli import wizard as _wizard  # noqa: F401 - the wizard callback and `demo`
from roce_wizard.cli.base import app
from roce_wizard.cli.lab import lab_app

app.add_typer(lab_app, name="lab")


def main() -> None:  # pragma: no cover - console entry
    app()


__all__ = ["app", "main"]
