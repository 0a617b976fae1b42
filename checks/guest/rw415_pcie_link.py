"""RW415 pcie-link — the RoCE card's PCIe link trained at the speed and width it is capable of

What it checks
    `lspci -vv -s <roce.pf_pci>` (as root) on a bare-metal host: `LnkSta` (speed GT/s and width) equals
    `LnkCap`. A x16 Gen4 card trained at x8, or at 8 GT/s, fails and names what is short; lspci's own
    `(downgraded)` marker is shown when it printed one.
    On an ESXi host it skips, saying why: ESXi's `lspci` has no `-vv` and `esxcli hardware pci list` shows no
    link speed or width; `vsish` (/hardware/pci/seg/<s>/bus/<b>/slot/<d>/func/<f>/) or MFT's
    `mlxlink -d <mst device> --port_type PCIE` show it, but no text capture of either was found to read it from.
    In a VF guest the link is the host's: not a target of this check.

Why it matters
    A 100/200 Gb/s port behind a x8 Gen3 link (~63 Gb/s usable) or a half-trained x16 caps every transfer
    below line rate: RW601 then measures too little bandwidth with every setting right. The kernel says so at
    boot: "... available PCIe bandwidth, limited by 8.0 GT/s PCIe x8 link at <bdf> (capable of ...)".

How to fix by hand
    No command fixes it: power off, reseat the card, or move it to a slot wired x16 at the card's generation
    (the server's slot map; not a slot behind a switch or riser limited to x8); check the BIOS slot settings
    (link speed forced to Gen3, bifurcation x8x8). Afterwards `lspci -vv -s <pci> | grep Lnk` shows LnkSta =
    LnkCap, and `dmesg | grep -i 'limited by'` is silent for the card.
    Sources: `LnkCap:`/`LnkSta:` lines and `(downgraded)` — pciutils lspci(8) (ls-caps.c), corpus
    lspci_vvv/cx7-mcx755106as-sriov-cap-vfs0.txt and lspci_link/* (grep'd captures with `(downgraded)`);
    the kernel message — drivers/pci/pci.c pcie_print_link_status(); ESXi's lspci options — virtualguido,
    "VMware ESXi - vmkvsitools lspci" (2016); vsish — velog.io/@sjuhwan "VSISH를 이용해 ESXi에서 PCI-E Link Speed
    확인하기"; mlxlink --port_type PCIE — NVIDIA MFT documentation, "mlxlink Utility".

Fix safety
    manual: hardware or BIOS work, nothing roce-wizard runs (no plan).
"""

from roce_wizard.checklib.findings import bad, excerpt, good, skip
from roce_wizard.model import Check, Facts, Finding, Policy, Severity, Stage, TargetKind

CHECK = Check(
    code="RW415",
    slug="pcie-link",
    title="PCIe link of the RoCE card",
    stage=Stage.GUEST,
    target=(TargetKind.LINUX, TargetKind.ESXI),
    severity=Severity.FAIL,
    probes=(),
    optional_probes=("lspci_vvv", "lspci_link"),
    fix_hint="reseat the card / use a x16 slot of its generation / BIOS slot link speed; nothing to run",
)

ADVICE = ("power off and reseat the card, or move it to a slot wired x{width} at {speed} GT/s (not behind a x8 riser "
          "or PCIe switch); check the BIOS slot settings (forced link speed, bifurcation). Then `lspci -vv -s {pci} | "
          "grep Lnk` shows LnkSta = LnkCap")


def _fmt(link: dict | None) -> str:
    if not link:
        return "?"
    speed = link.get("speed_gts")
    return f"{speed:g} GT/s x{link.get('width', '?')}" if isinstance(speed, float) else f"? GT/s x{link.get('width', '?')}"


def _devices(facts: Facts) -> tuple[list[dict], str]:
    """(devices with pci/link_cap/link_status, the probe): the full `lspci -vv` first, else a grep'd one."""
    t = facts.target
    for probe in ("lspci_vvv", "lspci_link"):
        data = facts.get(probe)
        if data:
            devices = data.get("devices") or [data]
            if t is not None and t.roce.pf_pci:
                want = t.roce.pf_pci.lower()
                mine = [d for d in devices if d.get("pci") and (want == d["pci"].lower()
                                                                or want.endswith(":" + d["pci"].lower()))]
                devices = mine or devices[:1]  # `lspci -s <pci>` printed only that one
            return devices, probe
    facts.need("lspci_vvv")  # neither: the engine says why (not applicable, tool missing)
    return [], "lspci_vvv"


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    t = facts.target
    if t is not None and t.kind is TargetKind.ESXI:
        return [skip(CHECK, facts, "not read on ESXi: its lspci has no -vv and `esxcli hardware pci list` shows no link "
                     "speed or width; check by hand with vsish (/hardware/pci/seg/<s>/bus/<b>/slot/<d>/func/<f>/) or "
                     "`mlxlink -d <mst device> --port_type PCIE`", expected="LnkSta = LnkCap", probes=("lspci_vvv",))]
    devices, probe = _devices(facts)
    ev = excerpt(facts.raw.get(probe), r"LnkCap:", r"LnkSta:", r"access denied")
    return [_judge(facts, d, probe, ev) for d in devices]


def _judge(facts: Facts, lspci: dict, probe: str, ev: str | None) -> Finding:
    t = facts.target
    pci = lspci.get("pci") or (t.roce.pf_pci if t else None) or "the card"
    cap, sta = lspci.get("link_cap"), lspci.get("link_status")
    if not cap or not sta:
        why = " (lspci ran without root: `Capabilities: <access denied>`)" if lspci.get("access_denied") else ""
        return skip(CHECK, facts, f"{pci}: lspci printed no LnkCap/LnkSta{why}", expected="LnkSta = LnkCap",
                    excerpt=ev, subject=pci, probes=(probe,))
    observed = {"link_cap": _fmt(cap), "link_status": _fmt(sta)}
    short = []
    if isinstance(sta.get("speed_gts"), float) and isinstance(cap.get("speed_gts"), float) \
            and sta["speed_gts"] < cap["speed_gts"]:
        short.append(f"speed {sta['speed_gts']:g} GT/s of {cap['speed_gts']:g}")
    if isinstance(sta.get("width"), int) and isinstance(cap.get("width"), int) and sta["width"] < cap["width"]:
        short.append(f"width x{sta['width']} of x{cap['width']}")
    if short:
        marks = " (lspci: downgraded)" if sta.get("speed_downgraded") or sta.get("width_downgraded") else ""
        ratio = (sta.get("speed_gts") or 0) * (sta.get("width") or 0) / ((cap.get("speed_gts") or 1) * (cap.get("width") or 1))
        speed = f"{cap['speed_gts']:g}" if isinstance(cap.get("speed_gts"), float) else "?"
        return bad(CHECK, facts, f"{pci}: PCIe link trained at {_fmt(sta)}, capable of {_fmt(cap)}: "
                   f"{' and '.join(short)}{marks}, about {ratio:.0%} of the card's PCIe bandwidth", observed=observed,
                   expected=_fmt(cap), excerpt=ev, subject=pci, probes=(probe,),
                   fix=ADVICE.format(width=cap.get("width", "?"), speed=speed, pci=pci))
    return good(CHECK, facts, f"{pci}: PCIe link {_fmt(sta)}, as capable", observed=observed, expected=_fmt(cap),
                excerpt=ev, subject=pci, probes=(probe,))
