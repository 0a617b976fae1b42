"""Fix tests without SSH: the lab world answers commands in-process (the same shell and simulated tools
the lab's SSH servers run), the engine gathers facts, a check's plan_fix plans, the steps are applied
through the same path, and the check is judged again.

    world = scenarios.healthy(); inject(world, "RW209@esx-01")
    plan = plan_for(world, "esx-01", "RW209")          # FixPlan or None
    apply(world, "esx-01", plan)                        # runs each step's command, asserts exit 0
    reboot_if_needed(world, "esx-01", plan)             # world.reboot_host / reboot_guest by the plan's kind
    assert statuses(world, "esx-01", "RW209") == {Status.PASS}
    assert plan_for(world, "esx-01", "RW209") is None   # idempotent
"""

from __future__ import annotations

import asyncio
import time

from roce_wizard.catalog import load_catalog
from roce_wizard.engine import run_checks
from roce_wizard.engine.fixes import plan_for as planned_fix
from roce_wizard.lab import esxi as lab_esxi
from roce_wizard.lab import guest as lab_guest
from roce_wizard.lab import shell
from roce_wizard.lab.proto import Ctx
from roce_wizard.lab.world import World
from roce_wizard.model import FixPlan, Policy, RebootKind, RoceSpec, Status, Target, TargetKind
from roce_wizard.transports.base import CommandResult

CATALOG = load_catalog()


def target_for(world: World, name: str) -> Target:
    if name in world.hosts:
        host = world.hosts[name]
        vmnics = tuple(n.name for n in host.vmnics if n.card == len(host.cards) - 1)
        return Target(name=name, kind=TargetKind.ESXI, address="127.0.0.1",
                      roce=RoceSpec(pf_pci=f"0000:{host.roce_card.pci_bus}:00.0", vmnics=vmnics, vfs=(8, 7)))
    guest = world.guests[name]
    kind = TargetKind.GUEST if guest.vm else TargetKind.LINUX
    vm = world.vms.get(guest.vm or "")
    ip = next((i.ipv4[0] for i in guest.interfaces if i.name == guest.roce_netdev and i.ipv4), None)
    return Target(name=name, kind=kind, address="127.0.0.1", host=vm.host if vm else None, vm=guest.vm,
                  roce=RoceSpec(netdev=guest.roce_netdev, ip=ip))


def run_line(world: World, name: str, line: str) -> CommandResult:
    """Run a command line the way the lab's sshd does: file writes (`echo 104 > /sys/…`, boot units under
    /etc) reach the target through its write_file hook, unreadable files stay unreadable."""
    module = lab_esxi if name in world.hosts else lab_guest
    write = getattr(module, "write_file", None)
    errors = getattr(module, "file_errors", None)
    ctx = Ctx(world=world, target=name, files=module.files(world, name))
    reply = shell.run(line, ctx, module.programs(world, name),
                      write_file=(lambda p, c: write(world, name, p, c)) if write else None,
                      reload_files=(lambda: module.files(world, name)) if write else None,
                      unreadable=errors(world, name) if errors else None, esxi=name in world.hosts)
    return CommandResult(line, reply.stdout, reply.stderr, reply.exit, 0.0)


class _Session:
    def __init__(self, world: World, name: str):
        self.world, self.name = world, name

    async def run(self, command: str, timeout: float | None = None) -> CommandResult:
        return run_line(self.world, self.name, command)

    async def close(self) -> None:
        return None


class WorldTransport:
    def __init__(self, world: World):
        self.world = world

    async def session(self, target: Target) -> _Session:
        return _Session(self.world, target.name)

    async def close(self) -> None:
        return None


def run(world: World, name: str, codes: list[str] | None = None):
    checks = {c: v for c, v in CATALOG.items() if codes is None or c in codes}
    target = target_for(world, name)
    checks = {c: v for c, v in checks.items() if target.kind in v.meta.target_kinds}
    return asyncio.run(run_checks([target], checks, WorldTransport(world), Policy()))


def statuses(world: World, name: str, code: str) -> set[Status]:
    return {f.status for f in run(world, name, [code]).findings if f.check == code}


def plan_for(world: World, name: str, code: str) -> FixPlan | None:
    report = run(world, name, [code])
    facts = report.runs[0].facts
    return planned_fix(CATALOG[code], facts, Policy())


def apply(world: World, name: str, plan: FixPlan) -> None:
    for step in plan.steps:
        result = run_line(world, name, step.command)
        assert result.exit_status == 0, f"{plan.check} step {step.description!r}: `{step.command}` exited " \
                                        f"{result.exit_status}: {result.stderr or result.stdout}"


def reboot_if_needed(world: World, name: str, plan: FixPlan) -> None:
    if plan.reboot in (RebootKind.HOST, RebootKind.FW_RESET, RebootKind.BIOS, RebootKind.DRIVER_RELOAD):
        if name in world.hosts:
            world.reboot_host(world.hosts[name], now=time.time())
        else:
            world.reboot_guest(world.guests[name])
    elif plan.reboot in (RebootKind.VM_REBOOT, RebootKind.VM_POWER_OFF):
        world.reboot_guest(world.guests[name])
