"""RW409 host-qos — the PF's QoS: trust dscp, PFC exactly on the RoCE priority, DSCP maps to it

What it checks
    `mlnx_qos -i <netdev>` on a host that owns the PF (bare metal): `Priority trust state` equals
    the policy's trust (dscp); the PFC `enabled` row is 1 on `pfc_priority` and 0 elsewhere; and
    the policy's `roce_dscp` maps to `pfc_priority` through the device's own `dscp2prio` table
    (when the table is not printed, the default table prio = dscp >> 3 is assumed and said so).
    In a VF guest this is n/a: the VF cannot see or change PFC/trust; they belong to the PF, i.e.
    the ESXi host's nmlx5_core parameters (RW209 pfctx/pfcrx, RW210 trust_state).

Why it matters
    With trust pcp, untagged RoCE v2 traffic lands in priority 0 and the lossless class is never
    used; with PFC on the wrong (or on every) priority the "lossless" fabric drops or pauses
    everything; and a DSCP that maps elsewhere (seed 004's "priority 3 is DSCP 30–39" is wrong: the
    default map is dscp >> 3, so 24–31) sends RoCE into a lossy queue. Global pause collapses
    under incast (seed 001).

How to fix by hand
        mlnx_qos -i <netdev> --trust=dscp --pfc 0,0,0,1,0,0,0,0      (1 at the RoCE priority)
    and, only if the device's table maps roce_dscp elsewhere (a separate call: mlnx_qos refuses
    --trust and --dscp2prio together):
        mlnx_qos -i <netdev> --dscp2prio set,<dscp>,<priority>
    mlnx_qos settings do not survive a reboot: run the same command from a boot hook (a systemd
    oneshot unit After=openibd.service, or the distribution's network hook), or let the switch
    push them via DCBX with firmware-controlled DCBX.
    Sources: `mlnx_qos -i <if> --trust=dscp --pfc 0,0,0,1,0,0,0,0` — seed 004 (`sudo mlnx_qos -i eth0
        --trust=dscp --pfc 0,0,0,1,0,0,0,0`) and corpus mlnx_qos/* (the probe's `mlnx_qos -i <if>` output);
        `--dscp2prio set,<dscp>,<prio>` — NVIDIA's mlnx-tools source, python/mlnx_qos (the set/del/flush
        actions; it refuses --trust and --dscp2prio in one call, so the tool runs them as two commands);
        the boot unit — systemd.unit(5), systemd.service(5) (Debian systemd).

Fix safety
    safe: applies at once; traffic on the changed priorities may see a brief pause. Bare metal only
    (n/a in a VF guest: no plan). `roce-wizard fix` runs mlnx_qos now and writes and enables the boot
    hook /etc/systemd/system/roce-wizard-qos.service (a oneshot unit After=openibd.service running the
    same mlnx_qos commands), since mlnx_qos settings do not survive a reboot.
"""

import re

from roce_wizard.checklib.findings import bad, excerpt, failing, good, shown, skip
from roce_wizard.checklib.linux import boot_unit_steps, safe_netdev
from roce_wizard.commands.handfix import NETDEV, pasteable
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
    code="RW409",
    slug="host-qos",
    title="Host QoS (trust, PFC, DSCP map)",
    stage=Stage.GUEST,
    target=(TargetKind.GUEST, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=(),
    # a VF guest never runs mlnx_qos (n/a there): optional so the guest gets its n/a finding
    optional_probes=("mlnx_qos",),
    fix_hint="mlnx_qos -i <if> --trust=dscp --pfc 0,0,0,1,0,0,0,0, run again at every boot",
)


def _interface(facts: Facts) -> str | None:
    if facts.target is not None and facts.target.roce.netdev:
        return facts.target.roce.netdev
    qos = facts.get("mlnx_qos") or {}
    if qos.get("interface"):
        return qos["interface"]
    m = re.search(r"mlnx_qos\s+.*?-i\s+(\S+)", facts.raw.get("mlnx_qos") or "")
    return m.group(1) if m else None


