"""RW411 roce-traffic-class — RoCE leaves this node with the lossless class's DSCP by default

What it checks
    `cat /sys/class/infiniband/<dev>/tc/1/traffic_class` (MLNX_OFED): when set (`Global tclass=106`),
    its DSCP part (tclass >> 2; the low 2 bits are ECN) must equal the policy's `roce_dscp`, with
    the ECN bits not-ECT or ECT(0): for DSCP 26 either 104 or 106 passes (UCX's own
    RoCE v2 default is 106 = DSCP 26 with ECT(0); see Sources). Set to anything else fails. UNSET (empty, or no
    tc/ knob
    on an inbox rdma-core stack) WARNS: RoCE then leaves with DSCP 0, lands in priority 0 and is
    lossy unless every application sets its own class — the finding names them
    (UCX_IB_TRAFFIC_CLASS, NCCL_IB_TC, perftest --tclass, rdma_cm's default_roce_tos).
    Also rdma_cm's default TOS: `cat /sys/kernel/config/rdma_cm/<dev>/ports/1/default_roce_tos`
    (a decimal 0-255; the directory exists only after `mkdir /sys/kernel/config/rdma_cm/<dev>`,
    without it rdma_cm QPs use TOS 0 unless the application calls rdma_set_option). Its value is
    reported beside the tclass; set to a different non-zero DSCP it warns on its own.

Why it matters
    With trust dscp the switch and the NIC put RoCE into the lossless priority only when its
    packets carry the right DSCP. A packet without the class goes out on DSCP 0 — priority 0, the
    lossy queue — and a wrong default sends RoCE there whatever the job thinks it asked for.

How to fix by hand
    echo 106 > /sys/class/infiniband/<dev>/tc/1/traffic_class       (roce_dscp << 2, ECT(0) optional)
    It is not persistent: add it to a boot hook (systemd oneshot After=openibd.service). Without
    the knob (inbox rdma-core), every job must set the class itself (UCX_IB_TRAFFIC_CLASS,
    NCCL_IB_TC, RW604), and rdma_cm applications get it from
        mkdir -p /sys/kernel/config/rdma_cm/<dev>
        echo 106 > /sys/kernel/config/rdma_cm/<dev>/ports/1/default_roce_tos
    Sources: the tc/ knob, its empty read and `Global tclass=106` — corpus
    roce_tc_sysfs/centos12-traffic-class-empty-then-set.txt (`echo 106 > …/tc/1/traffic_class`) and
    NVIDIA MLNX_OFED Documentation v24.10-0.7.0.0, "Quality of Service (QoS)",
    https://docs.nvidia.com/networking/display/mlnxofedv24100700/Quality+of+Service+(QoS);
    default_roce_tos and the mkdir — Linux Documentation/ABI/testing/configfs-rdma_cm,
    https://kernel.org/doc/Documentation/ABI/testing/configfs-rdma_cm; the boot unit — systemd.unit(5) /
    systemd.service(5) (Type=oneshot); 106 = DSCP 26 + ECT(0), UCX's RoCE v2 default —
    UCX's source, src/uct/ib/base/ib_device.h `UCT_IB_DEFAULT_ROCEV2_DSCP 106`, used when
    UCX_IB_TRAFFIC_CLASS is auto on RoCE v2, https://github.com/openucx/ucx.

Fix safety
    safe: affects new QPs only. `roce-wizard fix` writes the policy's class now and writes and enables
    the boot hook /etc/systemd/system/roce-wizard-traffic-class.service (a oneshot unit
    After=openibd.service echoing the same value), so it survives reboots and driver restarts at boot.
    Without the tc/ knob nothing is planned (the finding says what each application must set).
"""

from roce_wizard.checklib.findings import bad, excerpt, failing, good, skip
from roce_wizard.checklib.linux import boot_unit_steps, safe_rdmadev
from roce_wizard.commands.handfix import RDMA_DEVICE, refused
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
    Status,
    Step,
    TargetKind,
)
from roce_wizard.probes import UnsafeValue, rdma_device

