"""RW402 rdma-device — an mlx5 RDMA device with an Ethernet link layer serves the RoCE netdev

What it checks
    `ibv_devinfo` lists an mlx5 device (a ConnectX PF on bare metal, its VF in a guest) whose port
    has `link_layer: Ethernet`, and `rdma link show` (or `ibdev2netdev`) binds that device's port
    to the RoCE netdev of the inventory (e.g. `mlx5_1 port 1 ==> ens256 (Up)`).
    Without an inventory (analyze): any mlx5 device with an Ethernet port passes.

Why it matters
    No device means the VM has no VF (RW304) or the host has no VFs (RW215) or the driver is not
    loaded (RW401). A Soft-RoCE `rxe0` or another vendor's device on the RoCE netdev carries RDMA
    in software or not over the ConnectX at all; an InfiniBand link layer means the VPI port is
    in IB mode (RW205). Read the link layer here, not from perftest (`--force-link IB` lies).

How to fix by hand
    Guest: power the VM off, add the SR-IOV VF on the RoCE port group (RW304), power on; then
        lspci -nn | grep -i mellanox; /etc/init.d/openibd force-restart; ibdev2netdev
    Bare metal: lspci -nn | grep -i mellanox; modprobe mlx5_ib; rdma link show
    InfiniBand link layer: mlxconfig -d <pci> -y set LINK_TYPE_P1=2 (RW205/RW412), reboot the host.
    Sources: `lspci -nn | grep …` — corpus lspci_list/bf3-8-ports-two-pci-domains.txt (`lspci -nn | grep Eth |
        grep Mellanox`); `/etc/init.d/openibd force-restart` — seed 000; `ibdev2netdev` — corpus ibdev2netdev/*
        and NVIDIA's mlnx-tools (ofed_scripts/ibdev2netdev); `modprobe mlx5_ib` — modprobe(8) (kmod), the
        module name as the kernel's mlx5 driver builds it; `rdma link show` / `rdma link delete` — the real
        binary (Debian iproute2 6.1, `rdma link help`) and corpus rdma_link/*; `ibv_devinfo -d` — the real
        binary (Debian ibverbs-utils) and corpus ibv_devinfo/*; `mlxconfig -d <pci> -y set LINK_TYPE_P1=…` —
        corpus mlxconfig_set/igx-cx7-p3740-link-type-p2-ib-to-eth.txt.

Fix safety
    manual: the cause is elsewhere (vSphere VF assignment, host SR-IOV, driver install). No
    plan_fix: it follows from RW304 (the VM's VF), RW215 (the host's VFs) and RW401 (the stack),
    whose fixes bring the device; the link layer is RW205/RW412's.
"""

from roce_wizard.checklib.findings import bad, excerpt, good, shown, skip
from roce_wizard.checklib.linux import hca_section, rdma_links, safe_netdev, safe_rdmadev
from roce_wizard.commands.handfix import NETDEV, RDMA_DEVICE, pasteable
from roce_wizard.model import Check, Facts, Finding, Policy, Severity, Stage, TargetKind
from roce_wizard.probes import rdma_device

