"""RW003 boot-id-known — the target's boot identity is recorded for the reboot ledger

What it checks
    ESXi: `esxcli system stats uptime get` (microseconds since boot) and, when available,
    `vim-cmd hostsvc/hostsummary` → bootTime. Linux (guest or bare metal):
    `cat /proc/sys/kernel/random/boot_id` (a UUID that changes on every boot).
    Pass when one of them was read; the engine turns uptime into a boot time (now − uptime).
    Which machine answered rides along (details.system_id): the ESXi host's SMBIOS UUID
    (hostsummary hardware.uuid) or the Linux installation's /etc/machine-id. The reboot ledger
    keys on it, not on the name: every site has an esx-01.

Why it matters
    A reboot is "done" only when the boot identity changed and a re-check shows the new value as
    current (the reboot ledger's rule: `roce-wizard reboots`). Without a boot id the reboot ledger
    cannot tell a host that came back from
    one that never went down, so pending firmware / module-parameter changes cannot be verified.

How to fix by hand
    ESXi:  esxcli system stats uptime get      (must print a number)
    Linux: cat /proc/sys/kernel/random/boot_id (must print a UUID)
    If the command fails, run it as the inventory user and fix that user's rights / shell.
    Sources: `cat /proc/sys/kernel/random/boot_id` — the kernel's proc(5) / random(4) (boot_id: "a random
        UUID … generated once per boot"), the real file on this Debian machine; `cat /etc/machine-id` —
        machine-id(5) (systemd); `esxcli system stats uptime get` — no VMware reference page was found in a
        search (its microseconds-since-boot output is read as a plain number); `vim-cmd hostsvc/hostsummary` —
        no VMware page either: its output is the vim.host.Summary data object of the "vSphere Web Services API"
        reference (https://developer.broadcom.com/xapis/vsphere-web-services-api/8.0U3/). Both ESXi reads
        are only run, never emitted for pasting.

Fix safety
    manual: nothing to change on the target; only read access is needed.
"""

import re

from roce_wizard.checklib.findings import excerpt, good
from roce_wizard.model import Check, Evidence, Facts, Finding, Policy, Severity, Stage, Status, TargetKind

CHECK = Check(
    code="RW003",
    slug="boot-id-known",
    title="Boot id known",
    stage=Stage.PREFLIGHT,
    target=(TargetKind.ESXI, TargetKind.GUEST, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=(),
    optional_probes=("esxi_uptime", "esxi_host_summary", "boot_id", "machine_id"),
    fix_hint="make `esxcli system stats uptime get` / `cat /proc/sys/kernel/random/boot_id` readable",
)

_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.IGNORECASE)


def system_id(facts: Facts) -> str | None:
    """Which machine answered: the ESXi host's SMBIOS UUID (hostsummary hardware.uuid) or the Linux
    installation's /etc/machine-id. The reboot ledger keys on it: host names repeat across sites."""
    uuid = (facts.get("esxi_host_summary") or {}).get("uuid")
    if isinstance(uuid, str) and uuid.strip():
        return "uuid:" + uuid.strip().lower()
    machine = (facts.get("machine_id") or {}).get("machine_id")
    if isinstance(machine, str) and machine:
        return "machine-id:" + machine
    return None


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    machine = system_id(facts)
    identity = {"system_id": machine} if machine else {}
    uptime = (facts.get("esxi_uptime") or {}).get("uptime_us")
    boot_time = (facts.get("esxi_host_summary") or {}).get("boot_time")
    boot_id = (facts.get("boot_id") or {}).get("boot_id")
    if (isinstance(uptime, int) and uptime >= 0) or boot_time:
        observed = {"uptime_us": uptime, **({"boot_time": str(boot_time)} if boot_time else {})}
        parts = []
        if isinstance(uptime, int):
            parts.append(f"uptime {uptime} us ({uptime / 86_400_000_000:.1f} days)")
        if boot_time:
            parts.append(f"boot time {boot_time}")
        probes = tuple(p for p, v in (("esxi_uptime", uptime), ("esxi_host_summary", boot_time)) if v is not None)
        return [good(CHECK, facts, "boot identity known: " + ", ".join(parts), observed=observed,
                     expected="uptime or boot time readable", probes=probes,
                     excerpt=excerpt(facts.raw.get(probes[0]), r"\d{4,}|boot", limit=2),
                     details={**observed, **identity})]
    if isinstance(boot_id, str) and _UUID.match(boot_id.strip()):
        return [good(CHECK, facts, f"boot id {boot_id.strip()}", observed=boot_id.strip(),
                     expected="a boot id UUID", probes=("boot_id",),
                     excerpt=excerpt(facts.raw.get("boot_id"), r"[0-9a-f]{8}-"),
                     details={"boot_id": boot_id.strip(), **identity})]
    # neither readable: say why, from whatever we have
    reasons = [f"{p}: {f.reason}" for p, f in facts.failures.items() if p in CHECK.optional_probes]
    if boot_id:
        reasons.append(f"boot_id is not a UUID: {boot_id!r}")
    kind = facts.target.kind if facts.target else None
    cmd = ("esxcli system stats uptime get" if kind is TargetKind.ESXI
           else "cat /proc/sys/kernel/random/boot_id" if kind else
           "esxcli system stats uptime get (ESXi) / cat /proc/sys/kernel/random/boot_id (Linux)")
    probes = [p for p in CHECK.optional_probes if p in facts.data or p in facts.failures] or ["boot_id"]
    ev = [Evidence(probe=p, command=facts.commands.get(p), excerpt=(facts.raw.get(p) or "").strip()[:200] or None)
          for p in probes]
    return [Finding(check=CHECK.code, status=Status.ERROR, target=facts.target_name,
                    summary="boot identity unknown: " + ("; ".join(reasons) or "neither uptime nor boot_id was readable"),
                    observed=None, expected="uptime or boot id readable", evidence=ev,
                    fix=f"run `{cmd}` as the inventory user and fix what stops it")]
