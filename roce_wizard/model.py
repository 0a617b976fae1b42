"""The vocabulary of roce-wizard: enums for every closed set, dataclasses for values.

Nothing here does I/O. Checks, the engine, the transports and both front ends speak these types.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


class Stage(str, enum.Enum):
    """Stages in the order an operator works through them (preflight first; `linux` is the bare-metal host stage)."""

    PREFLIGHT = "preflight"
    BIOS = "bios"
    ESXI = "esxi"
    VSPHERE = "vsphere"
    GUEST = "guest"
    LINUX = "linux"
    SWITCH = "switch"
    VALIDATE = "validate"


class TargetKind(str, enum.Enum):
    ESXI = "esxi"
    GUEST = "guest"  # Linux VM with an SR-IOV VF
    LINUX = "linux"  # bare-metal Linux host owning the PF
    SWITCH = "switch"
    VCENTER = "vcenter"
    BMC = "bmc"


SSH_KINDS = frozenset({TargetKind.ESXI, TargetKind.GUEST, TargetKind.LINUX})


class Status(str, enum.Enum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"  # could not judge because something it depends on is broken, or not applicable
    ERROR = "error"  # could not judge: unreachable, tool error, unreadable output

    @property
    def symbol(self) -> str:
        return {"pass": "✓", "warn": "!", "fail": "✗", "skip": "-", "error": "?"}[self.value]


class Severity(str, enum.Enum):
    FAIL = "fail"  # breaks RoCE or SR-IOV
    WARN = "warn"  # costs performance or robustness


class Safety(str, enum.Enum):
    SAFE = "safe"
    DISRUPTIVE = "disruptive"
    MANUAL = "manual"


class RebootKind(str, enum.Enum):
    NONE = "none"
    DRIVER_RELOAD = "driver-reload"
    HOST = "host"
    FW_RESET = "fw-reset"
    BIOS = "bios"
    VM_REBOOT = "vm-reboot"
    VM_POWER_OFF = "vm-power-off"


class ExitCode(enum.IntEnum):
    """Exit codes of `doctor` and `analyze` (README documents them)."""

    OK = 0  # nothing failed (warnings allowed)
    FAILED = 1  # at least one check failed
    USAGE = 2  # usage or inventory error
    INCOMPLETE = 3  # nothing failed, but not all is proven: some checks could not run (unreachable, tool
    # missing) or a change they pass on waits for a reboot (pending_reboot)


# --------------------------------------------------------------------------------------------
# Site policy (every key documented in docs/policy.md)


@dataclass(frozen=True)
class Policy:
    pfc_priority: int = 3
    roce_dscp: int = 26
    trust: str = "dscp"
    eth_mtu: int = 9000
    switch_mtu: int = 9216
    roce_mtu: int = 4096
    min_bw_ratio: float = 0.90
    max_small_msg_lat_us: float = 3.0
    # validate stage: node pairs to measure ("a:b,c:d"; default consecutive nodes), incast streams 1..N,
    # and UCX variables the site's jobs carry ("UCX_TLS=rc,sm UCX_IB_GID_INDEX=3") for RW603's MPI run
    validate_pairs: str = ""
    incast_streams: int = 4
    mpi_env: str = ""
    # seed 000: nmlx5_core 4.21.71.101 on ESXi 7.0U2
    min_nmlx5_version: str = "4.21.71.101"
    # seed 000 figure 9: firmware the 4.21.71.101 driver is qualified with, by mst device type
    min_firmware: Mapping[str, str] = field(
        default_factory=lambda: {
            "ConnectX4": "12.28.2006",
            "ConnectX4LX": "14.29.1016",
            "ConnectX5": "16.29.1016",
            "ConnectX5EX": "16.29.1016",
            "ConnectX6": "20.29.1016",
            "ConnectX6DX": "22.29.1016",
            "ConnectX6LX": "26.29.1016",
        }
    )
    # where the fix-by-hand commands point at: the shared datastore holding the VIBs (seed best practice)
    vib_datastore: str = "/vmfs/volumes/datastore1/mellanox"
    # RW208 (and the VF counts RW301/RW412 compare): `sum_plus_one` = seed 000's and the user's rule,
    # NUM_OF_VFS > the sum of the card's max_vfs entries; `per_port` = NVIDIA's per-PF ceiling,
    # NUM_OF_VFS >= every port's entry (RW208's docstring gives the sources)
    num_of_vfs_rule: str = "sum_plus_one"
    # RW413: where congestion notification packets go (CNP_DSCP 48, CNP_802P_PRIO 6: what the real cards
    # in the corpus show, see RW413)
    cnp_dscp: int = 48
    cnp_priority: int = 6

    @property
    def pfc_bitmask(self) -> int:
        return 1 << self.pfc_priority

    @property
    def traffic_class(self) -> int:
        return self.roce_dscp << 2

    def to_dict(self) -> dict[str, Any]:
        return {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in self.__dict__.items()}


POLICY_KEYS = frozenset(Policy.__dataclass_fields__)


# --------------------------------------------------------------------------------------------
# Inventory targets


class SecretSource(str, enum.Enum):
    ENV = "env"
    KEYRING = "keyring"
    PROMPT = "prompt"
    PLAINTEXT = "plaintext"  # accepted with a warning


@dataclass(frozen=True)
class SecretRef:
    """Where a secret lives. The secret itself is never stored on a target or logged."""

    source: SecretSource
    name: str = ""  # env var name, or keyring "service/user"
    value: str | None = field(default=None, repr=False, compare=False)  # plaintext only

    def __str__(self) -> str:  # what logs and exports may show
        return f"<{self.source.value}:{self.name}>" if self.name else f"<{self.source.value}>"


@dataclass(frozen=True)
class Credentials:
    username: str = "root"
    password: SecretRef | None = None
    key_file: str | None = None
    use_agent: bool = True


@dataclass(frozen=True)
class RoceSpec:
    """Per-target RoCE details from the inventory. Any of them may be unknown (None / empty)."""

    pf_pci: str | None = None  # PCI address of the RoCE PF, e.g. 0000:3b:00.0
    vmnics: tuple[str, ...] = ()  # ESXi RoCE ports, e.g. (vmnic2, vmnic3)
    vfs: tuple[int, ...] = ()  # VFs wanted per RoCE port, in vmnic order
    netdev: str | None = None  # Linux RoCE netdev
    rdma_dev: str | None = None  # Linux RDMA device (mlx5_1), when known
    ip: str | None = None  # RoCE IPv4 with prefix, e.g. 192.168.100.11/24
    switch_ports: tuple[str, ...] = ()  # "switch-name:Ethernet1/1" per RoCE port


@dataclass(frozen=True)
class Target:
    name: str
    kind: TargetKind
    address: str
    port: int | None = None
    credentials: Credentials = field(default_factory=Credentials)
    roce: RoceSpec = field(default_factory=RoceSpec)
    host: str | None = None  # guest: the ESXi host it runs on
    vm: str | None = None  # guest: its VM name in vCenter
    device_type: str | None = None  # switch: netmiko device type
    options: Mapping[str, Any] = field(default_factory=dict)  # transport options (timeouts, known_hosts, ...)
    source: str | None = None  # "file:line" where the inventory defined it

    @property
    def related(self) -> tuple[str, ...]:
        """Names whose findings can block this target's checks (root cause across targets)."""
        return tuple(n for n in (self.name, self.vm, self.host) if n)


