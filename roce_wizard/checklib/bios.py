"""What the bios checks (RW101–RW104) share: BIOS attributes by vendor, the Redfish judgement
with staged values, the fix-by-hand (curl PATCH + config job, or the BIOS setup menu path), and
which source a finding used.

Checks stay pure: these functions only read `Facts` and build `Finding`s.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from typing import Any

from roce_wizard.checklib.findings import bad, good, skip
from roce_wizard.commands.handfix import REDFISH_URI, pasteable
from roce_wizard.commands.redfish import bios_set_line, valid_setting
from roce_wizard.commands.shell import UnsafeValue
from roce_wizard.model import (
    Check,
    Facts,
    Finding,
    FixPlan,
    MissingFact,
    Policy,
    RebootKind,
    Safety,
    SecretSource,
    Status,
    Step,
    Target,
    TargetKind,
)

__all__ = [
    "Knob",
    "bios_plan",
    "bmc_skip",
    "judge_redfish",
    "menu_fix",
    "redfish_source",
    "uses_redfish",
]

_DELL_SETUP = "F2 System Setup > System BIOS"
_HPE_SETUP = "F9 System Utilities > System Configuration > BIOS/Platform Configuration (RBSU)"


@dataclass(frozen=True)
class Knob:
    """One BIOS attribute that carries a check's setting, its healthy value and its setup menu path."""

    attribute: str
    good: str
    vendor: str  # whose attribute name this is: dell / hpe
    menu: str
    note: str = ""  # what the finding says about this knob (e.g. "VT-d rides on it")
    # other values that are fine as they are (RW104: every performance profile, not only the one the
    # fix would stage); the fix still stages `good`
    accepted: tuple[str, ...] = ()

    def ok(self, value: Any) -> bool:
        return value == self.good or value in self.accepted


# per check, the attributes that carry the setting, most specific first
KNOBS: dict[str, tuple[Knob, ...]] = {
    "RW101": (
        Knob("ProcVirtualization", "Enabled", "dell",
             f"{_DELL_SETUP} > Processor Settings > Virtualization Technology: Enabled"),
        Knob("ProcVirtualization", "Enabled", "hpe",
             f"{_HPE_SETUP} > Virtualization Options > Intel(R) Virtualization Technology: Enabled"),
    ),
    "RW102": (
        Knob("IntelProcVtd", "Enabled", "hpe", f"{_HPE_SETUP} > Virtualization Options > Intel(R) VT-d: Enabled"),
        # Dell PowerEdge (Intel) has no VT-d setting of its own: Virtualization Technology turns on both
        Knob("ProcVirtualization", "Enabled", "dell",
             f"{_DELL_SETUP} > Processor Settings > Virtualization Technology: Enabled",
             note="VT-d rides on ProcVirtualization (PowerEdge has no separate VT-d setting)"),
    ),
    "RW103": (
        Knob("SriovGlobalEnable", "Enabled", "dell", f"{_DELL_SETUP} > Integrated Devices > SR-IOV Global Enable: Enabled"),
        Knob("Sriov", "Enabled", "hpe", f"{_HPE_SETUP} > Virtualization Options > SR-IOV: Enabled"),
    ),
    "RW104": (
        # Dell: Performance (PerfOptimized, no power management) is a performance profile too; the
        # BIOS-driven energy savers DAPC (PerfPerWattOptimizedDapc) and DenseCfgOptimized are not
        Knob("SysProfile", "PerfPerWattOptimizedOs", "dell",
             f"{_DELL_SETUP} > System Profile Settings > System Profile: Performance Per Watt (OS)",
             accepted=("PerfOptimized",)),
        # HPE: Static High Performance passes like OS Control; Dynamic Power Savings / Static Low Power warn
        Knob("PowerRegulator", "OsControl", "hpe",
             f"{_HPE_SETUP} > Power and Performance Options > Power Regulator: OS Control Mode",
             accepted=("StaticHighPerf",)),
    ),
}

_BMC_NAME = {"dell": "iDRAC", "hpe": "iLO"}


def redfish_source(vendor: str | None) -> str:
    """'from iDRAC Redfish', 'from iLO Redfish', else 'from BMC Redfish'."""
    return f"from {_BMC_NAME.get(vendor or '', 'BMC')} Redfish"


def uses_redfish(facts: Facts) -> bool:
    """Judge from Redfish: a bmc target, or (analyze) a pasted Redfish BIOS document."""
    target = facts.target
    return (target is not None and target.kind is TargetKind.BMC) or facts.has("redfish_bios")


def bmc_skip(check: Check, facts: Facts) -> Finding | None:
    """On a host a bmc target manages, the BMC's finding is the one: no second verdict from the OS."""
    bmc = facts.get("bmc_of_host")
    if not bmc:
        return None
    return skip(check, facts, f"judged on {bmc} from its Redfish BIOS, not from this host's OS", probes=())


