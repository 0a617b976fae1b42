"""The typer app: `roce-wizard doctor | analyze | explain | checks | lab up|down|status | demo`.

Exit codes (ExitCode): 0 nothing failed (warnings allowed) · 1 a check failed ·
2 usage or inventory error · 3 nothing failed but some checks could not run.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from roce_wizard import __version__
from roce_wizard.catalog import CatalogError, find, load_catalog
from roce_wizard.model import ExitCode, Policy
from roce_wizard.switchview import human_command
from roce_wizard.textsafe import printable

app = typer.Typer(
    name="roce-wizard",
    help="Set up and prove lossless RoCE v2 over SR-IOV on vSphere and bare metal. "
         "With no command: the wizard (a terminal UI) on ./inventory.yaml or -i FILE.",
    no_args_is_help=False,  # no command opens the wizard (the callback below)
    add_completion=False,
    rich_markup_mode=None,
)


def _err(message: str, code: ExitCode = ExitCode.USAGE) -> typer.Exit:
    Console(stderr=True).print(f"[bold red]error:[/] {printable(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(int(code))


def _split(values: list[str] | None) -> list[str]:
    return [v.strip() for raw in values or [] for v in raw.split(",") if v.strip()]


def _load_checks(checks_dir: list[Path] | None) -> dict[str, Any]:
    try:
        return load_catalog(checks_dir or [])
    except CatalogError as exc:
        raise _err(str(exc)) from None


# shared with the wizard (roce_wizard/session.py); the names stay importable from here
from roce_wizard.session import OTHER_TRANSPORTS, SetupError, load_setup  # noqa: E402, F401
from roce_wizard.session import Prompter as _Prompter  # noqa: E402, F401
from roce_wizard.session import Setup as _Setup  # noqa: E402, F401
from roce_wizard.session import live_transports as _live_transports  # noqa: E402, F401


def _setup(inventory: Path, playbook: str, select_: list[str] | None, skip: list[str] | None,
           stage: list[str] | None, host: list[str] | None, checks_dir: list[Path] | None) -> _Setup:
    """Inventory, playbook, catalog and selections as doctor and fix both read them (exit 2 on errors)."""
    try:
        setup = load_setup(inventory, playbook, select_, skip, stage, host, checks_dir)
    except SetupError as exc:
        raise _err(str(exc)) from None
    for warning in setup.warnings:
        Console(stderr=True).print(f"[yellow]warning:[/] {printable(warning)}", highlight=False, soft_wrap=True)
    return setup


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
    from roce_wizard.engine import run_checks  # noqa: PLC0415
    from roce_wizard.report import render_terminal, to_json_dict  # noqa: PLC0415
    from roce_wizard.runlog import RunLog, diff_results, previous_results  # noqa: PLC0415

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
        transport, unavailable = _live_transports(
            {t.kind for t in targets}, known_hosts=known_hosts, trust_on_first_use=trust_on_first_use,
            concurrency=concurrency, connect_timeout=connect_timeout, timeout=timeout, run_dir=runlog.path)
        if unavailable:
            Console(stderr=True).print(f"[dim]note: {', '.join(sorted(unavailable))} targets are not checked by "
                                       f"this version (no transport for them yet)[/]", highlight=False)
            targets = [t for t in targets if t.kind.value not in unavailable]
    if not targets:
        raise _err(f"no target to check in {inventory}")
    runlog.event("inventory", path=str(inventory.resolve()), targets=[t.name for t in targets], playbook=setup.playbook,
                 checks=list(chosen), policy=policy.to_dict())
    tool_facts = None
    if replay is None:  # the ledger knows which guests' VMs this tool powered off (RW001 says so)
        from roce_wizard.reboots import build_ledger, vm_aliases  # noqa: PLC0415
        from roce_wizard.vm_restore import vm_power_facts  # noqa: PLC0415

        tool_facts = vm_power_facts(build_ledger(runlog.path.parent.parent, vm_aliases(targets)), targets)
    report = asyncio.run(run_checks(targets, chosen, transport, policy, stage_of=stage_of, runlog=runlog,
                                    concurrency=concurrency, command_timeout=timeout, tool_facts=tool_facts))
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


@app.command()
def fix(
    inventory: Annotated[Path, typer.Option("-i", "--inventory", help="Inventory YAML.")] = Path("inventory.yaml"),
    playbook: Annotated[str, typer.Option(help="vsphere-sriov, baremetal, or a playbook file.")] = "vsphere-sriov",
    select_: Annotated[list[str] | None, typer.Option("--select", help="Only fix these checks (codes, prefixes, slugs).")] = None,
    skip: Annotated[list[str] | None, typer.Option("--skip", help="Leave these checks alone.")] = None,
    stage: Annotated[list[str] | None, typer.Option("--stage", help="Only these stages (comma list).")] = None,
    host: Annotated[list[str] | None, typer.Option("--host", help="Only these targets (names, ranges, globs).")] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Apply without asking.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the plan and stop.")] = False,
    allow_disruptive: Annotated[bool, typer.Option("--allow-disruptive", help="Also apply disruptive fixes "
                                                   "(firmware, driver, module parameters: they need a reboot; "
                                                   "with --reboot also power off VMs for maintenance mode).")] = False,
    reboot: Annotated[bool, typer.Option("--reboot", help="Reboot the hosts whose changes wait for a reboot "
                                         "(maintenance mode through vCenter when the inventory has one), wait for "
                                         "them, verify, and fix again until nothing is left.")] = False,
    batch: Annotated[int, typer.Option(help="With --reboot: hosts rebooted at once.", min=1)] = 1,
    reboot_timeout: Annotated[float, typer.Option(help="With --reboot: seconds a host may take to come back.")] = 1200.0,
    poll: Annotated[float, typer.Option(help="With --reboot: seconds between checks on a rebooting host.")] = 5.0,
    known_hosts: Annotated[Path | None, typer.Option(help="known_hosts file (default ~/.ssh/known_hosts).")] = None,
    concurrency: Annotated[int, typer.Option(help="Targets worked on at once.")] = 32,
    timeout: Annotated[float, typer.Option(help="Per-command timeout, seconds.")] = 120.0,
    connect_timeout: Annotated[float, typer.Option(help="Connect timeout, seconds.")] = 10.0,
    checks_dir: Annotated[list[Path] | None, typer.Option(help="A directory of site checks to load as well.")] = None,
) -> None:
    """Preview, then apply, the fixes for what doctor finds; re-verify. Preview only unless confirmed.

    Safe fixes apply by default; disruptive ones only with --allow-disruptive; manual ones are shown and
    never run. Changes that wait for a reboot are listed per host with their reason; --reboot reboots
    those hosts (in batches of --batch), waits for them, verifies and goes on until nothing is left."""
    from roce_wizard.engine import run_checks  # noqa: PLC0415
    from roce_wizard.fixes import FixContext, RoundHooks, fix_until_ready  # noqa: PLC0415
    from roce_wizard.model import Safety  # noqa: PLC0415
    from roce_wizard.reboots import scoped_ledger  # noqa: PLC0415
    from roce_wizard.report import summary_line  # noqa: PLC0415
    from roce_wizard.runlog import RunLog  # noqa: PLC0415

    setup = _setup(inventory, playbook, select_, skip, stage, host, checks_dir)
    console = Console()
    runlog = RunLog.create(kind="fix")
    unavailable: set[str] = set()

    def transports() -> Any:
        out, missing = _live_transports(
            {t.kind for t in setup.targets}, known_hosts=known_hosts, trust_on_first_use=False,
            concurrency=concurrency, connect_timeout=connect_timeout, timeout=timeout, run_dir=runlog.path)
        unavailable.update(missing)
        return out

    transports()
    targets = [t for t in setup.targets if t.kind.value not in unavailable]
    if reboot and "RW003" not in setup.chosen:
        # --reboot acts only on what this run's live checks confirm: RW003 reads which machine answers and
        # its boot, so it rides along with any --select/--skip/--stage
        rw003 = _load_checks(checks_dir).get("RW003")
        if rw003 is not None:
            setup.chosen["RW003"], setup.stage_of["RW003"] = rw003, rw003.meta.stage
    allow = {Safety.SAFE} | ({Safety.DISRUPTIVE} if allow_disruptive else set())
    ctx = FixContext(targets, setup.chosen, setup.stage_of, setup.policy, transports, allow, runlog,
                     concurrency=concurrency, command_timeout=timeout)
    asked: list[bool] = []

    def on_report(current) -> None:  # noqa: ANN001
        for error in current.errors:
            Console(stderr=True).print(f"[red]error:[/] {escape(printable(error))}", highlight=False, soft_wrap=True)
        if reboot and current.number > 1:
            console.print(f"[bold]Round {current.number}[/]: {summary_line(current.report)}", highlight=False)
        if not current.planned:
            if current.number == 1 and not current.vms_off:
                console.print(f"nothing to fix: {summary_line(current.report)}", highlight=False)
            elif current.number == 1:
                console.print(f"no check to fix ({summary_line(current.report)}), but "
                              f"{len(current.vms_off)} VM(s) roce-wizard powered off are still off: "
                              + ", ".join(v.vm for v in current.vms_off), highlight=False)
            return
        _print_plan(console, current.planned)

    def confirm(current) -> bool:  # noqa: ANN001
        if asked:
            return asked[0]
        runnable = [p for p in current.planned if p.allowed]
        console.print(f"{len(runnable)} of {len(current.planned)} fixes would run "
                      f"({sum(len(p.plan.steps) for p in runnable)} steps)"
                      + (", then the reboots they need, and again until nothing is left" if reboot else "") + ".",
                      highlight=False)
        if dry_run:
            answer = False
        elif yes:
            answer = True
        elif not sys.stdin.isatty():
            console.print("preview only: re-run with --yes to apply.", highlight=False)
            answer = False
        else:
            answer = typer.confirm("Apply these fixes?", default=False)
        asked.append(answer)
        return answer

    def show(step) -> None:  # noqa: ANN001
        mark = "[green]✓[/]" if step.ok else "[red]✗[/]"
        shown = human_command(step.command).replace("\n", "; ")
        console.print(f"  {mark} {step.target} {step.check}: {escape(printable(shown))}", highlight=False, soft_wrap=True)
        if not step.ok:
            console.print(f"      {printable(step.output.strip()[-400:])}", highlight=False, markup=False, soft_wrap=True)

    def progress(name: str, state: Any, message: str) -> None:
        console.print(f"  [cyan]↻[/] {name}: {getattr(state, 'value', state)} — {escape(printable(message))}", highlight=False,
                      soft_wrap=True)

    still_off: list[Any] = []

    def vms_still_off(off: list[Any]) -> None:
        still_off[:] = off
        for item in off:  # said last and in red, whatever ended the run: a VM this tool turned off is down
            Console(stderr=True).print(f"[bold red]{escape(item.line())}[/]", highlight=False, soft_wrap=True)
        if off and not reboot:
            Console(stderr=True).print("[red]`roce-wizard fix --reboot` powers them back on (or power them on "
                                       "in vCenter)[/]", highlight=False, soft_wrap=True)

    hooks = RoundHooks(on_report=on_report, on_step=show, on_progress=progress, confirm=confirm,
                       on_vms_still_off=vms_still_off)
    try:
        rounds = asyncio.run(fix_until_ready(ctx, reboot=reboot, batch=batch, power_off_vms=allow_disruptive,
                                             reboot_timeout=reboot_timeout, poll_s=poll, hooks=hooks))
    except KeyboardInterrupt:
        runlog.close()
        Console(stderr=True).print("[red]interrupted[/]" + (": the VMs it powered off are back on"
                                   if not still_off else ""), highlight=False)
        raise typer.Exit(130) from None
    last = rounds[-1]
    applied = [r.fixrun for r in rounds if r.fixrun is not None]
    if not applied:
        runlog.close()
        if still_off:
            raise typer.Exit(int(ExitCode.FAILED))
        failed_reboot = any(not o.ok for r in rounds for o in r.rebooted.values())
        raise typer.Exit(int(ExitCode.FAILED) if failed_reboot else
                         int(last.report.exit_code) if not last.planned else 0)
    failed = any(not s.ok for run in applied for s in run.results) or any(run.errors for run in applied)
    for run in applied:
        for error in run.errors:
            Console(stderr=True).print(f"[red]error:[/] {escape(printable(error))}", highlight=False, soft_wrap=True)
    if reboot:
        final = last.report
        if last.fixrun is not None:  # the loop stopped right after applying: one more look
            final = asyncio.run(run_checks(targets, setup.chosen, transports(), setup.policy,
                                           stage_of=setup.stage_of, runlog=runlog, concurrency=concurrency,
                                           command_timeout=timeout))
        reboots = {name: len(r) for name, r in _reboots_by_target(rounds).items()}
        console.print(f"after {len(rounds)} round(s): {summary_line(final)}", highlight=False)
        if reboots:
            console.print("reboots: " + ", ".join(f"{n} ×{c}" for n, c in sorted(reboots.items())), highlight=False)
        failed = failed or any(not o.ok for r in rounds for o in r.rebooted.values())
        code = final.exit_code
    else:
        touched = {s.target for run in applied for s in run.results}
        again = asyncio.run(run_checks([t for t in targets if t.name in touched], setup.chosen, transports(),
                                       setup.policy, stage_of=setup.stage_of, runlog=runlog,
                                       concurrency=concurrency, command_timeout=timeout))
        console.print(f"re-verified {len(touched)} target(s): {summary_line(again)}", highlight=False)
        code = again.exit_code
    runlog.flush()
    waiting = {name: entry for name, entry in scoped_ledger(runlog.path.parent.parent, runlog.path.name,
                                                            targets).items() if entry.awaiting_reboot}
    if waiting:
        console.print("[bold]Waiting for a reboot[/]" + ("" if reboot else " (reboot these hosts — or run `fix "
                      "--reboot` — then `roce-wizard doctor`)") + ":", highlight=False)
        for name, entry in sorted(waiting.items()):
            kinds = sorted({p.reboot.value for p in entry.awaiting_reboot})
            reasons = "; ".join(f"{p.check}: {p.reason}" if p.reason else p.check for p in entry.awaiting_reboot)
            console.print(f"  {name}: {', '.join(kinds)} — {escape(printable(reasons))}", highlight=False, soft_wrap=True)
    runlog.close()
    raise typer.Exit(int(ExitCode.FAILED) if failed or still_off else int(code))


def _reboots_by_target(rounds: list[Any]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for r in rounds:
        for name, outcome in r.rebooted.items():
            if outcome.ok:
                out.setdefault(name, []).append(outcome)
    return out


def _print_plan(console: Console, planned: list[Any]) -> None:
    from roce_wizard.model import Safety  # noqa: PLC0415

    console.print("[bold underline]Fix plan[/]", highlight=False)
    for target in dict.fromkeys(p.target.name for p in planned):
        console.print(f"  [bold]{target}[/]", highlight=False)
        for item in (p for p in planned if p.target.name == target):
            plan = item.plan
            state = ("will run" if item.allowed else
                     f"waits for {', '.join(item.waits_for)}" if item.waits_for else
                     "manual: shown, not run" if plan.safety is Safety.MANUAL else
                     f"{plan.safety.value}: needs --allow-disruptive")
            reboot = "" if plan.reboot.value == "none" else f", reboot: {plan.reboot.value}"
            console.print(f"    {plan.check} {escape(printable(plan.summary))}  [dim]\\[{plan.safety.value}{reboot}; {state}][/]",
                          highlight=False, soft_wrap=True)
            for step in plan.steps:
                shown = human_command(step.command)
                if shown != step.command:  # a switch configuration: its lines, not the transport's header
                    console.print(printable(f"        {step.description}:"), highlight=False, markup=False, soft_wrap=True)
                    for line in shown.split("\n"):
                        console.print(printable(f"          {line}"), highlight=False, markup=False, soft_wrap=True)
                else:
                    console.print(printable(f"        $ {step.command}"), highlight=False, markup=False, soft_wrap=True)
                if step.before is not None or step.after is not None:
                    console.print(printable(f"          before: {step.before}"), highlight=False, markup=False,
                                  soft_wrap=True)
                    console.print(printable(f"          after:  {step.after}"), highlight=False, markup=False,
                                  soft_wrap=True)


@app.command()
def analyze(
    paths: Annotated[list[Path], typer.Argument(help="Files, directories, run dirs or support bundles.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print {files: [{path, kind, facts, findings}]}.")] = False,
    verbose: Annotated[bool, typer.Option("-v", "--verbose", help="Show the facts read from each file.")] = False,
    checks_dir: Annotated[list[Path] | None, typer.Option(help="A directory of site checks to load as well.")] = None,
) -> None:
    """Judge pasted tool outputs offline: detect the tool, parse, run every check the facts allow."""
    from roce_wizard.analyze import InputError, analyze_paths, exit_code_of  # noqa: PLC0415
    from roce_wizard.report import STYLE, SYMBOL  # noqa: PLC0415

    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise _err(f"no such file: {', '.join(missing)}")
    try:  # a FIFO or device argument, a hostile or corrupt archive: refused with its name, exit 2
        files = analyze_paths(paths, _load_checks(checks_dir), Policy())
    except InputError as exc:
        raise _err(escape(str(exc))) from None
    code = exit_code_of(files)
    if as_json:
        sys.stdout.write(json.dumps({"version": 1, "files": [f.to_dict() for f in files], "exit_code": code},
                                    indent=2, ensure_ascii=False, default=str) + "\n")
        raise typer.Exit(code)
    console = Console()
    for f in files:
        source = f" ({f.source})" if f.source else ""  # the rank or host a launcher prefix named
        console.print(f"[bold]{escape(printable(f.path + source))}[/]  [cyan]{f.kind}[/]"
                      + (f"  [red]{escape(printable(f.error))}[/]" if f.error else ""),
                      highlight=False, soft_wrap=True)
        for part in f.parts:  # a pasted session: what each command printed (commands are the paste's text)
            console.print(f"    [dim]$ {escape(printable(part.command or '(output above the first prompt)'))}"
                          f"  {part.kind}[/]", highlight=False, soft_wrap=True)
        if verbose and f.facts is not None:
            console.print_json(json.dumps(f.facts, default=str), ensure_ascii=True)  # \u-escapes C1 controls too
        seen = set()
        for finding in f.findings:
            others = [n for n in finding.details.get("files", ()) if n != f.path]  # read with another file
            key = (finding.check, finding.subject, finding.summary, tuple(others))
            if key in seen:
                continue
            seen.add(key)
            # escaped: summaries and fixes carry brackets (pyVmomi calls, `[...]` lists) rich would eat
            where = f"{escape(printable(finding.target))}: " if finding.target else ""  # a run's results: per host
            console.print(f"    [{STYLE[finding.status]}]{SYMBOL[finding.status]}[/] {finding.check} {where}"
                          f"{escape(printable(finding.summary))}"
                          + (f"  [dim](with {escape(printable(', '.join(others)))})[/]" if others else ""),
                          highlight=False, soft_wrap=True)
            if finding.fix and finding.status.value in ("fail", "warn"):
                console.print(f"        fix: {escape(printable(finding.fix))}", highlight=False, soft_wrap=True)
        if f.kind == "unknown":
            console.print("    [dim]not recognised as the output of any tool roce-wizard reads[/]", highlight=False)
    raise typer.Exit(code)


@app.command()
def export(
    output: Annotated[Path | None, typer.Option("-o", "--output", help="The .tar.gz to write (default "
                                               "roce-wizard-bundle-<run id>.tar.gz here).")] = None,
    run: Annotated[Path | None, typer.Option("--run", help="The run directory to export.")] = None,
    last: Annotated[bool, typer.Option("--last", help="Export the newest run (the default).")] = False,
    inventory: Annotated[Path | None, typer.Option("-i", "--inventory", help="Inventory YAML (default: the one "
                                                   "the run recorded).")] = None,
    anonymize: Annotated[bool, typer.Option("--anonymize", help="Also replace hostnames, IPs, MACs, GUIDs and "
                                            "serials with consistent pseudonyms.")] = False,
    list_only: Annotated[bool, typer.Option("--list", help="Show what would be included and redacted; write nothing.")] = False,
) -> None:
    """Write a support bundle (.tar.gz) of one run: summary (Markdown + HTML), results, events, raw outputs,
    versions, reboot ledger and the inventory, with every secret removed."""
    from roce_wizard.bundle import BundleError, build_bundle, check_writable, find_run, listing  # noqa: PLC0415

    if run is not None and last:
        raise _err("--run and --last: pick one")
    try:
        run_dir = find_run(run)
        bundle = build_bundle(run_dir, inventory_path=inventory, anonymize=anonymize)
        target = output if output is not None else Path.cwd() / bundle.default_name()
        if list_only:
            for line in listing(bundle, target):
                typer.echo(line)
            raise typer.Exit(0)
        check_writable(target)
        bundle.write(target)
    except BundleError as exc:
        raise _err(str(exc)) from None
    total = bundle.redaction_total()
    typer.echo(f"wrote {target} ({target.stat().st_size} bytes, {len(bundle.members)} files"
               + (", anonymized" if anonymize else "") + "); redacted: "
               + (", ".join(f"{n} {k}" for k, n in sorted(total.items())) or "nothing needed redacting"))
    for note in bundle.notes:
        typer.echo(f"note: {note}")


@app.command("reboots")
def reboots_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print the ledger as JSON.")] = False,
    host: Annotated[list[str] | None, typer.Option("--host", help="Only these hosts (names or globs).")] = None,
    history: Annotated[bool, typer.Option("--history", help="Also list every reboot.")] = False,
) -> None:
    """The reboot ledger: per host its boot, what waits for a reboot and why, and the reboots so far.

    Derived from the run logs (`fix`, `doctor`), so it is there after the tool was killed. Host names
    repeat across sites: entries are per machine (the identity each run read), grouped by cluster, and
    each item names the run that recorded it."""
    import fnmatch  # noqa: PLC0415

    from roce_wizard.ledger_scope import clusters  # noqa: PLC0415
    from roce_wizard.reboots import all_events, ledger_from_events  # noqa: PLC0415

    patterns = _split(host)
    events = all_events()
    groups = []
    for number, (runs, ids) in enumerate(clusters(events), 1):
        members = set(runs)
        book = {name: entry for name, entry in sorted(ledger_from_events(
                    [e for e in events if e.get("run") in members]).items())
                if not patterns or any(fnmatch.fnmatchcase(name, p) for p in patterns)}
        if book:
            label = f"cluster {number}" if ids else "unidentified (runs that read no host identity)"
            groups.append((label, runs, ids, book))
    if as_json:
        hosts = [{**e.to_dict(), "cluster": label, "cluster_runs": runs}
                 for label, runs, _, book in groups for e in book.values()]
        sys.stdout.write(json.dumps({"version": 1, "hosts": hosts}, indent=2) + "\n")
        return
    console = Console()
    if not groups:
        console.print("the ledger is empty: no fix has waited for a reboot yet", highlight=False)
        return
    for label, runs, ids, book in groups:
        if len(groups) > 1 or ids:
            machines = ", ".join(f"{n} {sid}" for n, sid in sorted(ids.items()) if n in book)
            console.print(f"[bold underline]{escape(printable(label))}[/]"
                          + (f": {escape(printable(machines))}" if machines else "")
                          + (f"  [dim](runs {runs[0]} … {runs[-1]})[/]" if len(runs) > 1
                             else f"  [dim](run {runs[0]})[/]"),
                          highlight=False, soft_wrap=True)
        for name, entry in book.items():
            extra = " (left in maintenance mode)" if entry.in_maintenance else ""
            console.print(f"[bold]{escape(printable(name))}[/]  {entry.state.value}{extra}  "
                          f"boot: {escape(printable(entry.boot_id or 'unknown'))}  "
                          f"reboots: {entry.reboots}", highlight=False, soft_wrap=True)
            for item in entry.pending:
                when = "rebooted, not yet seen current" if item.booted_over else f"waits for: {item.reboot.value}"
                console.print(f"  {item.check} {escape(printable(item.reason))}  [dim]({when}; run {item.run or '?'})[/]",
                              highlight=False, soft_wrap=True)
            for vm in entry.powered_off_vms:
                since = entry.to_dict()["powered_off"][entry.powered_off_vms.index(vm)]["since"]
                console.print(f"  [red]VM {escape(printable(vm))} powered off by roce-wizard at {since or '?'} "
                              f"(run {entry.powered_off_run.get(vm, '?')}), still off[/]", highlight=False,
                              soft_wrap=True)
            if history:
                for record in entry.history:
                    data = record.to_dict()
                    verdict = ("verified" if record.verified else "failed: " + (record.error or "")
                               if record.verified is False or record.error else "not verified")
                    console.print(printable(f"  reboot {data['requested_at']} via {record.via or '?'} "
                                            f"(run {record.run or '?'}): back {data['back_at'] or '-'}, {verdict}"),
                                  highlight=False, markup=False, soft_wrap=True)


@app.command()
def explain(
    code_or_slug: Annotated[str, typer.Argument(help="A check code (RW208) or slug.")],
    where: Annotated[bool, typer.Option("--where", help="Where it lives: its file, probes (commands, parsers), "
                                        "fix, tests and lab fault.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="With --where: print it as JSON.")] = False,
) -> None:
    """Print a check's documentation: what it checks, why, how to fix by hand, fix safety."""
    if as_json and not where:
        raise _err("--json goes with --where (`roce-wizard explain CODE --where --json`)")
    checks = _load_checks(None)
    check = find(checks, code_or_slug)
    if check is None:
        raise _err(f"no check {code_or_slug!r}; `roce-wizard checks` lists them")
    meta = check.meta
    console = Console()
    if where:
        from roce_wizard.where import render, where as where_of  # noqa: PLC0415

        data = where_of(check)
        if as_json:
            sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        else:
            for line in render(data):
                console.print(printable(line), highlight=False, markup=False, soft_wrap=True)
        return
    console.print(f"[bold]{meta.code} {meta.slug}[/] — {meta.title}", highlight=False)
    console.print(f"stage: {meta.stage.value} · targets: {', '.join(k.value for k in meta.target_kinds)} · "
                  f"severity: {meta.severity.value} · reboot: {meta.reboot.value}", highlight=False)
    if meta.depends_on:
        console.print(f"depends on: {', '.join(meta.depends_on)}", highlight=False)
    for section in ("What it checks", "Why it matters", "How to fix by hand", "Fix safety"):
        console.print(f"\n[bold underline]{section}[/]", highlight=False)
        console.print(printable(check.doc[section]), highlight=False, markup=False, soft_wrap=True)


