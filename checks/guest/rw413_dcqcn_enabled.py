"""RW413 dcqcn-enabled — DCQCN acts on the RoCE priority: both halves on, the firmware mask covers it

What it checks
    On a host that owns the PF (bare metal; an ESXi host for the firmware part):
    - MLNX_OFED's switches `/sys/class/net/<netdev>/ecn/roce_np/enable/<p>` (notification point: this node
      answers ECN-marked packets with CNPs) and `…/roce_rp/enable/<p>` (reaction point: this node slows down
      on CNPs) read 1 for p = the policy's `pfc_priority`. The files exist with MLNX_OFED's mlx5 only; without
      them (inbox kernel) the firmware's defaults rule and the finding says so.
    - the firmware (`mlxconfig -d <dev> -e query`, on ESXi too): `ROCE_CC_PRIO_MASK_P<n>` has the RoCE
      priority's bit set, `CNP_DSCP_P<n>` = policy `cnp_dscp` (48) and `CNP_802P_PRIO_P<n>` = policy
      `cnp_priority` (6) — 255 / 48 / 6 is what the real cards in the corpus captures named under Sources
      show (no NVIDIA page stating them as the firmware defaults was found). A Current value that differs
      from Next Boot is reported (what the host runs now changes at the next reboot).
    n/a in a VF guest: the switches are the PF's (read-only on a VF).

Why it matters
    ECN marks on the switch only slow a sender down when the receiver's notification point sends CNPs and
    the sender's reaction point acts on them. With either half off on the RoCE priority, congestion is
    carried by PFC alone: pause storms and head-of-line blocking instead of rate control (RW608 sees the
    marks with no CNPs). CNPs on another DSCP/priority than the switch expects land in a lossy or a wrong
    queue.

How to fix by hand
        echo 1 > /sys/class/net/<netdev>/ecn/roce_np/enable/<p>
        echo 1 > /sys/class/net/<netdev>/ecn/roce_rp/enable/<p>
    (not persistent: run them from a boot hook, a systemd oneshot After=openibd.service), and for the
    firmware keys
        mlxconfig -d <pci|mst device> -y set ROCE_CC_PRIO_MASK_P1=255 CNP_DSCP_P1=48 CNP_802P_PRIO_P1=6
    then reboot the host (Next Boot values).
    Sources: the sysfs files and `echo 1 > …/enable/<X>` — NVIDIA MLNX_OFED Documentation, "Explicit
    Congestion Notification (ECN)" (https://docs.nvidia.com/networking/display/MLNXOFEDv497100LTS/
    Explicit+Congestion+Notification+(ECN)); the firmware keys and their defaults — corpus
    mlxconfig_query/cx4lx-mcx4121a-full-next-boot-trailing-pad.txt (ROCE_CC_PRIO_MASK_P1 255, CNP_DSCP_P1 48,
    CNP_802P_PRIO_P1 6) and mlxconfig_query/cx6-egrep-roce-cc-lldp-dcbx-off-9-space-indent.txt;
    `mlxconfig -y set K=V` — corpus mlxconfig_set/*; the boot unit — systemd.service(5) (Type=oneshot).

Fix safety
    safe for the sysfs switches (new and running QPs follow them at once): `roce-wizard fix` writes them and
    the boot hook /etc/systemd/system/roce-wizard-dcqcn.service. disruptive for the firmware keys: one
    `mlxconfig -d <dev> -y set …` with every wrong key, applied at the next host reboot. A value already
    right for Next Boot and only waiting for the reboot is no plan: the reboot ledger carries it.
"""

from roce_wizard.checklib.dcqcn import (
    firmware_sets,
    firmware_state,
    mlx_command,
    sysfs_paths,
    sysfs_state,
)
from roce_wizard.checklib.findings import bad, excerpt, failing, good, skip
from roce_wizard.checklib.linux import boot_unit_steps
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

CHECK = Check(
    code="RW413",
    slug="dcqcn-enabled",
    title="DCQCN on the RoCE priority",
    stage=Stage.GUEST,
    target=(TargetKind.GUEST, TargetKind.LINUX, TargetKind.ESXI),
    severity=Severity.FAIL,
    probes=(),
    # a VF guest reads neither (n/a there); ESXi reads the firmware only
    optional_probes=("roce_ecn_sysfs", "mlxconfig_query"),
    # on ESXi the firmware is read with MFT (RW201) through the mst device (RW202); no findings elsewhere
    depends_on=("RW201", "RW202"),
    reboot=RebootKind.HOST,
    fix_hint="echo 1 > /sys/class/net/<if>/ecn/roce_{np,rp}/enable/<p> (boot hook); "
             "mlxconfig -y set ROCE_CC_PRIO_MASK_P1=255 CNP_DSCP_P1=48 CNP_802P_PRIO_P1=6; reboot",
)

UNIT = "roce-wizard-dcqcn.service"


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    t = facts.target
    if t is not None and t.kind is TargetKind.GUEST:
        host = t.host or "the ESXi host"
        return [skip(CHECK, facts, f"n/a in a VF guest: DCQCN is the PF's (RW413 on {host})", expected="n/a",
                     probes=("roce_ecn_sysfs",))]
    findings: list[Finding] = []
    esxi = t is not None and t.kind is TargetKind.ESXI
    if not esxi:
        findings += _sysfs(facts, policy)
    findings += _firmware(facts, policy)
    if not findings:
        findings.append(skip(CHECK, facts, "neither MLNX_OFED's ecn sysfs nor the firmware's ROCE_CC_PRIO_MASK could "
                             "be read", expected="np and rp enabled on the RoCE priority"))
    return findings