def _knob(code: str, attributes: dict[str, Any], vendor: str | None) -> Knob | None:
    """The knob this BIOS has: the vendor's own first, else whichever attribute the BIOS shows."""
    knobs = [k for k in KNOBS[code] if k.attribute in attributes]
    mine = [k for k in knobs if k.vendor == vendor]
    return (mine or knobs or [None])[0]


def _curl_auth(target: Target | None) -> tuple[str, str]:
    """(TLS option, -u option) for the fix's curl lines; the password only as an env reference."""
    if target is None:
        return "--cacert <bmc-ca.pem>", '-u <user>:"$BMC_PASSWORD"'
    insecure = target.options.get("insecure")
    ca_file = target.options.get("ca_file")
    tls = "-k" if insecure is True or str(insecure).lower() in ("true", "yes", "1") else (
        f"--cacert {shlex.quote(str(ca_file))}" if ca_file else "")
    user = target.credentials.username
    ref = target.credentials.password
    auth = f'-u {shlex.quote(user)}:"${ref.name}"' if ref is not None and ref.source is SecretSource.ENV \
        else f"-u {shlex.quote(user)}"  # curl asks for the password
    return tls, auth


def _base_url(target: Target | None) -> str:
    if target is None:
        return "https://<bmc-address>"
    port = target.port or 443
    host = f"[{target.address}]" if ":" in target.address else target.address
    return f"https://{host}" + (f":{port}" if port != 443 else "")


_REDFISH_PATH = re.compile(r"^/redfish/v1/[A-Za-z0-9_./-]{1,200}$")


def _curl(target: Target | None, method: str, path: str, body: dict[str, Any] | None = None) -> str:
    """One curl line of a fix by hand; `path` (an @odata.id the BMC printed) is validated (UnsafeValue)."""
    tls, auth = _curl_auth(target)
    if not isinstance(path, str) or not _REDFISH_PATH.match(path):
        raise UnsafeValue(f"refusing to put {path!r} into a command")
    url = _base_url(target) + path
    parts = ["curl -sS", tls, auth, f"-X {method}", url if target is None else shlex.quote(url)]
    if body is not None:
        parts += ["-H 'Content-Type: application/json'", f"-d {shlex.quote(json.dumps(body))}"]
    return " ".join(p for p in parts if p)


def redfish_fix(facts: Facts, knob: Knob, doc: dict[str, Any], *, staged: bool = False) -> str:
    """The exact Redfish requests that set `knob` (iDRAC: PATCH + configuration job; iLO: PATCH),
    then the reboot that applies them. `staged`: the value is pending already — only the job (iDRAC)
    and the reboot are left. A URI the BMC printed that does not fit gives a sentence instead."""
    return pasteable(lambda: _redfish_fix_text(facts, knob, doc, staged), REDFISH_URI)


def _redfish_fix_text(facts: Facts, knob: Knob, doc: dict[str, Any], staged: bool) -> str:
    target = facts.target
    settings = doc.get("settings_uri") or ("/redfish/v1/Systems/System.Embedded.1/Bios/Settings"
                                           if knob.vendor == "dell" else "/redfish/v1/Systems/1/Bios/Settings/")
    system = doc.get("system") or {}
    lines = []
    if not staged:
        lines.append(_curl(target, "PATCH", settings, {"Attributes": {knob.attribute: knob.good}}))
    host = (target.host if target is not None else None) or "the server"
    if knob.vendor == "dell":
        manager = (system.get("manager_uri") or "/redfish/v1/Managers/iDRAC.Embedded.1").rstrip("/")
        lines.append(_curl(target, "POST", f"{manager}/Jobs", {"TargetSettingsURI": settings})
                     + ("  # if no BIOS configuration job is scheduled yet (iDRAC > Maintenance > Job Queue)"
                        if staged else "  # the configuration job applies it at the next reboot"))
    reset = system.get("reset_uri")
    reboot = (f"then reboot {host} (maintenance mode first) — or: "
              + (_curl(target, "POST", reset, {"ResetType": "GracefulRestart"}) if reset else "reset the server"))
    lines.append(f"# {reboot}")
    return "\n".join(lines)


def menu_fix(code: str, host_name: str | None = None, extra: str = "") -> str:
    """Fix by hand from the OS-evidence path: the BIOS setup menu path (Dell and HPE), and how to
    get the exact Redfish request instead."""
    dell = next(k for k in KNOBS[code] if k.vendor == "dell")
    hpe = next(k for k in KNOBS[code] if k.vendor == "hpe")
    name = host_name or "<host>"
    return (f"in the BIOS setup — Dell: {dell.menu}; HPE: {hpe.menu}; then reboot {name}"
            + (f"\n{extra}" if extra else "")
            + f"\n# or add the server's BMC to the inventory (kind bmc, host: {name}) to get the exact Redfish PATCH")


