"""RDMA tools of the simulated guest: ibv_devinfo, ibv_devices, show_gids, ibdev2netdev, rdma, cma_roce_mode, mlnx_qos."""

from __future__ import annotations

import ipaddress
import json
import zlib

from roce_wizard.lab.guest import rdma_sysfs
from roce_wizard.lab.guest.ip import _carrier
from roce_wizard.lab.guest.rdma import RdmaPort, _bm_netdevs, gid_table, rdma_ports, visible_interfaces
from roce_wizard.lab.guest.state import MTU_ENUM, _err, _gs, _guest, _ok
from roce_wizard.lab.proto import Ctx, Reply
from roce_wizard.lab.world import Guest, World

_IBV_USAGE = ("Usage: ibv_devinfo             print the ca attributes\n\nOptions:\n"
              "  -d, --ib-dev=<dev>     use IB device <dev> (default first device found)\n"
              "  -i, --ib-port=<port>   use port <port> of IB device (default all ports)\n"
              "  -l, --list             print only the IB devices names\n"
              "  -v, --verbose          print all the attributes of the IB device(s)\n")


def prog_ibv_devinfo(ctx: Ctx, argv: list[str]) -> Reply:
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    args = argv[1:]
    dev_name, port_no, verbose, listing = None, 0, False, False
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-d", "--ib-dev", "-i", "--ib-port") and i + 1 >= len(args):  # getopt's messages, then the usage
            what = f"option '{a}' requires an argument" if a.startswith("--") else \
                f"option requires an argument -- '{a[1]}'"
            return Reply(stdout=_IBV_USAGE, stderr=f"ibv_devinfo: {what}\n", exit=255)
        if a in ("-d", "--ib-dev", "-i", "--ib-port"):
            if a in ("-d", "--ib-dev"):
                dev_name = args[i + 1]
            else:
                port_no = int(args[i + 1]) if args[i + 1].isdigit() else -1
                if port_no <= 0:
                    return Reply(stdout=_IBV_USAGE, exit=1)
            i += 2
            continue
        if a.startswith("--ib-dev="):
            dev_name = a.split("=", 1)[1]
        elif a in ("-v", "--verbose"):
            verbose = True
        elif a in ("-l", "--list"):
            listing = True
        else:
            what = f"unrecognized option '{a}'" if a.startswith("--") else \
                f"invalid option -- '{a[1:2]}'" if a.startswith("-") else None
            return Reply(stdout=_IBV_USAGE, stderr=f"ibv_devinfo: {what}\n" if what else "", exit=255)
        i += 1
    ports = rdma_ports(world, guest)
    if listing:
        n = len(ports)
        return _ok(f"{n} HCA{'s' if n != 1 else ''} found:\n" + "".join(f"\t{p.dev}\n" for p in ports) + "\n")
    if dev_name:
        ports = [p for p in ports if p.dev == dev_name]
        if not ports:
            return _err(f"IB device '{dev_name}' wasn't found", 255)
    elif not ports:
        return _err("No IB devices found", 255)  # rdma-core: stderr and `return -1`
    if port_no > 1:
        return _err("Invalid port requested for device", 4)
    return _ok("".join(_devinfo_block(world, guest, p, verbose) for p in ports))