def _sysfs(facts: Facts, policy: Policy) -> list[Finding]:
    state = sysfs_state(facts, policy)
    if state is None:
        return []
    prio, raw = policy.pfc_priority, facts.raw.get("roce_ecn_sysfs")
    ev = excerpt(raw, rf"/enable/{prio}\b", r"No such file")
    if state.missing:
        return [good(CHECK, facts, f"{state.netdev}: no MLNX_OFED ecn sysfs (inbox mlx5): DCQCN follows the firmware "
                     "(ROCE_CC_PRIO_MASK)", observed={"np": None, "rp": None}, expected="n/a without MLNX_OFED",
                     excerpt=ev, subject=state.netdev, probes=("roce_ecn_sysfs",))]
    observed = {"np": state.np, "rp": state.rp}
    if state.np is None or state.rp is None:
        return [skip(CHECK, facts, f"{state.netdev}: the ecn sysfs shows no value for priority {prio}",
                     observed=observed, expected=True, excerpt=ev, subject=state.netdev, probes=("roce_ecn_sysfs",))]
    off = [name for name, on in (("notification point (roce_np)", state.np), ("reaction point (roce_rp)", state.rp))
           if not on]
    if off:
        lines = "; ".join(f"echo 1 > {p}" for p in sysfs_paths(state, policy, only_off=True))
        return [bad(CHECK, facts, f"{state.netdev}: DCQCN {' and '.join(off)} disabled on priority {prio}: ECN marks "
                    "do not slow the senders down", observed=observed, expected={"np": True, "rp": True}, excerpt=ev,
                    subject=state.netdev, probes=("roce_ecn_sysfs",),
                    fix=f"{lines}  # not persistent: add to a boot hook (systemd oneshot After=openibd.service)")]
    return [good(CHECK, facts, f"{state.netdev}: DCQCN notification and reaction points enabled on priority {prio}",
                 observed=observed, expected={"np": True, "rp": True}, excerpt=ev, subject=state.netdev,
                 probes=("roce_ecn_sysfs",))]


def _firmware(facts: Facts, policy: Policy) -> list[Finding]:
    out = []
    raw = facts.raw.get("mlxconfig_query")
    for dev in firmware_state(facts, policy):
        ev = excerpt(raw, r"ROCE_CC_PRIO_MASK", r"CNP_DSCP", r"CNP_802P_PRIO")
        if not dev.keys:
            continue  # an older firmware prints no congestion-control keys: its defaults apply
        sets = firmware_sets(dev, policy)
        if dev.problems:
            fix = (mlx_command(facts, dev, sets) + "  # then reboot the host") if sets else \
                f"reboot the host ({dev.label}: Next Boot is right)"
            out.append(bad(CHECK, facts, f"firmware of {dev.label}: " + "; ".join(dev.problems),
                           observed=dev.keys, expected=dev.expected, excerpt=ev, subject=dev.label,
                           probes=("mlxconfig_query",), fix=fix))
        else:
            out.append(good(CHECK, facts, f"firmware of {dev.label}: ROCE_CC_PRIO_MASK covers priority "
                            f"{policy.pfc_priority}, CNPs on DSCP {policy.cnp_dscp} / priority {policy.cnp_priority}",
                            observed=dev.keys, expected=dev.expected, excerpt=ev, subject=dev.label,
                            probes=("mlxconfig_query",)))
    return out


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """The sysfs switches now + a boot hook (safe); one mlxconfig set for the firmware keys (host reboot)."""
    if not failing(evaluate(facts, policy)):
        return None
    steps: list[Step] = []
    reboot, safety = RebootKind.NONE, Safety.SAFE
    state = sysfs_state(facts, policy)
    t = facts.target
    if state is not None and not state.missing and (state.np is False or state.rp is False):
        off = sysfs_paths(state, policy, only_off=True)
        steps += [Step(f"enable DCQCN {p.split('/ecn/')[1].split('/')[0]} on priority {policy.pfc_priority} now",
                       f"echo 1 > {p}", before="0", after="1") for p in off]
        steps += boot_unit_steps(UNIT, f"roce-wizard RW413: DCQCN np/rp on priority {policy.pfc_priority}",
                                 [f'/bin/sh -c "echo 1 > {p}"' for p in sysfs_paths(state, policy)])
    if not (t is not None and t.kind is TargetKind.GUEST):
        for dev in firmware_state(facts, policy):
            sets = firmware_sets(dev, policy)
            cmd = mlx_command(facts, dev, sets) if sets else ""
            if cmd.startswith(("mlxconfig -d ", "/opt/mellanox/bin/mlxconfig -d ")) and "<" not in cmd and "#" not in cmd:
                steps.append(Step(f"write the congestion-control keys of {dev.label} (firmware, Next Boot)",
                                  cmd, before=" ".join(f"{k}={dev.keys.get(k)}" for k in sets),
                                  after=" ".join(f"{k}={v}" for k, v in sets.items())))
                reboot, safety = RebootKind.HOST, Safety.DISRUPTIVE
    if not steps:
        return None
    return FixPlan(CHECK.code, facts.target_name, f"DCQCN on priority {policy.pfc_priority}: notification and reaction "
                   "points, firmware priority mask and CNP class", steps=tuple(steps), safety=safety, reboot=reboot,
                   reboot_reason="mlxconfig writes Next Boot values: a host reboot loads them"
                   if reboot is RebootKind.HOST else "",
                   needs=("RW201", "RW202") if t is not None and t.kind is TargetKind.ESXI and
                   reboot is RebootKind.HOST else ())