CHECK = Check(
    code="RW411",
    slug="roce-traffic-class",
    title="RoCE default traffic class",
    stage=Stage.GUEST,
    target=(TargetKind.GUEST, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=("roce_tc_sysfs",),
    optional_probes=("rdma_cm_tos",),
    depends_on=("RW402",),
    fix_hint="echo <roce_dscp*4 (+2 for ECT(0))> > /sys/class/infiniband/<dev>/tc/1/traffic_class, from a boot hook",
)


def _right(value: int, policy: Policy) -> bool:
    """DSCP = roce_dscp, ECN bits not-ECT (104) or ECT(0) (106): UCX's default is 106."""
    return value >> 2 == policy.roce_dscp and value & 3 in (0, 2)


def _accepted(policy: Policy) -> str:
    return f"{policy.roce_dscp << 2} or {policy.roce_dscp << 2 | 2}"


def _apps(policy: Policy) -> str:
    want = policy.traffic_class
    return (f"UCX_IB_TRAFFIC_CLASS={want}, NCCL_IB_TC={want}, perftest --tclass={want} (RW604), and rdma_cm's "
            "default_roce_tos for rdma_cm applications")


def _rdma_cm(facts: Facts, dev: str, policy: Policy) -> tuple[str, dict, Finding | None]:
    """(a note for the main finding, observed values, a finding of its own when it is set wrong)."""
    tos = facts.get("rdma_cm_tos")
    failure = facts.failures.get("rdma_cm_tos")
    if tos is None or tos.get("error"):
        why = (tos or {}).get("error") or (failure.reason if failure else "")
        if "no such file" in why.lower():
            return ("; rdma_cm: no configfs directory for the device, so rdma_cm QPs use TOS 0 unless the "
                    "application sets one", {"rdma_cm_default_roce_tos": None}, None)
        return "", {}, None  # not read (analyze without it, an older kernel): nothing to say
    value = tos.get("tos")
    observed = {"rdma_cm_default_roce_tos": value}
    if value is None:
        return "", {}, None
    if _right(value, policy):
        return f"; rdma_cm default_roce_tos {value} = DSCP {value >> 2}", observed, None
    if value == 0:
        return ("; rdma_cm default_roce_tos 0: rdma_cm QPs use DSCP 0 unless the application sets a TOS",
                observed, None)
    path = f"/sys/kernel/config/rdma_cm/{dev}/ports/1/default_roce_tos"
    f = bad(CHECK, facts, f"{dev} rdma_cm default_roce_tos {value} is DSCP {value >> 2}, expected DSCP "
            f"{policy.roce_dscp} ({_accepted(policy)}): rdma_cm QPs land in another priority", observed=observed,
            expected=_accepted(policy), excerpt=excerpt(facts.raw.get("rdma_cm_tos"), r"\d"),
            subject=f"{dev} rdma_cm", fix=refused(RDMA_DEVICE) if dev == "<dev>" else
            f"echo {policy.traffic_class} > {path}  # not persistent: boot hook")
    f.status = Status.WARN
    return "", observed, f


def _safe_dev(dev: str) -> str:
    try:
        return safe_rdmadev(dev)
    except UnsafeValue:
        return "<dev>"


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    failure = facts.failures.get("roce_tc_sysfs")
    want = policy.traffic_class
    no_knob = not facts.has("roce_tc_sysfs") and failure and "no such file" in failure.reason.lower()
    tc = {} if no_knob else (facts.need("roce_tc_sysfs") or {})
    dev = tc.get("device") or (rdma_device(facts.target, facts.data) if facts.target else None) or "<dev>"
    unsafe = dev != "<dev>" and _safe_dev(dev) == "<dev>"  # the host printed a name a shell would act on
    dev = _safe_dev(dev) if dev != "<dev>" else dev
    note, cm_observed, cm_finding = _rdma_cm(facts, dev, policy)
    extra = [cm_finding] if cm_finding else []
    if no_knob:
        # inbox rdma-core has no tc/ knob (MLNX_OFED's mlx5 sysfs): nothing sets a default class
        f = bad(CHECK, facts, f"this stack has no per-port traffic_class knob on {dev}: RoCE leaves with DSCP 0 "
                f"(priority 0, lossy) unless every application sets its class: {_apps(policy)}{note}",
                observed={"traffic_class": None, **cm_observed}, expected=_accepted(policy),
                fix=(f"set the class in every job: UCX_IB_TRAFFIC_CLASS={want} NCCL_IB_TC={want} (RW604), perftest "
                     f"--tclass={want}\n# rdma_cm applications: mkdir -p /sys/kernel/config/rdma_cm/{dev} && echo "
                     f"{want} > /sys/kernel/config/rdma_cm/{dev}/ports/1/default_roce_tos  # not persistent"))
        f.status = Status.WARN
        return [f, *extra]
    value = tc.get("traffic_class")
    ev = excerpt(facts.raw.get("roce_tc_sysfs"), r"tclass", r"traffic_class")
    path = f"/sys/class/infiniband/{dev}/tc/1/traffic_class"
    if value is None:
        if tc.get("set"):
            return [skip(CHECK, facts, f"cannot read the traffic class of {dev}", expected=want, excerpt=ev), *extra]
        f = bad(CHECK, facts, f"no default traffic class set on {dev}: RoCE leaves with DSCP 0 (priority 0, lossy) "
                f"unless every application sets its class: {_apps(policy)}{note}",
                observed={"traffic_class": None, **cm_observed}, expected=_accepted(policy), excerpt=ev,
                subject=None if dev == "<dev>" else dev,
                fix=refused(RDMA_DEVICE) if unsafe else (f"echo {want} > {path}  # not persistent: add it to a boot "
                                                         "hook (systemd oneshot After=openibd.service)"))
        f.status = Status.WARN
        return [f, *extra]
    observed = {"traffic_class": value, "dscp": value >> 2, "ecn": value & 3, **cm_observed}
    if _right(value, policy):
        return [good(CHECK, facts, f"{dev} default tclass {value} = DSCP {value >> 2}{note}", observed=observed,
                     expected=_accepted(policy), excerpt=ev, subject=dev), *extra]
    return [bad(CHECK, facts, f"{dev} default tclass {value} is DSCP {value >> 2} (ECN bits {value & 3}), expected "
                f"DSCP {policy.roce_dscp} (tclass {_accepted(policy)})", observed=observed,
                expected=_accepted(policy), excerpt=ev, subject=dev,
                fix=refused(RDMA_DEVICE) if unsafe else (f"echo {want} > {path}  # not persistent: add it to a boot "
                                                         "hook (systemd oneshot After=openibd.service)")), *extra]


UNIT = "roce-wizard-traffic-class.service"


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """echo the policy's tclass now + a systemd oneshot unit writing it at boot; None when compliant."""
    bad_ones = [f for f in failing(evaluate(facts, policy))
                if f.subject and f.subject != "<dev>" and not f.subject.endswith(" rdma_cm")]
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
