"""No command: the wizard; `roce-wizard demo`: the practice lab and the wizard on it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from roce_wizard.cli.base import _err, app
from roce_wizard.cli.doctor import doctor
from roce_wizard.cli.envfile_option import EnvFile
from roce_wizard.console import make_console
from roce_wizard.model import ExitCode
from roce_wizard.records.wording import plural
from roce_wizard.session import SetupError


@app.callback(invoke_without_command=True)
def wizard(
    ctx: typer.Context,
    inventory: Annotated[Path, typer.Option("-i", "--inventory", help="Inventory YAML (for the wizard).")] = Path("inventory.yaml"),
    playbook: Annotated[str, typer.Option(help="vsphere-sriov, baremetal, or a playbook file.")] = "vsphere-sriov",
    replay: Annotated[Path | None, typer.Option(help="Answer from recorded outputs (file or run dir), not live hosts.")] = None,
    known_hosts: Annotated[Path | None, typer.Option(help="known_hosts file (default ~/.ssh/known_hosts).")] = None,
    env_file: EnvFile = None,
) -> None:
    """With no command: the wizard on the inventory (checks, one-click fixes, reboots)."""
    if ctx.invoked_subcommand is not None:
        return
    if not inventory.exists():
        raise _err(f"{inventory}: no such inventory. `roce-wizard demo` opens the wizard on the practice lab; "
                   "`roce-wizard --help` lists the commands")
    from roce_wizard.tui.app import make_app  # noqa: PLC0415

    try:
        wizard_app = make_app(inventory, playbook=playbook, replay=replay, known_hosts=known_hosts)
    except SetupError as exc:
        raise _err(str(exc)) from None
    raise typer.Exit(wizard_app.run() or 0)


@app.command()
def demo(
    hosts: Annotated[int | None, typer.Option(help="ESXi hosts in the demo lab (default 4); with --baremetal the "
                                              "bare-metal nodes (default 2).", min=1, max=64)] = None,
    baremetal: Annotated[bool, typer.Option("--baremetal", help="Bare-metal Linux nodes and their switch instead of "
                                            "ESXi hosts (no vCenter); the wizard uses the baremetal playbook.")] = False,
    no_tui: Annotated[bool, typer.Option("--no-tui", help="Run doctor on the lab and print its report "
                                         "instead of opening the wizard (for scripts).")] = False,
    reboot_delay: Annotated[float | None, typer.Option(help="Seconds a rebooting lab host stays unreachable "
                                                       "(default: the lab's).", min=0)] = None,
) -> None:
    """Try roce-wizard with no hardware: starts the practice lab (`lab up --scenario fresh --hosts 4`:
    the seed cluster on day 0) in this process and opens the wizard on it; quitting the wizard stops
    the lab. With --no-tui it runs `doctor` on the lab instead and prints every finding."""
    from roce_wizard.lab.control import LabError, LabSpec, background_lab, new_lab_dir  # noqa: PLC0415

    lab_dir = new_lab_dir()
    wizard_code: int | None = None
    console = make_console()
    if baremetal:  # bare metal only: N Linux nodes, their switch, no ESXi and no vCenter (lab up --hosts 0 --baremetal N)
        count = hosts or 2
        spec = LabSpec(scenario="fresh", hosts=0, baremetal=count, reboot_delay_s=reboot_delay)
        what, playbook = plural(count, "bare-metal node"), "baremetal"
    else:
        count = hosts or 4
        spec = LabSpec(scenario="fresh", hosts=count, reboot_delay_s=reboot_delay)
        what, playbook = plural(count, "host"), "vsphere-sriov"
    console.print(f"[bold]roce-wizard demo[/]: starting the practice lab (scenario fresh, {what}) in {lab_dir}",
                  highlight=False)
    try:
        with background_lab(spec, lab_dir) as lab:
            from roce_wizard.lab.server import read_env  # noqa: PLC0415

            os.environ.update(read_env(lab.directory))  # the lab's switch/vCenter/BMC credentials
            if not no_tui:
                from roce_wizard.tui.app import make_app  # noqa: PLC0415

                # the lab's hosts are back within seconds: look at a rebooting one twice a second
                wizard_code = make_app(lab.directory / "inventory.yaml", playbook=playbook,
                                       subtitle=f"practice lab: fresh, {what}", reboot_poll=0.5,
                                       reboot_timeout=300.0).run()
                code = None
            else:
                extra = " --playbook baremetal" if baremetal else ""
                console.print(f"running: roce-wizard doctor -i {lab.directory / 'inventory.yaml'}{extra}\n",
                              highlight=False)
                try:
                    doctor(inventory=lab.directory / "inventory.yaml", playbook=playbook)
                except typer.Exit as done:
                    code = done.exit_code
    except LabError as exc:
        raise _err(str(exc), ExitCode.FAILED) from None
    if code is None:
        console.print("[dim]The practice lab is stopped.[/]", highlight=False)
        raise typer.Exit(wizard_code or 0)  # 130 when Ctrl-C stopped a fix (tui/stopped.py)
    keep = f"--baremetal {count} --hosts 0" if baremetal else f"--hosts {count}"
    console.print(f"\n[dim]doctor exited {code}. The lab is stopped; `roce-wizard lab up --scenario fresh {keep}` "
                  "keeps one running for you to try fixes on.[/]", highlight=False)
    raise typer.Exit(0)