def _devinfo_block(world: World, guest: Guest, p: RdmaPort, verbose: bool) -> str:
    state, state_n = ("PORT_ACTIVE", 4) if p.active else ("PORT_DOWN", 1)
    amtu = p.active_mtu
    lines = [f"hca_id:\t{p.dev}", "\ttransport:\t\t\tInfiniBand (0)", f"\tfw_ver:\t\t\t\t{p.card.fw_version}",
             f"\tnode_guid:\t\t\t{p.node_guid}", f"\tsys_image_guid:\t\t\t{p.sys_image_guid}",
             "\tvendor_id:\t\t\t0x02c9", f"\tvendor_part_id:\t\t\t{p.vendor_part_id}", "\thw_ver:\t\t\t\t0x0",
             f"\tboard_id:\t\t\t{p.card.psid}", "\tphys_port_cnt:\t\t\t1"]
    if verbose:
        lines += ["\tmax_mr_size:\t\t\t0xffffffffffffffff", "\tpage_size_cap:\t\t\t0xfffffffffffff000",
                  "\tmax_qp:\t\t\t\t262144", "\tmax_qp_wr:\t\t\t32768", "\tdevice_cap_flags:\t\t0xe97e1c36",
                  "\tmax_sge:\t\t\t30", "\tmax_sge_rd:\t\t\t30", "\tmax_cq:\t\t\t\t16777216",
                  "\tmax_cqe:\t\t\t4194303", "\tmax_mr:\t\t\t\t16777216", "\tmax_pd:\t\t\t\t16777216",
                  "\tmax_qp_rd_atom:\t\t\t16", "\tmax_res_rd_atom:\t\t4194304", "\tmax_qp_init_rd_atom:\t\t16",
                  "\tatomic_cap:\t\t\tATOMIC_HCA (1)", "\tmax_srq:\t\t\t8388608", "\tmax_srq_wr:\t\t\t32767",
                  "\tmax_srq_sge:\t\t\t31", "\tmax_pkeys:\t\t\t128", "\tlocal_ca_ack_delay:\t\t16",
                  "\tnum_comp_vectors:\t\t8"]
    lines += ["\t\tport:\t1", f"\t\t\tstate:\t\t\t{state} ({state_n})", "\t\t\tmax_mtu:\t\t4096 (5)",
              f"\t\t\tactive_mtu:\t\t{amtu} ({MTU_ENUM[amtu]})", "\t\t\tsm_lid:\t\t\t0", "\t\t\tport_lid:\t\t0",
              "\t\t\tport_lmc:\t\t0x00", "\t\t\tlink_layer:\t\tEthernet"]
    if verbose:
        phys = ("LINK_UP", 5) if p.active else ("DISABLED", 3)
        lines += ["\t\t\tmax_msg_sz:\t\t0x40000000", "\t\t\tport_cap_flags:\t\t0x04010000",
                  "\t\t\tmax_vl_num:\t\tinvalid value (0)", "\t\t\tbad_pkey_cntr:\t\t0x0",
                  "\t\t\tqkey_viol_cntr:\t\t0x0", "\t\t\tsm_sl:\t\t\t0", "\t\t\tpkey_tbl_len:\t\t1",
                  "\t\t\tgid_tbl_len:\t\t255", "\t\t\tsubnet_timeout:\t\t0", "\t\t\tinit_type_reply:\t0",
                  "\t\t\tactive_width:\t\t4X (2)",
                  f"\t\t\tactive_speed:\t\t{'25.0 Gbps (32)' if p.active else 'invalid speed (0)'}",
                  f"\t\t\tphys_state:\t\t{phys[0]} ({phys[1]})"]
        for idx, gid, v4, ver, _nd in gid_table(world, guest, p):
            shown = f"::ffff:{v4}" if v4 else str(ipaddress.IPv6Address(gid))
            lines.append(f"\t\t\tGID[{idx:>3}]:\t\t{shown}, {'RoCE v2' if ver == 'v2' else 'RoCE v1'}")
    return "\n".join(lines) + "\n\n"


def prog_ibv_devices(ctx: Ctx, argv: list[str]) -> Reply:
    ports = rdma_ports(ctx.world, _guest(ctx.world, ctx.target))
    out = f"    {'device':<16}\t   node GUID\n    {'------':<16}\t----------------\n"
    return _ok(out + "".join(f"    {p.dev:<16}\t{p.node_guid.replace(':', '')}\n" for p in ports))