# --------------------------------------------------------------------------------------------
# Checks and their results


@dataclass(frozen=True)
class Check:
    code: str
    slug: str
    title: str
    stage: Stage
    target: TargetKind | tuple[TargetKind, ...]
    severity: Severity
    probes: tuple[str, ...]  # fact kinds it reads (probe names == fact kinds)
    # codes whose failure makes this check unjudgeable: "RW201" on the same target, "host:RW215"
    # on the guest's ESXi host, "vm:RW304" on the guest's VM (a vCenter finding about that VM),
    # "bmc:RW103" on the bmc target whose `host` is this ESXi/Linux host, "vcenter:RW303" on the
    # run's vCenter target (a setting of the vCenter itself, e.g. the VDS MTU)
    depends_on: tuple[str, ...] = ()
    reboot: RebootKind = RebootKind.NONE
    fix_hint: str = ""  # the fix-by-hand, one line; the docstring has the full text
    # read when present, not required; `analyze` runs a check when all `probes` are present and at
    # least one of probes + optional_probes is
    optional_probes: tuple[str, ...] = ()
    # validate stage: measurements between two nodes (roce_wizard/probes/pairs.py), by name or PairProbe
    pair_probes: tuple[Any, ...] = ()

    @property
    def target_kinds(self) -> tuple[TargetKind, ...]:
        return self.target if isinstance(self.target, tuple) else (self.target,)


@dataclass(frozen=True)
class Evidence:
    probe: str
    command: str | None = None
    excerpt: str | None = None  # the lines that carry the observation