@app.command("checks")
def list_checks(checks_dir: Annotated[list[Path] | None, typer.Option(help="Site checks directory.")] = None) -> None:
    """List every check: code, slug, stage, severity, title."""
    console = Console()
    for check in _load_checks(checks_dir).values():
        m = check.meta
        console.print(f"{m.code}  {m.slug:<30} {m.stage.value:<9} {m.severity.value:<5} {m.title}", highlight=False)


@app.command()
def version() -> None:
    """Print the version."""
    typer.echo(f"roce-wizard {__version__}")


# ---------------------------------------------------------------------------- the practice lab

lab_app = typer.Typer(
    name="lab",
    help="The practice lab: simulated ESXi hosts and guests (and switches, vCenter, BMCs) on 127.0.0.1.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(lab_app, name="lab")


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
    hosts: Annotated[int | None, typer.Option(help="ESXi hosts, each with a compute VM and its guest (default 2).", min=1, max=4096)] = None,
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
    spec = LabSpec(scenario=scenario, hosts=hosts, switch=switch, faults=list(fault or []),
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
        if (lab_dir / "lab.env").exists():
            typer.echo(f"  credentials: set -a; . {lab_dir / 'lab.env'}; set +a")
        typer.echo(f"  run doctor:  roce-wizard doctor -i {lab_dir / 'inventory.yaml'}")
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
    console = Console()
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
    console = Console()
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


@app.callback(invoke_without_command=True)
def wizard(
    ctx: typer.Context,
    inventory: Annotated[Path, typer.Option("-i", "--inventory", help="Inventory YAML (for the wizard).")] = Path("inventory.yaml"),
    playbook: Annotated[str, typer.Option(help="vsphere-sriov, baremetal, or a playbook file.")] = "vsphere-sriov",
    replay: Annotated[Path | None, typer.Option(help="Answer from recorded outputs (file or run dir), not live hosts.")] = None,
    known_hosts: Annotated[Path | None, typer.Option(help="known_hosts file (default ~/.ssh/known_hosts).")] = None,
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
    hosts: Annotated[int, typer.Option(help="ESXi hosts in the demo lab.", min=1, max=64)] = 4,
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
    console = Console()
    console.print(f"[bold]roce-wizard demo[/]: starting the practice lab (scenario fresh, {hosts} hosts) in {lab_dir}",
                  highlight=False)
    try:
        with background_lab(LabSpec(scenario="fresh", hosts=hosts, reboot_delay_s=reboot_delay), lab_dir) as lab:
            from roce_wizard.lab.server import read_env  # noqa: PLC0415

            os.environ.update(read_env(lab.directory))  # the lab's switch/vCenter/BMC credentials
            if not no_tui:
                from roce_wizard.tui.app import make_app  # noqa: PLC0415

                # the lab's hosts are back within seconds: look at a rebooting one twice a second
                make_app(lab.directory / "inventory.yaml", subtitle=f"practice lab: fresh, {hosts} hosts",
                         reboot_poll=0.5, reboot_timeout=300.0).run()
                code = None
            else:
                console.print(f"running: roce-wizard doctor -i {lab.directory / 'inventory.yaml'}\n", highlight=False)
                try:
                    doctor(inventory=lab.directory / "inventory.yaml")
                except typer.Exit as done:
                    code = done.exit_code
    except LabError as exc:
        raise _err(str(exc), ExitCode.FAILED) from None
    if code is None:
        console.print("[dim]The practice lab is stopped.[/]", highlight=False)
        raise typer.Exit(0)
    console.print(f"\n[dim]doctor exited {code}. The lab is stopped; `roce-wizard lab up --scenario fresh` "
                  "keeps one running for you to try fixes on.[/]", highlight=False)
    raise typer.Exit(0)


def main() -> None:  # pragma: no cover - console entry
    app()


if __name__ == "__main__":  # `python -m roce_wizard.cli` (lab up --detach re-executes itself so)
    main()
