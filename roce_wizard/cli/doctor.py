"""`roce-wizard doctor`: run the checks and report."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from roce_wizard.cli.base import _err, _setup, app
from roce_wizard.session import live_transports
from roce_wizard.textsafe import printable


@app.command()
def doctor(
    inventory: Annotated[Path, typer.Option("-i", "--inventory", help="Inventory YAML.")] = Path("inventory.yaml"),
    playbook: Annotated[str, typer.Option(help="vsphere-sriov, baremetal, or a playbook file.")] = "vsphere-sriov",
    select_: Annotated[list[str] | None, typer.Option("--select", help="Codes, code prefixes or slugs (comma list).")] = None,
    skip: Annotated[list[str] | None, typer.Option("--skip", help="Codes, code prefixes or slugs to leave out.")] = None,
    stage: Annotated[list[str] | None, typer.Option("--stage", help="Only these stages (comma list).")] = None,
    host: Annotated[list[str] | None, typer.Option("--host", help="Only these targets (names or globs).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON result (schema version 1).")] = False,
    verbose: Annotated[bool, typer.Option("-v", "--verbose", help="Observed vs expected and the evidence.")] = False,
    since_last: Annotated[bool, typer.Option("--since-last", help="Also show what changed since the previous run.")] = False,
    replay: Annotated[Path | None, typer.Option(help="Answer from recorded outputs (file or run dir), not live hosts.")] = None,
    known_hosts: Annotated[Path | None, typer.Option(help="known_hosts file (default ~/.ssh/known_hosts).")] = None,
    trust_on_first_use: Annotated[bool, typer.Option("--trust-on-first-use", help="Accept and record unknown host keys (changed keys are still refused).")] = False,
    concurrency: Annotated[int, typer.Option(help="Targets worked on at once; also bounds concurrent connects.")] = 32,
    timeout: Annotated[float, typer.Option(help="Per-command timeout, seconds.")] = 60.0,
    connect_timeout: Annotated[float, typer.Option(help="Connect timeout, seconds.")] = 10.0,
    checks_dir: Annotated[list[Path] | None, typer.Option(help="A directory of site checks to load as well.")] = None,
) -> None:
    """Run the checks on every target of the inventory and report, by stage and target."""
    from roce_wizard.engine import Mode, RunSetup, run  # noqa: PLC0415
    from roce_wizard.records.report import render_terminal, to_json_dict  # noqa: PLC0415
    from roce_wizard.records.runlog import RunLog, diff_results, previous_results  # noqa: PLC0415

    setup = _setup(inventory, playbook, select_, skip, stage, host, checks_dir)
    targets, chosen, stage_of, policy = setup.targets, setup.chosen, setup.stage_of, setup.policy
    console = Console(stderr=as_json)
    runlog = RunLog.create(kind="doctor")

    if replay is not None:
        from roce_wizard.transports.replay import ReplayTransport  # noqa: PLC0415

        try:
            transport = ReplayTransport.from_file(replay, max_concurrent_connects=concurrency)
        except (OSError, ValueError) as exc:  # the message names the file already, or it is added here
            raise _err(f"--replay: {exc}" if str(replay) in str(exc) else f"--replay {replay}: {exc}") from None
    else:
        transport = live_transports(
            {t.kind for t in targets}, known_hosts=known_hosts, trust_on_first_use=trust_on_first_use,
            concurrency=concurrency, connect_timeout=connect_timeout, timeout=timeout, run_dir=runlog.path)
    if not targets:
        raise _err(f"no target to check in {inventory}")
    run_setup = RunSetup(targets, chosen, stage_of, policy, lambda: transport, runlog, inventory=inventory,
                         playbook=setup.playbook, concurrency=concurrency, command_timeout=timeout,
                         ledger_facts=replay is None, pending_from_ledger=replay is None)
    report = asyncio.run(run(run_setup, Mode.CHECK)).report
    for used in {id(t): t for t in (transport.values() if isinstance(transport, dict) else [transport])}.values():
        for warning in getattr(used, "warnings", []):  # e.g. TLS verification turned off for a target
            Console(stderr=True).print(f"[yellow]warning:[/] {printable(warning)}", highlight=False, soft_wrap=True)
    changes = None
    result_dict = to_json_dict(report)
    if since_last:
        previous = previous_results(exclude=runlog.path)
        changes = diff_results(previous[1], result_dict) if previous else []
        result_dict["changes"] = changes
    runlog.write_results(result_dict)
    runlog.close()
    if as_json:
        sys.stdout.write(json.dumps(result_dict, indent=2, ensure_ascii=False) + "\n")
    else:
        render_terminal(report, console, verbose=verbose, changes=changes)
    raise typer.Exit(int(report.exit_code))

