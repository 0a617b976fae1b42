"""`roce-wizard doctor`: run the checks and report."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from roce_wizard.cli.base import _err, _setup, app
from roce_wizard.cli.envfile_option import EnvFile
from roce_wizard.completion import complete_codes
from roce_wizard.console import make_console
from roce_wizard.session import live_transports
from roce_wizard.textsafe import printable


@app.command()
def doctor(
    inventory: Annotated[Path, typer.Option("-i", "--inventory", help="Inventory YAML.")] = Path("inventory.yaml"),
    env_file: EnvFile = None,
    playbook: Annotated[str | None, typer.Option(help="vsphere-sriov (default), baremetal, or a playbook file "
                                                "(with --local: baremetal, or vsphere-sriov with --guest).")] = None,
    select_: Annotated[list[str] | None, typer.Option("--select", help="Codes, code prefixes or slugs (comma list).",
                                                      autocompletion=complete_codes)] = None,
    skip: Annotated[list[str] | None, typer.Option("--skip", help="Codes, code prefixes or slugs to leave out.",
                                                      autocompletion=complete_codes)] = None,
    stage: Annotated[list[str] | None, typer.Option("--stage", help="Only these stages (comma list).")] = None,
    host: Annotated[list[str] | None, typer.Option("--host", help="Only these targets (names or globs).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON result (schema version 1).")] = False,
    junit_xml_file: Annotated[Path | None, typer.Option("--junit-xml", metavar="FILE", help="Also write the results "
                              "as JUnit XML (Jenkins, GitLab): a test case per check and target.")] = None,
    ctrf_file: Annotated[Path | None, typer.Option("--ctrf", metavar="FILE", help="Also write the results as CTRF "
                         "JSON (Common Test Report Format, ctrf.io).")] = None,
    verbose: Annotated[bool, typer.Option("-v", "--verbose", help="Observed vs expected and the evidence.")] = False,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", "--failures-only", help="Only what did not pass, and the "
                     "summary (a healthy run prints one line).")] = False,
    since_last: Annotated[bool, typer.Option("--since-last", help="Also show what changed since the previous run.")] = False,
    replay: Annotated[Path | None, typer.Option(help="Answer from recorded outputs (file or run dir), not live hosts.")] = None,
    known_hosts: Annotated[Path | None, typer.Option(help="known_hosts file (default ~/.ssh/known_hosts).")] = None,
    trust_on_first_use: Annotated[bool, typer.Option("--trust-on-first-use", help="Accept and record unknown host keys (changed keys are still refused).")] = False,
    concurrency: Annotated[int, typer.Option(help="Targets worked on at once; also bounds concurrent connects.")] = 32,
    timeout: Annotated[float, typer.Option(help="Per-command timeout, seconds.")] = 60.0,
    connect_timeout: Annotated[float, typer.Option(help="Connect timeout, seconds.")] = 10.0,
    checks_dir: Annotated[list[Path] | None, typer.Option(help="A directory of site checks to load as well.")] = None,
    local: Annotated[bool, typer.Option("--local", help="Check this machine itself: run the probes here as "
                     "subprocesses, no SSH and no inventory (run it as the user an inventory would use).")] = False,
    guest: Annotated[bool, typer.Option("--guest", help="With --local: this machine is a VM's guest OS (guest "
                     "checks), not a bare-metal Linux host.")] = False,
    netdev: Annotated[str | None, typer.Option(help="With --local: the RoCE interface (roce.netdev).")] = None,
    rdma_dev: Annotated[str | None, typer.Option(help="With --local: its RDMA device (roce.rdma_dev).")] = None,
    pf_pci: Annotated[str | None, typer.Option(help="With --local: the PF's PCI address (roce.pf_pci).")] = None,
    ip: Annotated[str | None, typer.Option(help="With --local: its RoCE IP address (roce.ip).")] = None,
) -> None:
    """Run the checks on every target of the inventory and report, by stage and target."""
    from roce_wizard.cli.progress import RunProgress  # noqa: PLC0415
    from roce_wizard.engine import Hooks, Mode, RunSetup, run  # noqa: PLC0415
    from roce_wizard.records.report import render_terminal, to_json_dict  # noqa: PLC0415
    from roce_wizard.records.runlog import RunLog, diff_results, previous_results  # noqa: PLC0415

    if local:
        setup, transport = _local(inventory, playbook, select_, skip, stage, host, checks_dir, replay, guest,
                                  netdev=netdev, rdma_dev=rdma_dev, pf_pci=pf_pci, ip=ip, timeout=timeout)
        inventory = Path("doctor --local")
    else:
        if guest or any(v is not None for v in (netdev, rdma_dev, pf_pci, ip)):
            raise _err("--guest, --netdev, --rdma-dev, --pf-pci and --ip go with --local")
        setup = _setup(inventory, playbook or "vsphere-sriov", select_, skip, stage, host, checks_dir)
    targets, chosen, stage_of, policy = setup.targets, setup.chosen, setup.stage_of, setup.policy
    console = make_console(stderr=as_json)
    runlog = RunLog.create(kind="doctor")

    if replay is not None:
        from roce_wizard.transports.replay import ReplayTransport  # noqa: PLC0415

        try:
            transport = ReplayTransport.from_file(replay, max_concurrent_connects=concurrency)
        except (OSError, ValueError) as exc:  # the message names the file already, or it is added here
            raise _err(f"--replay: {exc}" if str(replay) in str(exc) else f"--replay {replay}: {exc}") from None
    elif not local:  # --local: the local transport came with its setup
        transport = live_transports(
            {t.kind for t in targets}, known_hosts=known_hosts, trust_on_first_use=trust_on_first_use,
            concurrency=concurrency, connect_timeout=connect_timeout, timeout=timeout, run_dir=runlog.path)
    if not targets:
        raise _err(f"no target to check in {inventory}")
    run_setup = RunSetup(targets, chosen, stage_of, policy, lambda: transport, runlog, inventory=inventory,
                         playbook=setup.playbook, concurrency=concurrency, command_timeout=timeout,
                         ledger_facts=replay is None, pending_from_ledger=replay is None)
    with RunProgress.for_terminal(as_json) as bar:  # on a terminal only, erased before the report
        report = asyncio.run(run(run_setup, Mode.CHECK, Hooks(on_event=bar.on_event))).report
    for used in {id(t): t for t in (transport.values() if isinstance(transport, dict) else [transport])}.values():
        for warning in getattr(used, "warnings", []):  # e.g. TLS verification turned off for a target
            make_console(stderr=True).print(f"[yellow]warning:[/] {printable(warning)}", highlight=False, soft_wrap=True)
    changes = None
    result_dict = to_json_dict(report)
    if since_last:
        previous = previous_results(exclude=runlog.path)
        changes = diff_results(previous[1], result_dict) if previous else []
        result_dict["changes"] = changes
    runlog.write_results(result_dict)
    runlog.close()
    _write_ci_reports(result_dict, junit_xml_file, ctrf_file)
    if as_json:
        json.dump(result_dict, sys.stdout, indent=2, ensure_ascii=False)  # streamed: no second copy as one string
        sys.stdout.write("\n")
    else:
        render_terminal(report, console, verbose=verbose, changes=changes, quiet=quiet)
        _next_step(console, report, setup, inventory=None if local else inventory, playbook=playbook,
                   selection=(select_, skip, stage, host, checks_dir))
    raise typer.Exit(int(report.exit_code))


def _next_step(console: Any, report: Any, setup: Any, *, inventory: Path | None, playbook: str | None,
               selection: tuple[Any, ...]) -> None:
    """doctor's closing lines: what `fix` (with this run's selection) would fix, what is left by hand, what could
    not run. --local has no `fix`: its failures are all by hand."""
    from rich.text import Text  # noqa: PLC0415

    from roce_wizard.cli.next_step import doctor_lines, fix_command, leftover  # noqa: PLC0415
    from roce_wizard.engine.fixes import plan_fixes  # noqa: PLC0415
    from roce_wizard.model import Safety  # noqa: PLC0415
    from roce_wizard.session import split_list  # noqa: PLC0415

    select_, skip, stage, host, checks_dir = selection
    planned = plan_fixes(report, setup.policy, {Safety.SAFE, Safety.DISRUPTIVE})[0] if inventory is not None else []
    command = fix_command(inventory, playbook, select_=split_list(select_), skip=split_list(skip),
                          stage=split_list(stage), host=host or [], checks_dir=checks_dir or [])
    for line in doctor_lines(leftover(report, planned), command):
        console.print(Text(line), soft_wrap=True)



def _local(inventory: Path, playbook: str | None, select_: list[str] | None, skip: list[str] | None,
           stage: list[str] | None, host: list[str] | None, checks_dir: list[Path] | None, replay: Path | None,
           guest: bool, *, timeout: float, **roce: str | None) -> tuple[Any, Any]:
    """doctor --local: this machine as the one target, its probes run here (transports/local.py)."""
    from roce_wizard.local_setup import local_setup, local_transports  # noqa: PLC0415
    from roce_wizard.session import SetupError  # noqa: PLC0415

    if host or replay is not None or inventory != Path("inventory.yaml"):
        raise _err("--local checks this machine: it does not take -i/--inventory, --host or --replay")
    try:
        setup = local_setup(guest, playbook=playbook, select_=select_, skip=skip, stage=stage, checks_dir=checks_dir, **roce)
    except SetupError as exc:
        raise _err(str(exc)) from None
    return setup, local_transports(setup, timeout=timeout)


def _write_ci_reports(result_dict: dict[str, Any], junit_file: Path | None, ctrf_file: Path | None) -> None:
    """doctor --junit-xml / --ctrf: a file that cannot be written is a usage error (exit 2), after the run."""
    from roce_wizard.ci_reports import ctrf_json, junit_xml  # noqa: PLC0415

    for option, path, render in (
            ("--junit-xml", junit_file, lambda: junit_xml(result_dict)),
            ("--ctrf", ctrf_file, lambda: json.dumps(ctrf_json(result_dict), indent=2, ensure_ascii=False) + "\n")):
        if path is None:
            continue
        try:
            path.write_text(render(), encoding="utf-8")
        except OSError as exc:
            raise _err(f"{option} {path}: {exc.strerror or exc}") from None
