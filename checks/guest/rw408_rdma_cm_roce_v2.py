"""RW408 rdma-cm-roce-v2 — rdma_cm connections use RoCE v2

What it checks
    `cma_roce_mode -d <dev> -p 1` prints `RoCE v2` for the RoCE device's port 1 (the default on
    some stacks is `IB/RoCE v1`). On inbox rdma-core (no MLNX_OFED cma_roce_mode) the same fact is read
    from rdma_cm's configfs: `cat /sys/kernel/config/rdma_cm/<dev>/ports/1/default_roce_mode` ("IB/RoCE v1"
    or "RoCE v2", Linux Documentation/ABI/testing/configfs-rdma_cm). That file exists only once
    `mkdir /sys/kernel/config/rdma_cm/<dev>` made the device's group; the probe never makes it (a write),
    so without it the check cannot tell and says so.

Why it matters
    Applications that connect through rdma_cm (MPI over UCX with rdmacm, NFS/RDMA, iSER, NVMe-oF,
    perftest -R) use the port's default RoCE mode. RoCE v1 is a layer-2 protocol: not routable,
    no IP header so no DSCP — the lossless class (trust dscp) is never hit, and across a routed
    hop the connection fails.

How to fix by hand
        cma_roce_mode -d <dev> -p 1 -m 2
    It is not persistent: add a boot hook, e.g. a systemd oneshot unit
        [Unit]    After=openibd.service network-online.target
        [Service] Type=oneshot
                  ExecStart=/usr/sbin/cma_roce_mode -d <dev> -p 1 -m 2
        [Install] WantedBy=multi-user.target
    Inbox rdma-core without cma_roce_mode:
        mkdir /sys/kernel/config/rdma_cm/<dev>
        echo "RoCE v2" > /sys/kernel/config/rdma_cm/<dev>/ports/1/default_roce_mode
    Sources: `cma_roce_mode -d <dev> -p <port> [-m 2]` — corpus cma_roce_mode/cx4lx-default-ib-roce-v1-then-set-v2.txt
        (`sudo cma_roce_mode -d mlx5_0 -p 1 -m 2` → `RoCE v2`) and NVIDIA's mlnx-tools (sbin/cma_roce_mode);
        the configfs knob, its mkdir and its values "IB/RoCE v1" / "RoCE v2" — Linux Documentation/ABI/testing/
        configfs-rdma_cm, https://kernel.org/doc/Documentation/ABI/testing/configfs-rdma_cm, and NVIDIA's
        "Default RoCE Mode Setting for RDMA_CM Application" (`echo "RoCE v2" > …/default_roce_mode`),
        https://docs.nvidia.com/networking/display/sles15sp4/default+roce+mode+setting+for+rdma_cm+application;
        `mkdir` / `echo` — coreutils / the shell; the unit — systemd.unit(5), systemd.service(5) (Type=oneshot,
        After=, WantedBy=), `systemctl enable --now` — systemctl(1) (Debian systemd).

Fix safety
    safe: affects new rdma_cm connections only. `roce-wizard fix` sets it now and writes and enables
    the boot hook /etc/systemd/system/roce-wizard-cma-roce-mode.service (a oneshot unit
    After=openibd.service running the same cma_roce_mode command), so it survives reboots.
"""


from roce_wizard.checklib.findings import bad, excerpt, good, shown, skip
from roce_wizard.checklib.linux import boot_unit_steps, safe_rdmadev
from roce_wizard.commands.handfix import RDMA_DEVICE, pasteable
from roce_wizard.model import (
    Check,
    Facts,
    Finding,
    FixPlan,
    Policy,
    RebootKind,
    Safety,
    Severity,
    Stage,
    Step,
    TargetKind,
)
from roce_wizard.probes import rdma_device

CHECK = Check(
    code="RW408",
    slug="rdma-cm-roce-v2",
    title="rdma_cm default mode RoCE v2",
    stage=Stage.GUEST,
    target=(TargetKind.GUEST, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=("cma_roce_mode",),
    depends_on=("RW402",),
    fix_hint="cma_roce_mode -d <dev> -p 1 -m 2, plus a boot hook (not persistent)",
)


def fix_for(dev: str | None, port: int = 1) -> str:
    return pasteable(lambda: _fix_text(shown(dev, safe_rdmadev, "<dev>"), int(port)), RDMA_DEVICE)


def _fix_text(dev: str, port: int) -> str:
    return (f"cma_roce_mode -d {dev} -p {port} -m 2  # not persistent: add a boot hook, e.g. a systemd oneshot unit "
            f"(After=openibd.service) with ExecStart=/usr/sbin/cma_roce_mode -d {dev} -p {port} -m 2")


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    cma = facts.need("cma_roce_mode") or {}
    raw = facts.raw.get("cma_roce_mode")
    # the parser reads -d/-p (and the script's defaults) from the command line; with no command line, or
    # one answer after two commands, the device is unknown: never the first `-d` of the paste
    dev = cma.get("device") or (rdma_device(facts.target, facts.data) if facts.target else None)
    port = cma.get("port") or (1 if facts.target and dev else None)
    mode = cma.get("mode")
    subject = f"{dev or '<dev>'}/{port or '<port>'}"
    ev = excerpt(raw, r"RoCE")
    if mode is None and cma.get("configfs_missing"):
        return [skip(CHECK, facts, f"cannot read the rdma_cm mode of {subject}: no cma_roce_mode (inbox rdma-core) and "
                     f"rdma_cm's configfs group for {dev or '<dev>'} does not exist (`mkdir /sys/kernel/config/rdma_cm/"
                     f"{dev or '<dev>'}` creates it — a write this read-only check does not do)", expected="RoCE v2",
                     excerpt=excerpt(raw, r"default_roce_mode"))]
    if mode is None:
        return [skip(CHECK, facts, f"cannot read the rdma_cm mode of {subject}", expected="RoCE v2", excerpt=ev)]
    if mode == "RoCE v2":
        return [good(CHECK, facts, f"rdma_cm default on {subject} is RoCE v2", observed=mode, expected="RoCE v2",
                     excerpt=ev, subject=subject)]
    return [bad(CHECK, facts, f"rdma_cm default on {subject} is {mode}: rdma_cm applications use RoCE v1",
                observed=mode, expected="RoCE v2", excerpt=ev, subject=subject, fix=fix_for(dev, port))]


UNIT = "roce-wizard-cma-roce-mode.service"


def plan_fix(facts: Facts, policy: Policy, *, failed: list) -> FixPlan | None:
    """cma_roce_mode -m 2 now + a systemd oneshot unit re-applying it at boot; None when compliant."""
    bad_ones = failed  # the engine's guard: this check's failing findings, never empty
    f = bad_ones[0]
    dev, _, port = (f.subject or "").partition("/")
    if not dev or dev == "<dev>":
        return None  # no RDMA device known: nothing to aim the command at (RW402 says why)
    cmd = f"/usr/sbin/cma_roce_mode -d {safe_rdmadev(dev)} -p {int(port or 1)} -m 2"
    return FixPlan(CHECK.code, facts.target_name, f"rdma_cm default RoCE v2 on {f.subject}, now and at every boot",
                   steps=(Step(f"set the rdma_cm default mode of {f.subject} to RoCE v2 now", cmd,
                               before=str(f.observed), after="RoCE v2"),
                          *boot_unit_steps(UNIT, f"roce-wizard RW408: rdma_cm default RoCE v2 on {dev}", [cmd])),
                   safety=Safety.SAFE, reboot=RebootKind.NONE)
