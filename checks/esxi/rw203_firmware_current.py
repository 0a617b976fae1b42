"""RW203 firmware-current — adapter firmware is at least what the nmlx5 driver is qualified with

What it checks
    `mlxfwmanager -d <pci>` → the FW `Current` version of the RoCE card, compared with the site
    policy's minimum for that device type (policy.min_firmware; seed 000 figure 9: the firmware the
    nmlx5 4.21.71.101 driver ships with, e.g. ConnectX-5 16.29.1016). Also warns when mlxfwmanager
    offers a newer `Available` image. A pasted `flint -d <dev> query` is read too (the device family
    comes from the firmware's major number: 16.x is ConnectX-5, 14.x ConnectX-4 Lx, ...).

Why it matters
    Driver and firmware are released as a pair; older firmware than the driver expects gives
    missing features (SR-IOV, PFC, ECN knobs) or outright failures, and NVIDIA support asks for the
    matched pair first.

How to fix by hand
    Online (the host reaches NVIDIA):
        /opt/mellanox/bin/mlxfwmanager --online -u -d <pci> -f
    Offline: download the image for the card's PSID, then
        /opt/mellanox/bin/flint -d <mst device> -i <image>.bin burn
    The new firmware runs after a power cycle of the host (or mlxfwreset where supported).
    Sources: `mlxfwmanager --online -u -d <pci> -f` (and `-y`) — seed 000 (`mlxfwmanager --online -u -d 3b:00.0
        -f`) and "NVIDIA Firmware Tools (MFT) Documentation v4.31.0", "mlxfwmanager – Firmware Update and Query
        Tool" (-d, -u, -f, -y, --online), https://docs.nvidia.com/networking/display/mftv4310/mlxfwmanager+%E2%80%93
        +Firmware+Update+and+Query+Tool; its query output — corpus mlxfwmanager/*; `flint -d <device> -i <image>
        burn` — "NVIDIA Firmware Tools (MFT) Documentation v4.34.1-10 LTS", "Burning a Firmware Image",
        https://docs.nvidia.com/networking/display/mftv4341lts/burning-a-firmware-image; `flint … query` —
        corpus flint_query/*.

Fix safety
    disruptive: burns adapter flash; the card drops off the network until the firmware reset.
    OEM cards (PSID not MT_*) refuse NVIDIA images: use the server vendor's firmware (the plan is
    manual then). The tool runs `mlxfwmanager --online -u -d <pci> -f -y`; reboot kind fw-reset.
"""

import re

from roce_wizard.checklib.esxi import safe_mlx_device
from roce_wizard.checklib.findings import bad, excerpt, good, skip, version_tuple
from roce_wizard.commands.handfix import PCI, PSID, pasteable
from roce_wizard.model import (
    Check,
    Facts,
    Finding,
    FixPlan,
    MissingFact,
    Policy,
    RebootKind,
    Safety,
    Severity,
    Stage,
    Step,
    TargetKind,
)
from roce_wizard.probes import safe

CHECK = Check(
    code="RW203",
    slug="firmware-current",
    title="Adapter firmware current",
    stage=Stage.ESXI,
    target=TargetKind.ESXI,
    severity=Severity.WARN,
    probes=(),
    optional_probes=("mlxfwmanager", "flint_query"),
    depends_on=("RW201", "RW202"),
    reboot=RebootKind.FW_RESET,
    fix_hint="mlxfwmanager --online -u -d <pci> -f (or flint burn offline), then power-cycle",
)

MLX = "/opt/mellanox/bin"


def _short_pci(pci: str) -> str:
    pci = pci.strip().lower()
    return pci[5:] if re.match(r"^[0-9a-f]{4}:", pci) and pci.count(":") == 2 else pci


def _minimum(policy: Policy, device_type: str | None, fw: str) -> tuple[str | None, str | None]:
    """(policy minimum, the device type it was found under) by type, else by firmware major."""
    table = dict(policy.min_firmware)
    if device_type:
        for name, minimum in table.items():
            if name.lower() == device_type.lower():
                return minimum, name
    current = version_tuple(fw)
    if current:
        same_major = [(n, m) for n, m in table.items() if (version_tuple(m) or (None,))[0] == current[0]]
        if same_major:
            name, minimum = min(same_major, key=lambda nm: version_tuple(nm[1]) or ())
            return minimum, name
    return None, None