def judge_redfish(check: Check, facts: Facts, what: str) -> list[Finding]:
    """The Redfish verdict on one setting, with pending (staged) values taken into account.

    `what` names the setting for people ("VT-x", "SR-IOV Global", …)."""
    doc = facts.need("redfish_bios")
    attributes = doc.get("attributes") or {}
    pending = doc.get("pending")
    vendor = doc.get("vendor")
    source = redfish_source(vendor)
    knob = _knob(check.code, attributes, vendor)
    raw = facts.raw.get("redfish_bios")
    if knob is None:
        names = ", ".join(dict.fromkeys(k.attribute for k in KNOBS[check.code]))
        return [Finding(check.code, Status.ERROR, f"the BIOS shows none of {names} ({source}): cannot judge {what}",
                        target=facts.target_name, observed=None, expected=names,
                        evidence=[facts.evidence("redfish_bios", None)], details={"vendor": vendor})]
    current = attributes.get(knob.attribute)
    staged = (pending or {}).get(knob.attribute)
    ev = _excerpt(raw, knob.attribute) or f'"{knob.attribute}": {json.dumps(current)}'
    observed: dict[str, Any] = {knob.attribute: current}
    if staged is not None:
        observed["pending"] = staged
    expected = " or ".join((knob.good, *knob.accepted))
    kw = {"observed": observed, "expected": {knob.attribute: expected}, "excerpt": ev, "probes": ("redfish_bios",),
          "details": {"source": source, "vendor": vendor, "attribute": knob.attribute}}
    note = f"; {knob.note}" if knob.note else ""
    if knob.ok(current) and (staged is None or knob.ok(staged)):
        return [good(check, facts, f"{what}: {knob.attribute} = {current} ({source}){note}", **kw)]
    if knob.ok(current):
        undo = ("cancel the pending BIOS job before the next reboot (iDRAC > Maintenance > Job Queue, or "
                "`racadm jobqueue delete -i JID_CLEARALL`)" if knob.vendor == "dell"
                else pasteable(lambda: _curl(facts.target, "PATCH",
                                             doc.get("settings_uri") or "/redfish/v1/Systems/1/Bios/Settings/",
                                             {"Attributes": {knob.attribute: knob.good}}), REDFISH_URI))
        return [bad(check, facts, f"{what}: {knob.attribute} = {current} now, but {staged} is staged for the next "
                                  f"reboot ({source})", fix=undo, **kw)]
    if staged is not None and knob.ok(staged):
        return [bad(check, facts, f"{what}: {knob.attribute} = {current} ({source}); {staged} is staged and "
                                  "applies at the next reboot", fix=redfish_fix(facts, knob, doc, staged=True), **kw)]
    shown = current if current is not None else "not set"
    return [bad(check, facts, f"{what}: {knob.attribute} = {shown}, expected {expected} ({source}){note}",
                fix=redfish_fix(facts, knob, doc) + f"\n# or in the BIOS setup: {knob.menu}", **kw)]


def _excerpt(raw: str | None, attribute: str) -> str | None:
    if not raw:
        return None
    hits = [ln.strip() for ln in raw.splitlines() if f'"{attribute}"' in ln]
    return "\n".join(hits[:4]) or None


# ---------------------------------------------------------------------------- fix plans

def bios_plan(check: Check, facts: Facts, policy: Policy, what: str) -> FixPlan | None:
    """Stage the check's BIOS attribute through the BMC (`redfish bios-set NAME=VALUE`: PATCH
    …/Bios/Settings, and on iDRAC the configuration job); it applies at the server's next reboot,
    which the host's other pending changes share (reboot kind bios). None when the setting is right,
    when the right value is staged already (only the reboot is left), and off a bmc target (the OS
    cannot change the BIOS: the finding's fix names the setup menu)."""
    target = facts.target
    if target is None or target.kind is not TargetKind.BMC:
        return None
    try:
        findings = [f for f in judge_redfish(check, facts, what) if f.status in (Status.FAIL, Status.WARN)]
    except MissingFact:
        return None
    steps = []
    for f in findings:
        name = f.details.get("attribute")
        knob = next((k for k in KNOBS[check.code] if k.attribute == name), None)
        if knob is None or not valid_setting(knob.attribute, knob.good):
            continue
        observed = f.observed if isinstance(f.observed, dict) else {}
        if "pending" in observed and knob.ok(observed["pending"]):
            continue  # staged: the reboot applies it
        before = f"{name}={observed.get(name)}" + (f" (staged: {observed['pending']})" if "pending" in observed else "")
        steps.append(Step(f"stage {name}={knob.good} in the BIOS settings ({f.details.get('source')}; applied at the "
                          "next reboot)", bios_set_line({name: knob.good}), before=before,
                          after=f"{name}={knob.good} (at the next reboot)", host=target.host))
    if not steps:
        return None
    host = target.host or "the server"
    return FixPlan(
        check=check.code, target=facts.target_name,
        summary=f"{what}: " + ", ".join((s.after or "").split(" ")[0] for s in steps),
        steps=tuple(steps), safety=Safety.DISRUPTIVE, reboot=RebootKind.BIOS,
        reboot_reason=f"BIOS settings staged through the BMC apply when {host} reboots next: they ride that "
                      "host's next reboot (no reboot of their own)")
