"""The `--env-file FILE` option of every command that reads an inventory (doctor, fix, export, the wizard).

It is a typer option with a callback, so the file is read while the command line is parsed, before the
command's body reads the inventory and resolves its `{env: NAME}` credentials. A missing or malformed
file is a usage error (exit 2) naming FILE:LINE; the values are never printed or logged."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from roce_wizard.cli.base import _err
from roce_wizard.envfile import EnvFileError, apply_env_file


def _load(value: Path | None) -> Path | None:
    if value is not None:
        try:
            apply_env_file(value)
        except EnvFileError as exc:
            raise _err(f"--env-file {exc}") from None
    return value


EnvFile = Annotated[Path | None, typer.Option(
    "--env-file", metavar="FILE", callback=_load,
    help="Read KEY=VALUE lines (docker compose .env rules, no expansion) into the environment first: the "
         "credentials the inventory references, e.g. a lab's DIR/lab.env.")]