def _devices(facts: Facts) -> tuple[list[dict], str]:
    if facts.has("mlxfwmanager"):
        return list(facts.get("mlxfwmanager").get("devices", [])), "mlxfwmanager"
    if facts.has("flint_query"):
        q = facts.get("flint_query")
        return [{"device_type": None, "psid": q.get("psid"), "pci": None, "fw_current": q.get("fw_version"),
                 "fw_available": None}], "flint_query"
    raise MissingFact("mlxfwmanager", (facts.failures.get("mlxfwmanager").reason
                                       if facts.failures.get("mlxfwmanager") else ""))


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    devices, probe = _devices(facts)
    raw = facts.raw.get(probe)
    target_pci = _short_pci(facts.target.roce.pf_pci) if facts.target and facts.target.roce.pf_pci else None
    findings: list[Finding] = []
    for dev in devices:
        current = dev.get("fw_current")
        label = dev.get("pci") or dev.get("psid") or dev.get("device_type") or "adapter"
        dtype = dev.get("device_type")
        ev = excerpt(raw, r"Device Type|PCI Device Name|PSID|^\s*FW\s", r"FW Version")
        if not current:
            findings.append(skip(CHECK, facts, f"{label}: no firmware version printed", excerpt=ev,
                                 probes=(probe,), subject=label))
            continue
        minimum, under = _minimum(policy, dtype, current)
        available = dev.get("fw_available")
        dev_arg = target_pci or (_short_pci(dev["pci"]) if dev.get("pci") else "<pci>")
        psid = dev.get("psid") or "?"

        def fix_text() -> str:
            arg = dev_arg if dev_arg == "<pci>" else safe_mlx_device(dev_arg)  # a PCI address or an mst device
            if psid != "?":
                safe(psid, _PSID)  # it goes after a `#`: a newline in it would end the comment
            return (f"{MLX}/mlxfwmanager --online -u -d {arg} -f  # or offline: {MLX}/flint -d {arg} "
                    f"-i <image for PSID {psid}>.bin burn; then power-cycle the host")
        fix = pasteable(fix_text, f"{PCI} or {PSID}")
        observed = {"device_type": dtype or under, "fw_current": current, "fw_available": available}
        expected = f">= {minimum}" if minimum else "firmware with a policy minimum"
        cur_t, min_t, avail_t = version_tuple(current), version_tuple(minimum), version_tuple(available)
        problems = []
        if min_t and cur_t and cur_t < min_t:
            problems.append(f"firmware {current} is older than {minimum} (policy minimum for {under})")
        if avail_t and cur_t and avail_t > cur_t:
            problems.append(f"newer firmware {available} is available (current {current})")
        name = f"{dtype or under or 'adapter'} {label}"
        if problems:
            findings.append(bad(CHECK, facts, f"{name}: " + "; ".join(problems), observed=observed,
                                expected=expected if minimum else f"current = available ({available})",
                                excerpt=ev, fix=fix, probes=(probe,), subject=label))
        elif minimum is None:
            findings.append(skip(CHECK, facts, f"{name}: firmware {current}, but the policy has no minimum for "
                                 f"{dtype or 'this device'} (not an nmlx5 adapter?)", observed=observed,
                                 excerpt=ev, probes=(probe,), subject=label))
        else:
            findings.append(good(CHECK, facts, f"{name}: firmware {current} >= {minimum}", observed=observed,
                                 expected=expected, excerpt=ev, probes=(probe,), subject=label))
    return findings or [skip(CHECK, facts, "no adapter in the firmware query", probes=(probe,))]


_PCI = re.compile(r"^[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
_PSID = re.compile(r"^[A-Za-z0-9_.-]{1,32}$")


def plan_fix(facts: Facts, policy: Policy, *, failed: list) -> FixPlan | None:
    """Update the RoCE card's firmware online with mlxfwmanager; it runs after a firmware reset."""
    bad_findings = failed  # the engine's guard: this check's failing findings, never empty
    devices, _ = _devices(facts)
    target_pci = _short_pci(facts.target.roce.pf_pci) if facts.target and facts.target.roce.pf_pci else None
    steps, oem = [], []
    for finding in bad_findings:
        dev = next((d for d in devices if (d.get("pci") or d.get("psid") or d.get("device_type") or "adapter")
                    == finding.subject), {})
        pci = target_pci or (_short_pci(dev["pci"]) if dev.get("pci") else None)
        if pci is None:
            continue  # a pasted flint query names no PCI address: nothing exact to run
        psid = dev.get("psid") or ""
        if psid and not psid.upper().startswith("MT_"):
            oem.append(psid)
        observed = finding.observed or {}
        steps.append(Step(f"update the firmware of {pci} from NVIDIA (online)",
                          f"{MLX}/mlxfwmanager --online -u -d {safe(pci, _PCI)} -f -y",
                          before=observed.get("fw_current"), after=observed.get("fw_available") or "latest"))
    if not steps:
        return None
    manual = bool(oem)
    summary = ("OEM card (PSID " + ", ".join(oem) + "): use the server vendor's firmware" if manual
               else "update the adapter firmware (mlxfwmanager --online)")
    return FixPlan(check=CHECK.code, target=facts.target_name, summary=summary, steps=tuple(steps),
                   safety=Safety.MANUAL if manual else Safety.DISRUPTIVE, reboot=RebootKind.FW_RESET,
                   reboot_reason="new firmware runs after a firmware reset / power cycle of the host",
                   needs=("RW201", "RW202"))
