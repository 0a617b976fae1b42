"""RW411 roce-traffic-class — the device's default RoCE traffic class carries the RoCE DSCP

What it checks
    `cat /sys/class/infiniband/<dev>/tc/1/traffic_class` (MLNX_OFED): when set (`Global tclass=106`),
    its DSCP part (tclass >> 2; the low 2 bits are ECN) equals the policy's `roce_dscp`
    (26 → tclass 104, or 106 with ECT(0)). When empty (not set) it passes with a note: then the
    application must set the traffic class itself (UCX_IB_TRAFFIC_CLASS, RW604).

Why it matters
    With trust dscp the switch and the NIC put RoCE into the lossless priority only when its
    packets carry the right DSCP. A set "Global tclass" applies to the port's RoCE traffic over
    what applications ask for, so a wrong value sends RoCE into a lossy queue whatever UCX says.

How to fix by hand
    echo 104 > /sys/class/infiniband/<dev>/tc/1/traffic_class       (roce_dscp << 2)
    It is not persistent: add it to a boot hook (systemd oneshot After=openibd.service). Unset is
    fine too when every job sets UCX_IB_TRAFFIC_CLASS=104 (RW604).

Fix safety
    safe: affects new QPs only. `roce-wizard fix` writes roce_dscp << 2 now and writes and enables
    the boot hook /etc/systemd/system/roce-wizard-traffic-class.service (a oneshot unit
    After=openibd.service echoing the same value), so it survives reboots and driver restarts at boot.
"""

from roce_wizard.checkkit import bad, boot_unit_steps, excerpt, failing, good, safe_rdmadev, skip
from roce_wizard.checkkit import safe_rdmadev
from roce_wizard.handfix import RDMA_DEVICE, pasteable
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
    code="RW411",
    slug="roce-traffic-class",
    title="RoCE default traffic class",
    stage=Stage.GUEST,
    target=(TargetKind.GUEST, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=("roce_tc_sysfs",),
    depends_on=("RW402",),
    fix_hint="echo <roce_dscp*4> > /sys/class/infiniband/<dev>/tc/1/traffic_class, from a boot hook",
)


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    failure = facts.failures.get("roce_tc_sysfs")
    if not facts.has("roce_tc_sysfs") and failure and "no such file" in failure.reason.lower():
        # inbox rdma-core has no tc/ knob (MLNX_OFED's mlx5 sysfs): nothing overrides the application's class
        return [good(CHECK, facts, "this stack has no per-port traffic_class knob: the application sets the "
                     f"traffic class (UCX_IB_TRAFFIC_CLASS={policy.traffic_class}, RW604)",
                     observed=None, expected=policy.traffic_class)]
    tc = facts.need("roce_tc_sysfs") or {}
    dev = tc.get("device") or (rdma_device(facts.target, facts.data) if facts.target else None) or "<dev>"
    value = tc.get("traffic_class")
    want = policy.traffic_class
    ev = excerpt(facts.raw.get("roce_tc_sysfs"), r"tclass", r"traffic_class")
    path = f"/sys/class/infiniband/{dev}/tc/1/traffic_class"
    if value is None:
        if tc.get("set"):
            return [skip(CHECK, facts, f"cannot read the traffic class of {dev}", expected=want, excerpt=ev)]
        return [good(CHECK, facts, f"no default traffic class set on {dev}: the application must set it "
                     f"(UCX_IB_TRAFFIC_CLASS={want}, RW604)", observed=None, expected=want, excerpt=ev, subject=dev)]
    observed = {"traffic_class": value, "dscp": value >> 2, "ecn": value & 3}
    if value >> 2 == policy.roce_dscp:
        return [good(CHECK, facts, f"{dev} default tclass {value} = DSCP {value >> 2}", observed=observed,
                     expected=want, excerpt=ev, subject=dev)]
    return [bad(CHECK, facts, f"{dev} default tclass {value} is DSCP {value >> 2}, expected DSCP {policy.roce_dscp} "
                f"(tclass {want})", observed=observed, expected=want, excerpt=ev, subject=dev,
                fix=pasteable(lambda: f"echo {int(want)} > /sys/class/infiniband/{safe_rdmadev(dev)}/tc/1/traffic_class"
                              "  # not persistent: add it to a boot hook (systemd oneshot After=openibd.service)",
                              RDMA_DEVICE))]


UNIT = "roce-wizard-traffic-class.service"


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """echo the policy's tclass now + a systemd oneshot unit writing it at boot; None when compliant."""
    bad_ones = [f for f in failing(evaluate(facts, policy)) if f.subject and f.subject != "<dev>"]
    if not bad_ones:
        return None
    f = bad_ones[0]
    want = int(policy.traffic_class)
    path = f"/sys/class/infiniband/{safe_rdmadev(f.subject)}/tc/1/traffic_class"
    before = (f.observed or {}).get("traffic_class")
    return FixPlan(CHECK.code, facts.target_name, f"default RoCE traffic class {want} (DSCP {policy.roce_dscp}) on "
                   f"{f.subject}, now and at every boot",
                   steps=(Step(f"set the default traffic class of {f.subject} now", f"echo {want} > {path}",
                               before=str(before), after=str(want)),
                          *boot_unit_steps(UNIT, f"roce-wizard RW411: RoCE traffic class {want} on {f.subject}",
                                           [f'/bin/sh -c "echo {want} > {path}"'])),
                   safety=Safety.SAFE, reboot=RebootKind.NONE)
