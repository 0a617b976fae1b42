"""`roce-wizard lab up|down|faults|status`: the practice lab, a typer sub-app."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from roce_wizard.cli.base import _err
from roce_wizard.console import make_console
from roce_wizard.model import ExitCode

lab_app = typer.Typer(
    name="lab",
    help="The practice lab: simulated ESXi hosts and guests (and switches, vCenter, BMCs) on 127.0.0.1.",
    no_args_is_help=True,
    rich_markup_mode=None,
)



def _lab_dir(directory: Path | None) -> Path:
    from roce_wizard.lab.control import latest_lab_dir  # noqa: PLC0415

    if directory is not None:
        return directory
    found = latest_lab_dir()
    if found is None:
        raise _err("no lab found under the state directory; pass --dir DIR (as `lab up` printed it)")
    return found


@lab_app.command("up")
def lab_up(
    hosts: Annotated[int | None, typer.Option(help="ESXi hosts, each with a compute VM and its guest (default 2; "
                                              "0 with --baremetal: no ESXi, no vCenter).", min=0, max=4096)] = None,
    baremetal: Annotated[int | None, typer.Option(help="Bare-metal Linux nodes node-01… (alone: a bare-metal-only "
                                                  "lab; check it with --playbook baremetal).", min=0, max=4096)] = None,
    switch: Annotated[str | None, typer.Option(help="Switch vendor: eos, onyx, os10 or nvue (default eos).")] = None,
    scenario: Annotated[str, typer.Option(help="healthy, fresh, or a scenario YAML file.")] = "healthy",
    fault: Annotated[list[str] | None, typer.Option("--fault", help="Inject CODE[@TARGET] (repeatable), e.g. RW208@esx-02.")] = None,
    directory: Annotated[Path | None, typer.Option("--dir", help="Lab directory (default: a new one under the state dir).")] = None,
    detach: Annotated[bool, typer.Option("--detach", help="Run in the background; stop with `roce-wizard lab down --dir DIR`.")] = False,
    reboot_delay: Annotated[float | None, typer.Option(help="Seconds a rebooting target stays unreachable.", min=0)] = None,
    command_delay: Annotated[float, typer.Option(help="Artificial delay per SSH command, seconds.", min=0)] = 0.0,
    detached_child: Annotated[bool, typer.Option("--detached-child", hidden=True)] = False,
) -> None:
    """Start the practice lab and serve it until Ctrl+C (or `lab down` with --detach).

    Everything listens on 127.0.0.1 with ephemeral ports; DIR gets inventory.yaml, known_hosts and
    the client key, so `roce-wizard doctor -i DIR/inventory.yaml` runs against it unchanged."""
    from roce_wizard.lab.control import LabError, LabSpec, new_lab_dir, run_foreground  # noqa: PLC0415
    from roce_wizard.lab.control import detach as detach_lab  # noqa: PLC0415
    from roce_wizard.lab.faults import FaultError  # noqa: PLC0415
    from roce_wizard.lab.scenarios import ScenarioError  # noqa: PLC0415

    if switch is not None and switch not in ("eos", "onyx", "os10", "nvue"):
        raise _err(f"--switch {switch}: expected eos, onyx, os10 or nvue")
    if scenario not in ("healthy", "fresh") and not Path(scenario).is_file():
        raise _err(f"--scenario {scenario}: expected healthy, fresh or a scenario file (no such file)")
    spec = LabSpec(scenario=scenario, hosts=hosts, baremetal=baremetal, switch=switch, faults=list(fault or []),
                   reboot_delay_s=reboot_delay, command_delay_s=command_delay)
    try:
        spec.build()  # usage errors (bad scenario file, unknown fault or target) before anything starts
    except (ScenarioError, FaultError, ValueError) as exc:
        raise _err(str(exc)) from None
    lab_dir = (directory or new_lab_dir()).resolve()
    if detach:
        argv = ["--scenario", str(Path(scenario).resolve()) if scenario not in ("healthy", "fresh") else scenario,
                "--command-delay", str(command_delay)]
        if hosts is not None:
            argv += ["--hosts", str(hosts)]
        if baremetal is not None:
            argv += ["--baremetal", str(baremetal)]
        if switch is not None:
            argv += ["--switch", switch]
        if reboot_delay is not None:
            argv += ["--reboot-delay", str(reboot_delay)]
        for f in fault or []:
            argv += ["--fault", f]
        try:
            state = detach_lab(argv, lab_dir)
        except LabError as exc:
            raise _err(str(exc), ExitCode.FAILED) from None
        targets = state.get("targets", [])
        kinds: dict[str, int] = {}
        for t in targets:
            kinds[t.get("kind", "?")] = kinds.get(t.get("kind", "?"), 0) + 1
        typer.echo(f"roce-wizard lab: running in the background (pid {state.get('pid')}), scenario "
                   f"{state.get('scenario')}, " + ", ".join(f"{n} {k}" for k, n in kinds.items()))
        typer.echo(f"  directory:   {lab_dir}")
        typer.echo(f"  log:         {lab_dir / 'lab.log'}")
        for note in state.get("notes", []):
            typer.echo(f"  note:        {note}")
        doctor = f"roce-wizard doctor -i {lab_dir / 'inventory.yaml'}"
        if kinds and not kinds.get("esxi"):  # bare metal only: the baremetal playbook judges it
            doctor += " --playbook baremetal"
        if (lab_dir / "lab.env").exists():  # the switch/vCenter/BMC passwords the inventory references
            typer.echo(f"  credentials: {lab_dir / 'lab.env'} (--env-file, or set -a; . {lab_dir / 'lab.env'}; set +a)")
            doctor += f" --env-file {lab_dir / 'lab.env'}"
        typer.echo(f"  run doctor:  {doctor}")
        typer.echo(f"  status:      roce-wizard lab status --dir {lab_dir}")
        typer.echo(f"  stop:        roce-wizard lab down --dir {lab_dir}")
        raise typer.Exit(0)

    def echo(text: str) -> None:
        typer.echo(text)
        sys.stdout.flush()

    try:
        code = run_foreground(spec, lab_dir, echo=echo, detached=detached_child)
    except (ScenarioError, FaultError) as exc:
        raise _err(str(exc)) from None
    except OSError as exc:
        raise _err(f"cannot start the lab: {exc}", ExitCode.FAILED) from None
    raise typer.Exit(code)


@lab_app.command("down")
def lab_down(
    directory: Annotated[Path | None, typer.Option("--dir", help="Lab directory (default: the latest lab).")] = None,
) -> None:
    """Stop a lab started with `lab up --detach` (SIGTERM, wait for a clean shutdown)."""
    from roce_wizard.lab.control import LabError, stop_lab  # noqa: PLC0415

    lab_dir = _lab_dir(directory)
    try:
        pid = stop_lab(lab_dir)
    except LabError as exc:
        raise _err(str(exc)) from None
    typer.echo(f"roce-wizard lab: stopped (pid {pid}) in {lab_dir}")


@lab_app.command("faults")
def lab_faults(as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list.")] = False) -> None:
    """Every fault the lab can inject, named by the check that detects it (for `lab up --fault CODE[@TARGET]`)."""
    from roce_wizard.lab.faults import registry  # noqa: PLC0415

    table = registry()
    if as_json:
        sys.stdout.write(json.dumps([{"code": f.code, "kind": f.kind, "description": f.description}
                                     for f in table.values()], indent=2) + "\n")
        return
    console = make_console()
    for fault in table.values():
        console.print(f"{fault.code}  {fault.kind:<8} {fault.description}", highlight=False, soft_wrap=True)


@lab_app.command("status")
def lab_status(
    directory: Annotated[Path | None, typer.Option("--dir", help="Lab directory (default: the latest lab).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print state.json (plus `running`).")] = False,
) -> None:
    """Per target: kind, state (up, down, rebooting, refusing), boot count, injected faults."""
    from rich.table import Table  # noqa: PLC0415

    from roce_wizard.lab.control import LabError, status_of  # noqa: PLC0415

    lab_dir = _lab_dir(directory)
    try:
        state = status_of(lab_dir)
    except LabError as exc:
        raise _err(str(exc)) from None
    if as_json:
        sys.stdout.write(json.dumps(state, indent=2) + "\n")
        raise typer.Exit(0 if state["running"] else 3)
    console = make_console()
    running = f"running (pid {state.get('pid')})" if state["running"] else "[red]not running[/]"
    console.print(f"lab {lab_dir}: {running}, scenario {state.get('scenario')}", highlight=False)
    table = Table("target", "kind", "state", "port", "boots", "faults", box=None, pad_edge=False)
    for row in state.get("targets", []):
        st = row.get("state", "?") if state["running"] else "stopped"
        style = {"up": "green", "rebooting": "yellow", "refusing": "red", "down": "red"}.get(st, "dim")
        table.add_row(str(row.get("name")), str(row.get("kind")), f"[{style}]{st}[/]", str(row.get("port", "")),
                      str(row.get("boot_count", "")), ", ".join(row.get("faults") or []) or "-")
    console.print(table)
    for note in state.get("notes", []):
        console.print(f"note: {note}", highlight=False)
    raise typer.Exit(0 if state["running"] else 3)

