"""Files of the simulated guest: what cat/ls read, what the fixes write."""

from __future__ import annotations

import re

from roce_wizard.lab.guest import host_limits, rdma_sysfs
from roce_wizard.lab.guest.ethtool import _empty_rdma
from roce_wizard.lab.guest.ip import _carrier, _driver, _flags, _max_mtu
from roce_wizard.lab.guest.rdma import gid_table, rdma_ports, visible_interfaces
from roce_wizard.lab.guest.state import OFED_BUNDLE, OFED_DIR, _gs, _guest
from roce_wizard.lab.world import Guest, World

# ---------------------------------------------------------------------------- files


def _os_release(guest: Guest) -> str:
    m = re.match(r"(.*?)\s+(\d+(?:\.\d+)?)\s*(?:\((.*)\))?$", guest.os_release)
    name, ver, code = (m.group(1), m.group(2), m.group(3) or "") if m else (guest.os_release, "", "")
    ident = "rhel" if "Red Hat" in name else name.split()[0].lower()
    return (f'NAME="{name}"\nVERSION="{ver}{f" ({code})" if code else ""}"\nID="{ident}"\nID_LIKE="fedora"\n'
            f'VERSION_ID="{ver}"\nPLATFORM_ID="platform:el{ver.split(".")[0]}"\nPRETTY_NAME="{guest.os_release}"\n'
            f'ANSI_COLOR="0;31"\nCPE_NAME="cpe:/o:redhat:enterprise_linux:{ver}:GA"\nHOME_URL="https://www.redhat.com/"\n'
            'BUG_REPORT_URL="https://bugzilla.redhat.com/"\n')