def prog_show_gids(ctx: Ctx, argv: list[str]) -> Reply:
    """MLNX_OFED's show_gids: TAB-separated, the IPv4 column padded with two spaces, a blank line, a count."""
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    want_dev = argv[1] if len(argv) > 1 else None
    want_port = argv[2] if len(argv) > 2 else None
    out = ["DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV", "---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---"]
    n = 0
    for p in rdma_ports(world, guest):
        if (want_dev and p.dev != want_dev) or (want_port and str(p.port) != want_port):
            continue
        for idx, gid, v4, ver, nd in gid_table(world, guest, p):
            if v4:
                out.append(f"{p.dev}\t{p.port}\t{idx}\t{gid}\t{v4}  \t{ver}\t{nd}")
            else:
                out.append(f"{p.dev}\t{p.port}\t{idx}\t{gid}\t\t\t{ver}\t{nd}")
            n += 1
    return _ok("\n".join(out) + f"\n\nn_gids_found={n}\n")


_I2N_USAGE = "ibdev2netdev <options>\n-h, --help                print help message\n-v, --verbose             print more info\n"


def prog_ibdev2netdev(ctx: Ctx, argv: list[str]) -> Reply:
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    args = argv[1:]
    if args and args[0] in ("-h", "--help"):
        return _ok(_I2N_USAGE)
    if len(args) > 1 or (args and args[0] != "-v"):
        return Reply(stdout=_I2N_USAGE, exit=255)
    ports = rdma_ports(world, guest)
    if not ports:
        return Reply(exit=255)  # no /sys/class/infiniband: "driver is stopped"
    out = []
    for p in ports:
        link = "Up" if _carrier(world, guest, p.netdev) else "Down"
        if args:
            # the VPD of a PF names the board and its serial; a VF has no VPD
            desc = "" if p.is_vf else f"{'CX556A - ConnectX-5 QSFP28':<15}"
            h = zlib.crc32(p.card.base_mac.encode())
            part = "NA" if p.is_vf else f"MT{1800 + h % 200:04d}X{h % 99991:05d}"
            state = f"{'ACTIVE' if p.active else 'DOWN':<6}"
            out.append(f"{p.pci} {p.dev} (MT{p.vendor_part_id} - {part}) {desc} fw {p.card.fw_version} port {p.port} "
                       f"({state}) ==> {p.netdev.name} ({link})")
        else:
            out.append(f"{p.dev} port {p.port} ==> {p.netdev.name} ({link})")
    return _ok("".join(line + "\n" for line in out))


def prog_rdma(ctx: Ctx, argv: list[str]) -> Reply:
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    args = [a for a in argv[1:] if a not in ("-p", "-pretty", "-d", "-details")]
    as_json = bool(args) and args[0] in ("-j", "-json")
    if as_json:
        args = args[1:]
    if not args:
        return _err("Usage: rdma [ OPTIONS ] OBJECT { COMMAND | help }", 255)
    obj, rest = args[0], args[1:]
    ports = rdma_ports(world, guest)
    if obj in ("link", "l"):
        if rest and rest[0] not in ("show", "list"):
            return _err(f'Command "{rest[0]}" is unknown, try "rdma link help".', 1)
        if len(rest) > 1:
            dev, _, pno = rest[1].partition("/")
            ports = [p for p in ports if p.dev == dev and (not pno or str(p.port) == pno)]
            if not ports:
                return _err("Wrong device name", 1)
        if as_json:
            visible = visible_interfaces(world, guest)
            return _ok(json.dumps([{"ifindex": n, "ifname": p.dev, "port": p.port,
                                    "state": "ACTIVE" if p.active else "DOWN",
                                    "physical_state": "LINK_UP" if p.active else "DISABLED",
                                    "netdev": p.netdev.name, "netdev_index": visible.index(p.netdev) + 1}
                                   for n, p in enumerate(ports)], separators=(",", ":")) + "\n")
        out = ""
        for n, p in enumerate(ports):
            state, phys = ("ACTIVE", "LINK_UP") if p.active else ("DOWN", "DISABLED")
            out += f"{n}/{p.port}: {p.dev}/{p.port}: state {state} physical_state {phys} netdev {p.netdev.name} \n"
        return _ok(out)
    if obj in ("dev", "d"):
        return _ok("".join(f"{n}: {p.dev}: node_type ca fw {p.card.fw_version} node_guid {p.node_guid} "
                           f"sys_image_guid {p.sys_image_guid} \n" for n, p in enumerate(ports)))
    if obj in ("statistic", "stat", "s"):
        r = _gs(world, guest)["rdma"]
        return _ok("".join(
            f"link {p.dev}/{p.port} rx_write_requests 0 rx_read_requests 0 rx_atomic_requests 0 out_of_buffer 0 "
            f"out_of_sequence {r['out_of_sequence']} duplicate_request 0 rnr_nak_retry_err 0 packet_seq_err 0 "
            "implied_nak_seq_err 0 local_ack_timeout_err 0 resp_local_length_error 0 "
            f"np_ecn_marked_roce_packets {r['ecn_marked']} np_cnp_sent {r['cnp_sent']} "
            f"rp_cnp_handled {r['cnp_handled']} rp_cnp_ignored 0 \n" for p in ports))
    return _err(f'Object "{obj}" is unknown, try "rdma help".', 1)


