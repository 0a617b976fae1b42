"""The typer app every command family registers on, and what the commands share: usage errors
(exit 2), comma lists, the catalog, the setup doctor and fix both read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from roce_wizard.catalog import CatalogError, load_catalog
from roce_wizard.console import make_console
from roce_wizard.model import ExitCode
from roce_wizard.session import Setup, SetupError, load_setup
from roce_wizard.textsafe import printable

app = typer.Typer(
    name="roce-wizard",
    help="Set up and prove lossless RoCE v2 over SR-IOV on vSphere and bare metal. "
         "With no command: the wizard (a terminal UI) on ./inventory.yaml or -i FILE.",
    no_args_is_help=False,  # no command opens the wizard (the callback below)
    add_completion=True,  # --install-completion / --show-completion; check codes complete (completion.py)
    rich_markup_mode=None,
)


def _err(message: str, code: ExitCode = ExitCode.USAGE) -> typer.Exit:
    make_console(stderr=True).print(f"[bold red]error:[/] {printable(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(int(code))


def _split(values: list[str] | None) -> list[str]:
    return [v.strip() for raw in values or [] for v in raw.split(",") if v.strip()]


def _load_checks(checks_dir: list[Path] | None) -> dict[str, Any]:
    try:
        return load_catalog(checks_dir or [])
    except CatalogError as exc:
        raise _err(str(exc)) from None


def _setup(inventory: Path, playbook: str, select_: list[str] | None, skip: list[str] | None,
           stage: list[str] | None, host: list[str] | None, checks_dir: list[Path] | None) -> Setup:
    """Inventory, playbook, catalog and selections as doctor and fix both read them (exit 2 on errors)."""
    try:
        setup = load_setup(inventory, playbook, select_, skip, stage, host, checks_dir)
    except SetupError as exc:
        raise _err(str(exc)) from None
    for warning in setup.warnings:
        make_console(stderr=True).print(f"[yellow]warning:[/] {printable(warning)}", highlight=False, soft_wrap=True)
    return setup