CHECK = Check(
    code="RW402",
    slug="rdma-device",
    title="RDMA device on the RoCE netdev",
    stage=Stage.GUEST,
    target=(TargetKind.GUEST, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=("ibv_devinfo",),
    optional_probes=("rdma_link", "ibdev2netdev"),
    depends_on=("RW401", "vm:RW304", "host:RW215"),
    fix_hint="give the VM an SR-IOV VF (RW304) / load mlx5_ib; the RoCE netdev must be an mlx5 Ethernet port",
)

EXPECTED = "an mlx5 device, link_layer Ethernet, bound to the RoCE netdev"


def _ev(facts: Facts, dev: str | None) -> str | None:
    raw = facts.raw.get("ibv_devinfo")
    return excerpt(hca_section(raw, dev) if dev else raw, r"hca_id", r"link.layer", r"state:")


def _is_mlx5(dev: dict) -> bool:
    return (dev.get("hca_id") or "").startswith("mlx5")


def _eth(port: dict) -> bool:
    return (port.get("link_layer") or "").lower() == "ethernet"


def _no_device_fix(facts: Facts, netdev: str | None) -> str:
    return pasteable(lambda: _no_device_text(facts, shown(netdev, safe_netdev, "<netdev>")), NETDEV)


def _no_device_text(facts: Facts, netdev: str) -> str:
    t = facts.target
    if t is not None and t.kind is TargetKind.GUEST:
        return (f"the VM needs an SR-IOV VF on the RoCE port group (RW304, VM powered off) from a host with VFs "
                f"(RW215 on {t.host or 'its host'}); then in the guest: lspci -nn | grep -i mellanox; "
                f"/etc/init.d/openibd force-restart; ibdev2netdev | grep {netdev}")
    return (f"lspci -nn | grep -i mellanox; modprobe mlx5_ib; rdma link show  # and check that {netdev} is the "
            "ConnectX port (inventory roce.netdev)")


def _judge(facts: Facts, dev: dict, port: dict, netdev: str | None) -> Finding:
    name, pno = dev.get("hca_id"), port.get("port", 1)
    subject = f"{name}/{pno}"
    observed = {"device": name, "port": pno, "link_layer": port.get("link_layer"), "netdev": netdev}
    on = f" on {netdev}" if netdev else ""
    if not _is_mlx5(dev):
        return bad(CHECK, facts, f"{name}{on} is not an mlx5 (ConnectX) device"
                   + (" but Soft-RoCE" if name.startswith("rxe") else ""), observed=observed, expected=EXPECTED,
                   excerpt=_ev(facts, name), subject=subject,
                   fix=(pasteable(lambda: f"rdma link delete {safe_rdmadev(name)}  # if it is a Soft-RoCE link; ",
                                  RDMA_DEVICE) if name.startswith("rxe") else "")
                   + "carry RoCE on the ConnectX port (the VF's netdev in a guest) and set roce.netdev to it")
    if not _eth(port):
        return bad(CHECK, facts, f"{subject}{on} has link layer {port.get('link_layer')}, not Ethernet",
                   observed=observed, expected=EXPECTED, excerpt=_ev(facts, name), subject=subject,
                   fix=pasteable(lambda: f"mlxconfig -d <pci of {safe_rdmadev(name)}> -y set LINK_TYPE_P{int(pno)}=2  "
                                 "# RW205/RW412, then reboot the host", RDMA_DEVICE))
    return good(CHECK, facts, f"{subject} is an mlx5 Ethernet (RoCE) port" + (f" bound to {netdev}" if netdev else ""),
                observed=observed, expected=EXPECTED, excerpt=_ev(facts, name), subject=subject,
                details={"rdma_dev": name, "port": pno, "netdev": netdev})


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    devices = {d.get("hca_id"): d for d in facts.need("ibv_devinfo").get("devices", []) if d.get("hca_id")}
    links = rdma_links(facts)
    t = facts.target
    netdev = t.roce.netdev if t else None
    if t is None or not (netdev or t.roce.rdma_dev):
        # analyze (or no inventory netdev): judge what the output shows
        found = [(d, p) for d in devices.values() if _is_mlx5(d) for p in d.get("ports", []) if _eth(p)]
        if found:
            bound = {(lk.get("dev"), lk.get("port")): lk.get("netdev") for lk in links}
            return [_judge(facts, d, p, bound.get((d["hca_id"], p.get("port")))) for d, p in found]
        cut = [n for n, d in devices.items() if not d.get("ports") and (d.get("phys_port_cnt") or 1) > 0]
        if cut:
            # `ibv_devinfo -v` pasted up to its long device section: the ports were never shown
            return [skip(CHECK, facts, f"could not tell: ibv_devinfo shows {', '.join(cut)} but none of its ports "
                         "(the output ends before the port section)", observed=sorted(devices), expected=EXPECTED)]
        shown = ", ".join(f"{n} ({', '.join(str(p.get('link_layer')) for p in d.get('ports', []))})"
                          for n, d in devices.items()) or "no device"
        return [bad(CHECK, facts, f"no mlx5 device with an Ethernet port: ibv_devinfo shows {shown}",
                    observed=sorted(devices), expected=EXPECTED, excerpt=_ev(facts, None),
                    fix=_no_device_fix(facts, netdev))]
    if not devices:  # "No IB devices found": no VF in the VM, or no mlx5 driver loaded
        return [bad(CHECK, facts, f"no RDMA device at all: ibv_devinfo finds none for {netdev}",
                    observed=[], expected=EXPECTED, excerpt=_ev(facts, None), fix=_no_device_fix(facts, netdev))]
    name = rdma_device(t, facts.data)
    if name is None:
        eth = [(d, p) for d in devices.values() if _is_mlx5(d) for p in d.get("ports", []) if _eth(p)]
        if not links and len(eth) == 1:
            finding = _judge(facts, *eth[0], None)
            finding.summary += f" (its binding to {netdev} is not verified: no rdma link / ibdev2netdev output)"
            return [finding]
        if not links:
            return [skip(CHECK, facts, f"cannot tell which RDMA device serves {netdev}: "
                         "no rdma link / ibdev2netdev output", observed=sorted(devices), expected=EXPECTED)]
        shown = ", ".join(f"{lk.get('dev')}->{lk.get('netdev')}" for lk in links)
        return [bad(CHECK, facts, f"no RDMA device is bound to {netdev} (bindings: {shown or 'none'})",
                    observed={"bindings": shown, "netdev": netdev}, expected=EXPECTED,
                    probes=("rdma_link" if facts.has("rdma_link") else "ibdev2netdev",),
                    excerpt=excerpt(facts.raw.get("rdma_link") or facts.raw.get("ibdev2netdev"), r"\S"),
                    fix=_no_device_fix(facts, netdev))]
    dev = devices.get(name)
    pno = next((lk.get("port") for lk in links if lk.get("dev") == name and lk.get("netdev") == netdev), 1)
    if dev is None:
        return [bad(CHECK, facts, f"{name} (bound to {netdev}) is not listed by ibv_devinfo",
                    observed=sorted(devices), expected=EXPECTED, excerpt=_ev(facts, None), subject=name,
                    fix=pasteable(lambda: f"ibv_devinfo -d {safe_rdmadev(name)}; /etc/init.d/openibd force-restart "
                                  "(or modprobe mlx5_ib)", RDMA_DEVICE))]
    port = next((p for p in dev.get("ports", []) if p.get("port") == pno), None) or (dev.get("ports") or [{}])[0]
    return [_judge(facts, dev, port, netdev)]
