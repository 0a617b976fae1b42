"""Record the sample cluster's validate-stage measurements into examples/sample-cluster/recordings.yaml.

The sample's earlier stages are recorded outputs (seed 000). Its validate stage (RW601-RW610) needs two live
nodes at once, so its commands are answered by the practice lab, shaped like the sample: a 4-host healthy lab
world with esx-02's nmlx5_core PFC parameters lost (the sample's story, lab fault RW209), whose guests carry the
same names, RoCE netdev (ens256) and RoCE IPs (192.168.100.11-14) as the sample's. The lab names the VF's RDMA
device mlx5_0 where the sample's guests say mlx5_1 (their mlx5_0 is the ConnectX-4 Lx on ens224): commands go
to the lab with mlx5_1 read as mlx5_0, outputs come back with mlx5_0 written as mlx5_1. The lab guests have no
ens224: its byte counters read `-` (unknown), as a missing netdev does.

Run from the repository root: `PYTHONPATH=. python3 scripts/record_sample_validate.py`. Only commands the
recordings do not hold yet are added (each under its target, before the next target); run it again after
a change to the validate stage's commands, having removed the old validate entries (`: roce-wizard …`,
`timeout …`, `cat /sys/class/infiniband/…/rate`, …) first.
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import yaml

from roce_wizard.catalog import load_catalog
from roce_wizard.engine import run_checks
from roce_wizard.inventory import load_inventory
from roce_wizard.lab import guest as lab_guest
from roce_wizard.lab import scenarios, shell
from roce_wizard.lab.faults import resolve_fault
from roce_wizard.lab.proto import Ctx
from roce_wizard.playbook import load_playbook
from roce_wizard.transports.base import CommandResult
from roce_wizard.transports.replay import ReplayTransport

SAMPLE = Path("examples/sample-cluster")
RECORDINGS = SAMPLE / "recordings.yaml"


class _Hybrid:
    """The sample's recordings, and the lab for what they do not hold (recorded for writing back)."""

    def __init__(self) -> None:
        self.replay = ReplayTransport.from_file(RECORDINGS)
        self.world = scenarios.healthy(4)
        fault, target = resolve_fault(self.world, "RW209", "esx-02")
        fault.apply(self.world, target)
        self.new: dict[str, dict[str, dict]] = {}

    async def session(self, target):
        inner = await self.replay.session(target)
        hybrid = self

        class _S:
            async def run(self, command: str, timeout: float | None = None) -> CommandResult:
                if command in inner.recording.commands or target.kind.value != "guest":
                    return await inner.run(command, timeout)
                return hybrid.lab(target.name, command)

            async def close(self) -> None:
                return None

        return _S()

    def lab(self, name: str, command: str) -> CommandResult:
        line = re.sub(r"\bmlx5_1\b", "mlx5_0", command)
        ctx = Ctx(world=self.world, target=name, files=lab_guest.files(self.world, name), env={})
        reply = shell.run(line, ctx, lab_guest.programs(self.world, name),
                          write_file=lambda p, c: lab_guest.write_file(self.world, name, p, c), esxi=False)
        out, err = (re.sub(r"\bmlx5_0\b", "mlx5_1", t) for t in (reply.stdout, reply.stderr))
        entry = {"stdout": out}
        if err:
            entry["stderr"] = err
        if reply.exit:
            entry["exit_status"] = reply.exit
        self.new.setdefault(name, {})[command] = entry
        return CommandResult(command, out, err, reply.exit, 0.0)

    async def close(self) -> None:
        return None


def _block(commands: dict[str, dict]) -> str:
    text = yaml.safe_dump(commands, sort_keys=False, allow_unicode=True, width=10_000, default_style=None)
    return "".join("      " + ln + "\n" if ln else "\n" for ln in text.splitlines())


def main() -> int:
    inventory = load_inventory(SAMPLE / "inventory.yaml")
    book = load_playbook("vsphere-sriov")
    catalog = load_catalog([])
    chosen = {c: v for c, v in catalog.items() if book.stage_of(c) is not None}
    hybrid = _Hybrid()
    targets = [t for t in inventory.targets if any(t.kind in c.meta.target_kinds for c in chosen.values())]
    asyncio.run(run_checks(targets, chosen, {t.kind: hybrid for t in targets}, inventory.policy,
                           stage_of={c: book.stage_of(c) for c in chosen}))
    lines = RECORDINGS.read_text(encoding="utf-8").splitlines(keepends=True)
    for name, commands in hybrid.new.items():
        start = next(i for i, ln in enumerate(lines) if ln.rstrip() == f"  {name}:")
        end = next((i for i in range(start + 1, len(lines)) if re.match(r"^  \S", lines[i])), len(lines))
        while end > start and not lines[end - 1].strip():
            end -= 1
        lines.insert(end, _block(commands))
    RECORDINGS.write_text("".join(lines), encoding="utf-8")
    print(f"added {sum(len(c) for c in hybrid.new.values())} validate commands: "
          + ", ".join(f"{n} {len(c)}" for n, c in hybrid.new.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