def prog_cma_roce_mode(ctx: Ctx, argv: list[str]) -> Reply:
    """MLNX_OFED's cma_roce_mode script (configfs rdma_cm default_roce_mode); its messages go to stdout."""
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    opts = {"-d": "mlx4_0", "-p": "1", "-m": "0"}
    args = argv[1:]
    i = 0
    while i < len(args):
        if args[i] == "-h":
            return _ok("Set/Show RoCE mode of RDMA_CM applications\n\nUsage:\n\tcma_roce_mode\nOptions:\n"
                       " -d <dev>        use IB device <dev> (default mlx4_0)\n"
                       " -p <port>       use port <port> of IB device (default 1)\n"
                       " -m <roce_mode>  set RoCE mode of RDMA_CM applications (default 1)\n")
        if args[i] in opts and i + 1 < len(args):
            opts[args[i]] = args[i + 1]
            i += 1
        i += 1
    device, port, mode = opts["-d"], opts["-p"], opts["-m"]
    ports = [p for p in rdma_ports(world, guest) if p.dev == device]
    if not rdma_ports(world, guest):
        return Reply(stdout="module rdma_cm is not loaded or does not support configfs\n", exit=1)
    if not ports:
        return Reply(stdout=f"failed to creat configuration for {device}\n",
                     stderr=f"mkdir: cannot create directory '{device}': No such file or directory\n", exit=1)
    if port != "1":
        return Reply(stdout=f"device {device} port {port} does not exist\n", exit=1)
    rdma_sysfs.make_group(guest, device)  # the script's mkdir of the configfs group
    if mode in ("1", "2"):
        guest.cma_roce_mode = "IB/RoCE v1" if mode == "1" else "RoCE v2"
    return _ok(guest.cma_roce_mode + "\n")


# ---------------------------------------------------------------------------- mlnx_qos

_QOS_NAMES = {"-i": "intf", "--interface": "intf", "--trust": "trust", "-f": "pfc", "--pfc": "pfc",
              "--dscp2prio": "dscp2prio", "--cable_len": "cable_len", "-d": "dcbx", "--dcbx": "dcbx",
              "-p": "prio_tc", "--prio_tc": "prio_tc", "-s": "tsa", "--tsa": "tsa", "-t": "tcbw", "--tcbw": "tcbw",
              "-r": "ratelimit", "--ratelimit": "ratelimit"}
_QOS_USAGE = "Usage: mlnx_qos -i <interface> [options]\n"


def _dscp2prio_lines() -> list[str]:
    return [f"\tprio:{p} dscp:" + ",".join(f"{d:02d}" for d in range(8 * p + 7, 8 * p - 1, -1)) + ","
            for p in range(8)]


