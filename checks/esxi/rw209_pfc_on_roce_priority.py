"""RW209 pfc-on-roce-priority — nmlx5_core enables PFC on the RoCE priority only

What it checks
    `esxcli system module parameters list -m nmlx5_core` → `pfctx` and `pfcrx` both equal the
    bitmask of the site's lossless priority, `1 << pfc_priority` (0x08 for priority 3; `8` and
    `0x08` are the same value). Unset means the driver default: PFC off.

Why it matters
    RoCE needs a lossless class. Without PFC the host neither honours the switch's pause frames
    nor sends its own, and every congestion drop costs a RoCE retransmission timeout (Sandia:
    throughput collapses under incast). PFC on another priority than the switch's no-drop
    priority is the "half-lossless" trap: both ends look configured, neither is.

How to fix by hand
    `parameters set` REPLACES the whole string: setting pfctx alone silently drops max_vfs,
    trust_state and ecn. Read the current string, change only pfctx/pfcrx, write it all back:
        esxcli system module parameters list -m nmlx5_core
        esxcli system module parameters set -m nmlx5_core -p "<current params> pfctx=0x08 pfcrx=0x08"
    then reboot the host (seed 000: `pfctx=0x08 pfcrx=0x08 trust_state=2 max_vfs=0,0,8,7 ecn=1`).
    Sources: both commands and the keys — "ESXi 7.0: NVIDIA NATIVE Driver for VMware vSphere User Manual v4.19.71.1", "Module Parameters"
        (`esxcli system module parameters set -m nmlx5_core -p <parameter>=<value>`, `… list -m <module name>`,
        reboot to apply), https://docs.nvidia.com/networking/display/VMwareUMv419711/Module+Parameters;
        the full string as written — seed 000 (`parameters set -m nmlx5_core -p "pfctx=0x08 pfcrx=0x08
        trust_state=2 max_vfs=0,0,8,7 ecn=1"`).

Fix safety
    disruptive: driver parameters take effect at the next host reboot; a string written without
    the other keys loses the VFs (max_vfs) and the trust mode.
    The tool writes the ONE desired nmlx5_core string (every policy key put right, every other key
    such as max_vfs kept); the preview shows the full string before and after.
"""

from roce_wizard.checklib.esxi import merged_params_fix, module_params, params_details, params_fix_plan
from roce_wizard.checklib.findings import bad, excerpt, good
from roce_wizard.model import (
    Check,
    Facts,
    Finding,
    FixPlan,
    Policy,
    RebootKind,
    Severity,
    Stage,
    TargetKind,
)

CHECK = Check(
    code="RW209",
    slug="pfc-on-roce-priority",
    title="PFC on the RoCE priority (nmlx5_core)",
    stage=Stage.ESXI,
    target=TargetKind.ESXI,
    severity=Severity.FAIL,
    probes=("esxi_module_params",),
    depends_on=(),
    reboot=RebootKind.HOST,
    fix_hint='esxcli system module parameters set -m nmlx5_core -p "<all current params> pfctx=0x08 pfcrx=0x08"',
)


KEYS = ("pfctx", "pfcrx")


def _as_int(value: str | None) -> int | None:
    if value is None:
        return None
    s = str(value).strip()
    for base in (0, 10, 16):
        try:
            return int(s, base)
        except ValueError:
            continue
    return None


def _priorities(mask: int | None) -> list[int]:
    return [p for p in range(8) if mask is not None and mask >> p & 1]


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    options = module_params(facts)
    mask = policy.pfc_bitmask
    want = f"0x{mask:02x}"
    observed = {k: options.get(k) for k in KEYS}
    expected = {k: want for k in KEYS}
    ev = excerpt(facts.raw.get("esxi_module_params"), r"\bpfc(tx|rx)\b", r"options\s*=")
    wrong = [k for k in KEYS if _as_int(options.get(k)) != mask]
    if not wrong:
        return [good(CHECK, facts, f"PFC on priority {policy.pfc_priority} (pfctx={observed['pfctx']}, "
                     f"pfcrx={observed['pfcrx']})", observed=observed, expected=expected, excerpt=ev)]
    problems = []
    for k in wrong:
        value = options.get(k)
        if value is None:
            problems.append(f"{k} is not set (driver default: PFC off)")
        else:
            prios = _priorities(_as_int(value))
            on = f"priorit{'y' if len(prios) == 1 else 'ies'} {','.join(map(str, prios))}" if prios else "no priority"
            problems.append(f"{k}={value} enables PFC on {on}, not {policy.pfc_priority}")
    changes = {k: want for k in wrong}
    return [bad(CHECK, facts, "; ".join(problems), observed=observed, expected=expected, excerpt=ev,
                fix=merged_params_fix(facts, policy, changes), details=params_details(facts, policy, changes))]


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """Write the one desired nmlx5_core parameter string (before/after: the full strings)."""
    return params_fix_plan(CHECK, facts, policy, f"PFC on priority {policy.pfc_priority}: pfctx=pfcrx=0x{policy.pfc_bitmask:02x} (full nmlx5_core string)")