def files(world: World, guest_name: str) -> dict[str, str]:
    """The virtual files the guest shows now (`cat` reads them; absent = No such file or directory)."""
    guest = _guest(world, guest_name)
    st = _gs(world, guest)
    out: dict[str, str] = {}
    if "RW003" not in guest.faults:
        out["/proc/sys/kernel/random/boot_id"] = guest.boot_id + "\n"
    out["/etc/os-release"] = _os_release(guest)
    out["/etc/machine-id"] = guest.machine_id + "\n"
    out["/etc/redhat-release"] = guest.os_release + "\n"
    out["/etc/hostname"] = guest.name + "\n"
    out["/proc/sys/kernel/hostname"] = guest.name + "\n"
    out["/proc/version"] = (f"Linux version {guest.kernel} (mockbuild@x86-vm-07.build.eng.bos.redhat.com) "
                            "(gcc version 8.4.1 20200928 (Red Hat 8.4.1-1) (GCC)) #1 SMP Thu Apr 29 08:54:30 EDT 2021\n")
    # the MLNX_OFED bundle the lab stages for installs (RW401's fix)
    out[f"/tmp/{OFED_BUNDLE}-rhel8.4-x86_64.tgz"] = "(gzip compressed data)\n"
    out[f"{OFED_DIR}/.mlnx"] = OFED_BUNDLE.replace("MLNX_OFED_LINUX-", "") + "\n"
    out[f"{OFED_DIR}/distro"] = "rhel8.4\n"
    out.update(st["etc"])
    if guest.vm is None:  # a bare-metal server's IOMMU units (VT-d on; see _DMESG_IOMMU)
        for unit in ("dmar0", "dmar1"):
            out[f"/sys/class/iommu/{unit}/intel-iommu/version"] = "1:0\n"
    for iface in visible_interfaces(world, guest):
        base = f"/sys/class/net/{iface.name}"
        state = _flags(world, guest, iface)[1]
        c = st["counters"].get(iface.name, {"rx_bytes": 0, "tx_bytes": 0, "rx_packets": 0, "tx_packets": 0})
        out[f"{base}/mtu"] = f"{iface.mtu}\n"
        out[f"{base}/address"] = f"{iface.mac}\n"
        out[f"{base}/operstate"] = "unknown\n" if iface.name == "lo" else f"{state.lower()}\n"
        if iface.up:
            out[f"{base}/carrier"] = f"{1 if _carrier(world, guest, iface) else 0}\n"
        for k in ("rx_bytes", "tx_bytes", "rx_packets", "tx_packets"):
            out[f"{base}/statistics/{k}"] = f"{c.get(k, 0)}\n"
        if _driver(guest, iface) == "mlx5_core":
            out[f"{base}/device/vendor"] = "0x15b3\n"
            out[f"{base}/device/device"] = "0x1018\n" if guest.vm else "0x1017\n"
            card = st["card"]
            if guest.vm is None and card.config["SRIOV_EN"].current is True:
                out[f"{base}/device/sriov_totalvfs"] = f"{card.config['NUM_OF_VFS'].current}\n"
                out[f"{base}/device/sriov_numvfs"] = "0\n"
    r = st["rdma"]
    for p in rdma_ports(world, guest):
        base = f"/sys/class/infiniband/{p.dev}"
        out[f"{base}/fw_ver"] = p.card.fw_version + "\n"
        out[f"{base}/board_id"] = p.card.psid + "\n"
        out[f"{base}/node_guid"] = p.node_guid + "\n"
        out[f"{base}/node_type"] = "1: CA\n"
        if guest.ofed_version and not guest.ofed_pending:  # the tc/ directory is MLNX_OFED's
            tclass = guest.traffic_class
            out[f"{base}/tc/1/traffic_class"] = f"Global tclass={tclass}\n" if tclass is not None else ""
        if guest.rdma_cm_tos is not None and p.netdev.name == guest.roce_netdev:
            # drivers/infiniband/core/cma_configfs.c prints the TOS as "%u\n"
            out[f"/sys/kernel/config/rdma_cm/{p.dev}/ports/{p.port}/default_roce_tos"] = f"{guest.rdma_cm_tos}\n"
        pb = f"{base}/ports/{p.port}"
        out[f"{pb}/state"] = "4: ACTIVE\n" if p.active else "1: DOWN\n"
        out[f"{pb}/phys_state"] = "5: LinkUp\n" if p.active else "3: Disabled\n"
        out[f"{pb}/link_layer"] = "Ethernet\n"
        out[f"{pb}/rate"] = f"{p.speed_mbps // 1000} Gb/sec (4X EDR)\n" if p.active else "10 Gb/sec (4X QDR)\n"
        mine = r if p.netdev.name == guest.roce_netdev else _empty_rdma()
        for name, val in (("port_xmit_data", mine["tx_bytes"] // 4), ("port_rcv_data", mine["rx_bytes"] // 4),
                          ("port_xmit_packets", mine["tx_packets"]), ("port_rcv_packets", mine["rx_packets"]),
                          ("port_xmit_discards", 0), ("port_rcv_errors", 0), ("port_xmit_wait", 0),
                          ("port_rcv_remote_physical_errors", 0), ("symbol_error", 0), ("link_downed", 0)):
            out[f"{pb}/counters/{name}"] = f"{val}\n"
        for name, val in (("np_cnp_sent", r["cnp_sent"]), ("rp_cnp_handled", r["cnp_handled"]),
                          ("np_ecn_marked_roce_packets", r["ecn_marked"]), ("out_of_sequence", r["out_of_sequence"]),
                          ("out_of_buffer", r["out_of_buffer"]), ("packet_seq_err", 0), ("local_ack_timeout_err", 0),
                          ("rnr_nak_retry_err", 0), ("implied_nak_seq_err", 0), ("duplicate_request", 0)):
            out[f"{pb}/hw_counters/{name}"] = f"{val if p.netdev.name == guest.roce_netdev else 0}\n"
        used = set()
        for idx, gid, _v4, ver, nd in gid_table(world, guest, p):
            used.add(idx)
            out[f"{pb}/gids/{idx}"] = gid + "\n"
            out[f"{pb}/gid_attrs/types/{idx}"] = ("RoCE v2" if ver == "v2" else "IB/RoCE v1") + "\n"
            out[f"{pb}/gid_attrs/ndevs/{idx}"] = nd + "\n"
        out.update(rdma_sysfs.unused_gid_files(pb, used))  # the rest of the table: zeros (types/ndevs: EINVAL)
    out.update(rdma_sysfs.configfs_files(guest, [(p.dev, p.port) for p in rdma_ports(world, guest)]))
    out.update(host_limits.ecn_files(world, guest))  # MLNX_OFED's DCQCN switches (bare metal)
    return out


def file_errors(world: World, guest_name: str) -> dict[str, str]:
    """Paths that exist but cannot be read now -> what `cat` says after the path ("Permission denied")."""
    guest = _guest(world, guest_name)
    out: dict[str, str] = {}
    for p in rdma_ports(world, guest):
        used = {idx for idx, *_ in gid_table(world, guest, p)}
        out.update(rdma_sysfs.unused_gid_errors(f"/sys/class/infiniband/{p.dev}/ports/{p.port}", used))
    if "RW003" in guest.faults:
        out["/proc/sys/kernel/random/boot_id"] = "Permission denied"
    return out


def write_file(world: World, guest_name: str, path: str, content: str) -> str | None:
    """`echo … > path`: None when written, else the shell's error text."""
    guest = _guest(world, guest_name)
    st = _gs(world, guest)
    m = re.fullmatch(r"/sys/class/infiniband/([^/]+)/tc/(\d+)/traffic_class", path)
    if m:
        dev = next((p for p in rdma_ports(world, guest) if p.dev == m.group(1)), None)
        if dev is None or not guest.ofed_version or guest.ofed_pending or m.group(2) != "1":
            return f"sh: {path}: No such file or directory"
        value = content.strip()
        if not value.isdigit() or int(value) > 255:
            return "sh: echo: write error: Invalid argument"
        guest.traffic_class = int(value)
        return None
    handled, error = host_limits.write_ecn(world, guest, path, content)
    if handled:
        return error
    m = re.fullmatch(r"/sys/class/net/([^/]+)/mtu", path)
    if m:
        iface = next((i for i in visible_interfaces(world, guest) if i.name == m.group(1)), None)
        if iface is None:
            return f"sh: {path}: No such file or directory"
        value = content.strip()
        if not value.isdigit() or not 68 <= int(value) <= _max_mtu(guest, iface):
            return "sh: echo: write error: Invalid argument"
        iface.mtu = int(value)
        return None
    if path.startswith(("/etc/", "/tmp/", "/root/")):
        st["etc"][path] = content
        return None
    if path.startswith(("/sys/", "/proc/")):
        return f"sh: {path}: {'Permission denied' if path in files(world, guest_name) else 'No such file or directory'}"
    return None