def _py_trace(error: str) -> str:
    return ("Traceback (most recent call last):\n  File \"/usr/sbin/mlnx_qos\", line 513, in <module>\n"
            "    pretty_print(prio_tc, tsa, tc_bw, ratelimit, pfc_en, trustObj.trust, appTable, pfc_delay)\n"
            "  File \"/usr/sbin/mlnx_qos\", line 123, in pretty_print\n"
            "    if (ctrl.get_dcbx() & DCB_CAP_DCBX_HOST):\n"
            "  File \"/usr/lib/python3.6/site-packages/dcbnetlink.py\", line 261, in get_dcbx\n"
            "    m = self.conn.recv()\n"
            "  File \"/usr/lib/python3.6/site-packages/netlink.py\", line 215, in recv\n"
            "    raise OSError(-error, os.strerror(-error))\n"
            f"OSError: {error}\n")


def prog_mlnx_qos(ctx: Ctx, argv: list[str]) -> Reply:
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    args = argv[1:]
    opts: dict[str, str] = {}
    i = 0
    while i < len(args):
        key, eq, val = args[i].partition("=")
        if args[i] == "-a":
            i += 1
            continue
        if key not in _QOS_NAMES:
            return Reply(stdout="Bad arguments\n" + _QOS_USAGE, exit=1)
        if not eq:
            if i + 1 >= len(args):
                return Reply(stdout=f"{_QOS_USAGE}\nmlnx_qos: error: {args[i]} option requires an argument\n", exit=2)
            val, i = args[i + 1], i + 1
        opts[_QOS_NAMES[key]] = val
        i += 1
    if "intf" not in opts:
        return Reply(stdout="Interface name is required\n" + _QOS_USAGE, exit=1)
    iface = next((x for x in visible_interfaces(world, guest) if x.name == opts["intf"]), None)
    if iface is None:
        return Reply(stderr=_py_trace("[Errno 19] No such device"), exit=1)
    if not (guest.vm is None and iface.name in _bm_netdevs(guest)):
        # a VF (or a NIC without DCB): PFC and trust belong to the PF
        msgs = "Priority trust state is not supported on your system\n"
        if "trust" in opts:
            return Reply(stdout=msgs, exit=1)
        msgs += "Rate limit is not supported on your system!\nETS features are not supported on your system\n"
        if "pfc" in opts:
            return Reply(stdout=msgs + "[Errno 95] Operation not supported\n", exit=1)
        return Reply(stdout=msgs, stderr=_py_trace("[Errno 95] Operation not supported"), exit=1)
    if "trust" in opts:
        if opts["trust"] not in ("dscp", "pcp"):
            return Reply(stdout="Invalid trust state command. Refer to the help.\n", exit=1)
        if "dscp2prio" in opts:
            return Reply(stdout="trust and dscp2prio commands cannot be used at the same time.\n", exit=1)
        guest.qos_trust = opts["trust"]
    if "pfc" in opts:
        vals = opts["pfc"].split(",")
        if len(vals) != 8:
            return Reply(stdout="pfc list must have 8 items\n" if len(vals) < 8 else "Too many items for PFC\n", exit=1)
        if any(v not in ("0", "1") for v in vals):
            bad = next(v for v in vals if v not in ("0", "1"))
            return Reply(stdout=f"Bad value for PFC: {bad} is not in the range 0..1\n{_QOS_USAGE}", exit=1)
        guest.qos_pfc = [int(v) for v in vals]
    out = ["DCBX mode: OS controlled", f"Priority trust state: {guest.qos_trust}"]
    if guest.qos_trust == "dscp":
        out += ["dscp2prio mapping:", *_dscp2prio_lines()]
    out += ["Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,max_buffer_size=262016", "Cable len: 7",
            "PFC configuration:", "\tpriority    0   1   2   3   4   5   6   7",
            "\tenabled     " + "".join(f"{v:<4}" for v in guest.qos_pfc),
            "\tbuffer      " + "".join(f"{v:<4}" for v in guest.qos_pfc)]
    for tc, prio in ((0, 1), (1, 0), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6), (7, 7)):
        out += [f"tc: {tc} ratelimit: unlimited, tsa: vendor", f"\t priority:  {prio}"]
    return _ok("\n".join(out) + "\n")