def _qos_fix(iface: str, trust: str, pfc_arg: str, extra_fix: str) -> str:
    """The pasteable mlnx_qos line(s): two calls, since mlnx_qos refuses --trust and --dscp2prio together
    (NVIDIA mlnx-tools, python/mlnx_qos: "trust and dscp2prio commands cannot be used at the same time")."""
    second = f"; mlnx_qos -i {iface}{extra_fix}" if extra_fix else ""
    return (f"mlnx_qos -i {iface} --trust={trust} --pfc {pfc_arg}{second}  # not persistent: run it again at every "
            "boot (systemd oneshot After=openibd.service) or let the switch push it via DCBX")


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    t = facts.target
    if t is not None and t.kind is TargetKind.GUEST:
        host = t.host or "the ESXi host"
        return [skip(CHECK, facts, f"n/a in a VF guest: QoS belongs to the PF (RW209/RW210 on {host})",
                     expected="n/a", probes=("mlnx_qos",))]
    qos = facts.need("mlnx_qos")  # missing on bare metal: the engine reports why (tool missing → RW002)
    raw = facts.raw.get("mlnx_qos")
    ifname = _interface(facts)
    label = ifname or "the PF"
    prio = policy.pfc_priority
    want_pfc = [1 if i == prio else 0 for i in range(8)]
    trust, pfc = qos.get("trust"), qos.get("pfc")
    table = {int(k): int(v) for k, v in (qos.get("dscp2prio") or {}).items()}
    problems: list[str] = []
    extra_fix = ""
    dscp_prio = None
    table_note = ""
    if trust != policy.trust:
        problems.append(f"trust {trust}" + (" (untagged RoCE v2 lands in priority 0)" if trust == "pcp" else ""))
    if list(pfc or []) != want_pfc:
        on = [i for i, v in enumerate(pfc or []) if v]
        problems.append(f"PFC enabled on priorities {on or 'none'}, expected only {prio}")
    if policy.trust == "dscp" and trust == "dscp":
        if table:
            dscp_prio = table.get(policy.roce_dscp)
        else:
            dscp_prio, table_note = policy.roce_dscp >> 3, " (dscp2prio not printed: the default table dscp>>3 assumed)"
        if dscp_prio != prio:
            problems.append(f"DSCP {policy.roce_dscp} maps to priority {dscp_prio}, not {prio}")
            extra_fix = f" --dscp2prio set,{policy.roce_dscp},{prio}"
    observed = {"trust": trust, "pfc": pfc, "roce_dscp_priority": dscp_prio}
    expected = {"trust": policy.trust, "pfc": want_pfc, "roce_dscp_priority": prio}
    ev = excerpt(raw, r"trust state", r"^\s*priority\s+0", r"^\s*enabled", rf"prio:{prio}\b")
    if problems:
        pfc_arg = ",".join(map(str, want_pfc))
        fix = pasteable(lambda: _qos_fix(shown(ifname, safe_netdev, "<if>"), policy.trust, pfc_arg, extra_fix), NETDEV)
        return [bad(CHECK, facts, f"{label}: " + "; ".join(problems) + table_note, observed=observed,
                    expected=expected, excerpt=ev, fix=fix, subject=ifname, probes=("mlnx_qos",))]
    mapped = f", DSCP {policy.roce_dscp} -> priority {prio}{table_note}" if dscp_prio is not None else ""
    return [good(CHECK, facts, f"{label}: trust {trust}, PFC only on priority {prio}{mapped}", observed=observed,
                 expected=expected, excerpt=ev, subject=ifname, probes=("mlnx_qos",))]


UNIT = "roce-wizard-qos.service"


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """mlnx_qos trust + PFC (+ dscp2prio when the table maps elsewhere) now, and a systemd oneshot unit
    running the same at boot; None when compliant or n/a (VF guest)."""
    bad_ones = failing(evaluate(facts, policy))
    ifname = _interface(facts)
    if not bad_ones or not ifname:
        return None
    f = bad_ones[0]
    if policy.trust not in ("dscp", "pcp"):
        raise ValueError(f"policy trust {policy.trust!r} is not dscp or pcp")
    prio = int(policy.pfc_priority)
    pfc = ",".join("1" if i == prio else "0" for i in range(8))
    nd = safe_netdev(ifname)
    cmds = [f"/usr/sbin/mlnx_qos -i {nd} --trust {policy.trust} --pfc {pfc}"]
    obs = f.observed or {}
    if policy.trust == "dscp" and obs.get("roce_dscp_priority") not in (None, prio):
        # mlnx_qos refuses --trust and --dscp2prio in one call
        cmds.append(f"/usr/sbin/mlnx_qos -i {nd} --dscp2prio set,{int(policy.roce_dscp)},{prio}")
    before = f"trust {obs.get('trust')} pfc {','.join(map(str, obs.get('pfc') or [])) or '?'}"
    steps = [Step(f"set trust {policy.trust} and PFC on priority {prio} on {ifname} now", cmds[0], before=before,
                  after=f"trust {policy.trust} pfc {pfc}")]
    if len(cmds) > 1:
        steps.append(Step(f"map DSCP {policy.roce_dscp} to priority {prio} on {ifname} now", cmds[1],
                          before=f"DSCP {policy.roce_dscp} -> priority {obs.get('roce_dscp_priority')}",
                          after=f"DSCP {policy.roce_dscp} -> priority {prio}"))
    steps += boot_unit_steps(UNIT, f"roce-wizard RW409: QoS of {ifname} (trust {policy.trust}, PFC {pfc})", cmds)
    return FixPlan(CHECK.code, facts.target_name, f"{ifname}: trust {policy.trust}, PFC only on priority {prio}, "
                   "now and at every boot", steps=tuple(steps), safety=Safety.SAFE, reboot=RebootKind.NONE)
