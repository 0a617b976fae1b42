"""RW211 ecn-enabled — nmlx5_core has ECN (DCQCN congestion control) on

What it checks
    `esxcli system module parameters list -m nmlx5_core` → `ecn` is 1. Unset passes with a note:
    the driver default is ecn=1 (seed 000: "The ecn=1 is set by default, but we explicitly set it
    to clarify that the feature is turned on").

Why it matters
    With ECN the switch marks instead of dropping or pausing early, and the RoCE senders slow down
    (DCQCN). Without it PFC alone carries congestion, pause storms spread across the fabric and
    tail latency grows.

How to fix by hand
    `parameters set` REPLACES the whole string: read the current string, change only ecn, write it
    all back:
        esxcli system module parameters list -m nmlx5_core
        esxcli system module parameters set -m nmlx5_core -p "<current params> ecn=1"
    then reboot the host.

Fix safety
    disruptive: driver parameters take effect at the next host reboot; a string written without
    the other keys loses max_vfs, PFC and trust.
"""

from roce_wizard.checkkit import bad, excerpt, format_options_string, good, parse_options_string
from roce_wizard.model import Check, Facts, Finding, Policy, RebootKind, Severity, Stage, TargetKind

CHECK = Check(
    code="RW211",
    slug="ecn-enabled",
    title="ECN enabled (nmlx5_core)",
    stage=Stage.ESXI,
    target=TargetKind.ESXI,
    severity=Severity.WARN,
    probes=("esxi_module_params",),
    depends_on=(),
    reboot=RebootKind.HOST,
    fix_hint='esxcli system module parameters set -m nmlx5_core -p "<all current params> ecn=1"',
)

PARAMS_SET = 'esxcli system module parameters set -m nmlx5_core -p "{}"'


def _current_options(facts: Facts) -> dict:
    mp = facts.need("esxi_module_params")
    if mp.get("options_string") is not None:
        return parse_options_string(mp["options_string"])
    return dict(mp.get("params") or {})


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    options = _current_options(facts)
    value = options.get("ecn")
    ev = excerpt(facts.raw.get("esxi_module_params"), r"\becn\b", r"options\s*=")
    if value is None:
        return [good(CHECK, facts, "ecn is not set: the driver default is ecn=1 (seed 000)", observed=None,
                     expected="1", excerpt=ev)]
    if str(value).strip() == "1":
        return [good(CHECK, facts, "ecn=1", observed=value, expected="1", excerpt=ev)]
    merged = dict(options)
    merged["ecn"] = "1"
    fix = PARAMS_SET.format(format_options_string(merged)) + "  # then reboot the host"
    return [bad(CHECK, facts, f"ecn={value}: ECN / DCQCN congestion control is off", observed=value,
                expected="1", excerpt=ev, fix=fix,
                details={"params_before": format_options_string(options),
                         "params_after": format_options_string(merged)})]
