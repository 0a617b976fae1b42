"""RW214 reboot-pending — nothing on the host waits for a reboot

What it checks
    Every sign that a change is staged but not yet in effect:
    - `mlxconfig -d <dev> -e query`: a parameter whose Current differs from its Next Boot (every
      such parameter is listed). A plain `query` prints only the Next Boot column: pending firmware
      changes cannot be seen then, and the check says so. The `*` marker of `-e` flags values that
      differ from the *default*: it does not mean pending.
    - `vim-cmd hostsvc/hostsummary` → `rebootRequired = true` (what vSphere shows).
    - a pasted `esxcli software vib install` result with `Reboot Required: true`.
    Each pending item goes into the reboot ledger with its reboot kind (host).

Why it matters
    Firmware configuration, driver VIBs and nmlx5_core parameters all apply at boot. Until the
    reboot, the checks that read the staged value pass while the host still runs the old one, and
    VFs, PFC or the new driver are not there.

How to fix by hand
    Move the VMs off (or power them off), then:
        esxcli system maintenanceMode set --enable true
    reboot the host (vSphere Client: host > Actions > Power > Reboot, or `roce-wizard fix --reboot`, which
    also brings the VMs back), and after the host is back:
        esxcli system maintenanceMode set --enable false
    A firmware value that stays in Next Boot after a warm reboot needs a power cycle (cold boot).
    Sources: `esxcli system maintenanceMode set --enable true|false` — VMware "vSphere Command-Line Interface Concepts and Examples" 6.7, "Enter and Exit Maintenance Mode with
        ESXCLI" (`esxcli system maintenanceMode set --enable true|false`), https://docs.vmware.com/en/VMware-
        vSphere/6.7/vspherecli-concepts-examples/GUID-8B7791B1-8CFF-48AE-A4B2-0464867ECE1F.html; the reboot — said in words (vSphere
        Client, or `roce-wizard fix --reboot`): no VMware page was found for the `esxcli system shutdown reboot`
        form, so this check no longer prints it. The reads: `mlxconfig -d <dev> -e query` — corpus
        mlxconfig_query/*; `vim-cmd hostsvc/hostsummary` (rebootRequired) — no VMware page for the command; the
        field is vim.host.Summary.rebootRequired of the "vSphere Web Services API" reference
        (https://developer.broadcom.com/xapis/vsphere-web-services-api/8.0U3/); the VIB install result ("Reboot
        Required: true") — corpus esxi_vib_install/nmst-4-18-install-result-reboot-required.txt.

Fix safety
    disruptive: the host goes down; batch all pending items into one reboot.
    No plan_fix: a reboot is not a change this check makes but the engine's orchestration (the
    reboot ledger, maintenance mode, batches); `fix --reboot` does it.
"""

from roce_wizard.checklib.findings import bad, excerpt, good, skip
from roce_wizard.model import Check, Evidence, Facts, Finding, Policy, RebootKind, Severity, Stage, TargetKind
from roce_wizard.records.wording import plural, plural_word

CHECK = Check(
    code="RW214",
    slug="reboot-pending",
    title="No reboot pending",
    stage=Stage.ESXI,
    target=TargetKind.ESXI,
    severity=Severity.FAIL,
    probes=(),
    optional_probes=("mlxconfig_query", "esxi_host_summary", "esxi_vib_install"),
    depends_on=(),
    reboot=RebootKind.HOST,
    fix_hint="maintenance mode, then esxcli system shutdown reboot (power-cycle if firmware stays pending)",
)

# maintenance mode: VMware's documented esxcli line; the reboot itself in words (no VMware page gives the
# `esxcli system shutdown reboot` form — issue 12 item 2)
REBOOT_FIX = ('esxcli system maintenanceMode set --enable true  # then reboot the host '
              '(vSphere Client: host > Actions > Power > Reboot, or roce-wizard fix --reboot)')


def _mlxconfig_pending(facts: Facts) -> tuple[list[dict], bool, list[str]]:
    """(pending items, whether a Current column was there to compare, notes)."""
    items: list[dict] = []
    judged = False
    notes: list[str] = []
    for device in facts.get("mlxconfig_query").get("devices", []):
        label = device.get("device") or device.get("device_type") or "adapter"
        params = device.get("params") or {}
        has_current = "current" in (device.get("columns") or []) or any("current" in p for p in params.values())
        has_next = "next_boot" in (device.get("columns") or [])
        if not has_current:
            notes.append(f"{label}: mlxconfig printed only the Next Boot column (query without -e): "
                         "pending firmware changes cannot be seen")
            continue
        if not has_next:
            notes.append(f"{label}: mlxconfig printed only the Current column: what the next boot holds is unknown")
            continue
        judged = True
        for name, p in params.items():
            if "current" in p and p.get("next_boot") is not None and p.get("current") != p.get("next_boot"):
                raw = p.get("raw") or {}
                items.append({
                    "source": "mlxconfig_query",
                    "item": f"{label}: {name} current {raw.get('current', p.get('current'))} -> next boot "
                            f"{raw.get('next_boot', p.get('next_boot'))}",
                    "reboot": RebootKind.HOST.value,
                    "param": name,
                })
    return items, judged, notes


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    items: list[dict] = []
    notes: list[str] = []
    judged = False
    evidence: list[Evidence] = []
    if facts.has("mlxconfig_query"):
        found, seen, more = _mlxconfig_pending(facts)
        items += found
        notes += more
        judged = judged or seen
        names = "|".join(rf"\b{i['param']}\b" for i in found) or r"Configurations:"
        evidence.append(facts.evidence("mlxconfig_query", excerpt(facts.raw.get("mlxconfig_query"), names)))
    summary_facts = facts.get("esxi_host_summary")
    if summary_facts is not None:
        rr = summary_facts.get("reboot_required")
        if rr is not None:
            judged = True
        if rr:
            items.append({"source": "esxi_host_summary", "item": "vSphere reports rebootRequired = true",
                          "reboot": RebootKind.HOST.value})
        evidence.append(facts.evidence("esxi_host_summary",
                                       excerpt(facts.raw.get("esxi_host_summary"), r"rebootRequired")))
    install = facts.get("esxi_vib_install")
    if install is not None:
        rr = install.get("reboot_required")
        if rr is not None:
            judged = True
        if rr:
            vibs = ", ".join(install.get("vibs_installed") or []) or "VIBs"
            items.append({"source": "esxi_vib_install", "item": f"VIB install needs a reboot ({vibs})",
                          "reboot": RebootKind.HOST.value})
        evidence.append(facts.evidence("esxi_vib_install",
                                       excerpt(facts.raw.get("esxi_vib_install"), r"Reboot Required|VIBs Installed")))
    note = ("; " + "; ".join(notes)) if notes else ""
    if items:
        fix = REBOOT_FIX
        if any(i["source"] == "mlxconfig_query" for i in items):
            fix += "\n# if a firmware value is still only in Next Boot afterwards: power-cycle the host (cold boot)"
        return [bad(CHECK, facts, f"{plural(len(items), 'item')} {plural_word(len(items), 'waits')} for a host reboot: "
                    + "; ".join(i["item"] for i in items) + note,
                    observed=items, expected="nothing pending", evidence=evidence, fix=fix)]
    if judged:
        return [good(CHECK, facts, "nothing waits for a reboot" + note, observed=[], expected="nothing pending",
                     evidence=evidence)]
    why = "; ".join(notes) or "no mlxconfig -e query, host summary or VIB install result to read"
    return [skip(CHECK, facts, f"cannot tell whether a reboot is pending: {why}", evidence=evidence or None)]