@dataclass
class Finding:
    """One verdict of one check about one subject (a target, or a port/device on it)."""

    check: str
    status: Status
    summary: str
    target: str = ""
    observed: Any = None
    expected: Any = None
    evidence: list[Evidence] = field(default_factory=list)
    fix: str | None = None  # exact fix-by-hand command(s) for this target, when failing
    subject: str | None = None  # port / device / VM the finding is about, when narrower than the target
    blocked_by: tuple[str, str] | None = None  # (check code, target) that made this one unjudgeable
    details: dict[str, Any] = field(default_factory=dict)
    # a pass whose value is staged, not yet in effect: what it waits for (the engine sets it from the reboot
    # ledger; engine/pending.py). The status stays `pass`: the JSON contract's closed set of statuses
    pending_reboot: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "status": self.status.value,
            "target": self.target,
            "subject": self.subject,
            "summary": self.summary,
            "observed": self.observed,
            "expected": self.expected,
            "evidence": [e.__dict__ for e in self.evidence],
            "fix": self.fix,
            "blocked_by": list(self.blocked_by) if self.blocked_by else None,
            "details": self.details,
        }


class MissingFact(LookupError):
    """A check asked for facts this run does not have (probe failed or was not run)."""

    def __init__(self, kind: str, reason: str = ""):
        self.kind = kind
        self.reason = reason
        super().__init__(f"no {kind} facts" + (f": {reason}" if reason else ""))


@dataclass(frozen=True)
class ProbeFailure:
    """Why a probe produced no facts: the command failed, timed out, the tool is missing…"""

    probe: str
    reason: str
    tool_missing: bool = False
    exit_status: int | None = None


@dataclass
class Facts:
    """What a check may read: parsed facts by kind, the target's inventory entry, probe failures."""

    data: dict[str, Any] = field(default_factory=dict)
    target: Target | None = None  # None in `analyze` (no inventory)
    failures: dict[str, ProbeFailure] = field(default_factory=dict)
    raw: dict[str, str] = field(default_factory=dict)  # probe -> raw output (evidence)
    commands: dict[str, str] = field(default_factory=dict)  # probe -> command as run

    def need(self, kind: str) -> Any:
        if kind in self.data:
            return self.data[kind]
        failure = self.failures.get(kind)
        raise MissingFact(kind, failure.reason if failure else "")

    def get(self, kind: str, default: Any = None) -> Any:
        return self.data.get(kind, default)

    def has(self, kind: str) -> bool:
        return kind in self.data

    def evidence(self, kind: str, excerpt: str | None = None) -> Evidence:
        return Evidence(probe=kind, command=self.commands.get(kind), excerpt=excerpt)

    @property
    def target_name(self) -> str:
        return self.target.name if self.target else ""


Evaluate = Callable[[Facts, Policy], list[Finding]]


@dataclass(frozen=True)
class Step:
    """One exact action of a fix: a command the engine runs on the target through its transport."""

    description: str
    command: str  # a shell line for SSH targets (validated/quoted values only)
    before: str | None = None  # the value as it is now (shown in the preview)
    after: str | None = None  # the value the step writes
    # the host or VM (its name in the inventory / vCenter) whose reboot or power cycle the change
    # waits for, when the step runs somewhere else: a vCenter step's ESXi host or VM, a BMC's server
    host: str | None = None


@dataclass(frozen=True)
class FixPlan:
    """What `plan_fix(facts, policy)` returns when a check is not compliant (None when it is)."""

    check: str
    target: str
    summary: str
    steps: tuple[Step, ...]
    safety: Safety
    reboot: RebootKind  # what must happen before the change takes effect
    reboot_reason: str = ""
    needs: tuple[str, ...] = ()  # check codes that must be in effect first (RW205 needs RW201 + a reboot)


PlanFix = Callable[[Facts, Policy], "FixPlan | None"]


@dataclass(frozen=True)
class LoadedCheck:
    """A check module as the catalog loaded it."""

    meta: Check
    evaluate: Evaluate
    doc: Mapping[str, str]  # docstring sections: "What it checks", "Why it matters", ...
    path: str
    # optional cross-target judgement over this check's findings on every target (e.g. the RoCE
    # GID index must agree across nodes); a module opts in by defining `compare_targets`
    # called as compare(own findings, every finding of the run)
    compare: Callable[[list[Finding], list[Finding]], list[Finding]] | None = None
    plan_fix: Callable[[Facts, Policy], FixPlan | None] | None = None  # None: not fixable by the tool

    @property
    def code(self) -> str:
        return self.meta.code
