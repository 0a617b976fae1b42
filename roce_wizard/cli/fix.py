"""`roce-wizard fix`: preview, apply, reboot, re-verify."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from roce_wizard.cli.base import _load_checks, _setup, app
from roce_wizard.cli.envfile_option import EnvFile
from roce_wizard.commands.switch_config import human_command
from roce_wizard.completion import complete_codes
from roce_wizard.console import make_console
from roce_wizard.records.wording import plural, plural_word
from roce_wizard.session import live_transports
from roce_wizard.textsafe import printable


@app.command()
def fix(
    inventory: Annotated[Path, typer.Option("-i", "--inventory", help="Inventory YAML.")] = Path("inventory.yaml"),
    env_file: EnvFile = None,
    playbook: Annotated[str, typer.Option(help="vsphere-sriov, baremetal, or a playbook file.")] = "vsphere-sriov",
    select_: Annotated[list[str] | None, typer.Option("--select", help="Only fix these checks (codes, prefixes, slugs).",
                                                      autocompletion=complete_codes)] = None,
    skip: Annotated[list[str] | None, typer.Option("--skip", help="Leave these checks alone.",
                                                      autocompletion=complete_codes)] = None,
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
    from roce_wizard.cli.progress import RunProgress  # noqa: PLC0415
    from roce_wizard.engine import Hooks, Mode, RunSetup, run  # noqa: PLC0415
    from roce_wizard.engine.events import FixStepRan, RebootProgress, RoundJudged, VmsStillOff  # noqa: PLC0415
    from roce_wizard.model import Safety  # noqa: PLC0415
    from roce_wizard.records.ledger import scoped_ledger  # noqa: PLC0415
    from roce_wizard.records.report import summary_line  # noqa: PLC0415
    from roce_wizard.records.runlog import RunLog  # noqa: PLC0415

    setup = _setup(inventory, playbook, select_, skip, stage, host, checks_dir)
    console = make_console()
    runlog = RunLog.create(kind="fix")

    def transports() -> Any:
        return live_transports(
            {t.kind for t in setup.targets}, known_hosts=known_hosts, trust_on_first_use=False,
            concurrency=concurrency, connect_timeout=connect_timeout, timeout=timeout, run_dir=runlog.path)

    targets = setup.targets
    if reboot and "RW003" not in setup.chosen:
        # --reboot acts only on what this run's live checks confirm: RW003 reads which machine answers and
        # its boot, so it rides along with any --select/--skip/--stage
        rw003 = _load_checks(checks_dir).get("RW003")
        if rw003 is not None:
            setup.chosen["RW003"], setup.stage_of["RW003"] = rw003, rw003.meta.stage
    allow = {Safety.SAFE} | ({Safety.DISRUPTIVE} if allow_disruptive else set())
    run_setup = RunSetup(targets, setup.chosen, setup.stage_of, setup.policy, transports, runlog,
                         inventory=inventory, playbook=setup.playbook, concurrency=concurrency,
                         command_timeout=timeout, allow=allow, reboot=reboot, batch=batch,
                         power_off_vms=allow_disruptive, reboot_timeout=reboot_timeout, poll_s=poll,
                         pending_from_ledger=True)
    asked: list[bool] = []

    def on_report(current) -> None:  # noqa: ANN001
        for error in current.errors:
            make_console(stderr=True).print(f"[red]error:[/] {escape(printable(error))}", highlight=False, soft_wrap=True)
        if reboot and current.number > 1:
            console.print(f"[bold]Round {current.number}[/]: {summary_line(current.report)}", highlight=False)
        if not current.planned:
            if current.number == 1 and not current.vms_off:
                console.print(f"nothing to fix: {summary_line(current.report)}", highlight=False)
            elif current.number == 1:
                console.print(f"no check to fix ({summary_line(current.report)}), but "
                              f"{plural(len(current.vms_off), 'VM')} roce-wizard powered off "
                              f"{plural_word(len(current.vms_off), 'is')} still off: "
                              + ", ".join(v.vm for v in current.vms_off), highlight=False)
            return
        _print_plan(console, current.planned)

    def confirm(current) -> bool:  # noqa: ANN001
        if asked:
            return asked[0]
        runnable = [p for p in current.planned if p.allowed]
        if reboot:  # before anything starts: which hosts go down, which VMs go off, who is skipped
            from roce_wizard.engine.reboot_preview import preview_fix  # noqa: PLC0415

            runlog.flush()
            ahead = preview_fix(current.report, current.planned,
                                scoped_ledger(runlog.path.parent.parent, runlog.path.name, targets))
            if ahead.hosts or ahead.unreachable:
                console.print("[bold underline]Reboots[/] (this round; a later round may add hosts its fixes "
                              "unblock)", highlight=False)
                for line in ahead.lines(power_off_vms=allow_disruptive):
                    console.print(f"  {escape(printable(line))}", highlight=False, soft_wrap=True)
        console.print(f"{len(runnable)} of {plural(len(current.planned), 'fix')} would run "
                      f"({plural(sum(len(p.plan.steps) for p in runnable), 'step')})"
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
            make_console(stderr=True).print(f"[bold red]{escape(item.line())}[/]", highlight=False, soft_wrap=True)
        if off and not reboot:
            make_console(stderr=True).print("[red]`roce-wizard fix --reboot` powers them back on (or power them on "
                                       "in vCenter)[/]", highlight=False, soft_wrap=True)

    def on_event(event: Any) -> None:
        if isinstance(event, RoundJudged):
            on_report(event.round)
        elif isinstance(event, FixStepRan):
            show(event.result)
        elif isinstance(event, RebootProgress):
            progress(event.host, event.state, event.note)
        elif isinstance(event, VmsStillOff):
            vms_still_off(event.off)

    try:
        with RunProgress.for_terminal() as bar:  # checks judged and hosts back, on a terminal only
            outcome = asyncio.run(run(run_setup, Mode.FIX, Hooks(on_event=bar.wrap(on_event), confirm=confirm)))
    except KeyboardInterrupt:
        runlog.close()
        make_console(stderr=True).print("[red]interrupted[/]" + (": the VMs it powered off are back on"
                                   if not still_off else ""), highlight=False)
        raise typer.Exit(130) from None
    if not outcome.applied:
        _left(console, outcome, run_setup.allow, allow_disruptive)
        runlog.close()
        raise typer.Exit(int(outcome.exit_code))
    for fixrun in outcome.applied:
        for error in fixrun.errors:
            make_console(stderr=True).print(f"[red]error:[/] {escape(printable(error))}", highlight=False, soft_wrap=True)
    final = outcome.report
    if reboot:
        console.print(f"after {plural(len(outcome.rounds), 'round')}: {summary_line(final)}", highlight=False)
        if outcome.reboots:
            console.print("reboots: " + ", ".join(f"{n} ×{c}" for n, c in sorted(outcome.reboots.items())),
                          highlight=False)
    else:
        console.print(f"re-verified {plural(outcome.looked_again or 0, 'target')}: {summary_line(final)}", highlight=False)
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
    _left(console, outcome, run_setup.allow, allow_disruptive)
    runlog.close()
    raise typer.Exit(int(outcome.exit_code))


def _print_plan(console: Console, planned: list[Any]) -> None:

    console.print("[bold underline]Fix plan[/]", highlight=False)
    for target in dict.fromkeys(p.target.name for p in planned):
        console.print(f"  [bold]{target}[/]", highlight=False)
        for item in (p for p in planned if p.target.name == target):
            plan = item.plan
            console.print(f"    {plan.check} {escape(printable(plan.summary))}  [dim]\\[{_plan_state(item)}][/]",
                          highlight=False, soft_wrap=True)
            for step in plan.steps:
                shown = human_command(step.command)
                if shown != step.command:  # a switch configuration: its lines, not the transport's header
                    console.print(printable(f"        {step.description}:"), highlight=False, markup=False, soft_wrap=True)
                    for line in shown.split("\n"):
                        console.print(printable(f"          {line}"), highlight=False, markup=False, soft_wrap=True)
                else:
                    console.print(printable(f"        $ {step.command}"), highlight=False, markup=False, soft_wrap=True)
                if (step.before is not None or step.after is not None) and step.before != step.after:
                    console.print(printable(f"          before: {step.before}"), highlight=False, markup=False,
                                  soft_wrap=True)
                    console.print(printable(f"          after:  {step.after}"), highlight=False, markup=False,
                                  soft_wrap=True)



def _plan_state(item: Any) -> str:
    """A plan's safety, reboot and what this run does with it, each said once: "safe; will run",
    "disruptive, reboot: host; needs --allow-disruptive", "manual: shown, not run"."""
    from roce_wizard.model import Safety  # noqa: PLC0415

    plan = item.plan
    reboot = "" if plan.reboot.value == "none" else f", reboot: {plan.reboot.value}"
    if plan.safety is Safety.MANUAL:
        return f"manual: shown, not run{reboot.replace(',', ';', 1)}"
    kind = plan.safety.value + reboot
    if item.allowed:
        return f"{kind}; will run"
    if item.waits_for:
        return f"{kind}; waits for {', '.join(item.waits_for)}"
    if not plan.steps:
        return f"{kind}; nothing to run"
    return f"{kind}; needs --allow-disruptive"


def _left(console: Console, outcome: Any, allow: set[Any], allow_disruptive: bool) -> None:
    """fix's closing lines: what the run did not apply and why (disruptive without --allow-disruptive, manual,
    waiting for another fix, blocked by a root cause, targets not reached), from its last round."""
    from roce_wizard.cli.next_step import fix_lines, leftover  # noqa: PLC0415

    last = outcome.rounds[-1] if outcome.rounds else None
    if last is None:
        return
    applied = {(r.target, r.check) for run in outcome.applied for r in run.results if r.ok}
    lines = fix_lines(leftover(last.report, last.planned, applied=applied, allow=allow),
                      allow_disruptive=allow_disruptive)
    if lines:
        preview = not outcome.applied and last.planned
        console.print("[bold]Left undone[/]" + (" (with --yes too)" if preview else "") + ":", highlight=False)
        for line in lines:
            console.print(f"  {escape(printable(line))}", highlight=False, soft_wrap=True)
