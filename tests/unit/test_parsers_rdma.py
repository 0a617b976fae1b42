"""Parsers of the RDMA-stack tools (roce_wizard/parsers/rdma/), on real outputs.

Every corpus sample of each kind is parsed and checked against facts read by hand from the file;
the seed outputs are copied verbatim below (line ranges given) because the seeds are prose
documents, not single outputs. Hand-written fixtures are marked as such.
"""

from __future__ import annotations

import pytest

from roce_wizard.parsers import linux, rdma
from roce_wizard.parsers.base import ParseError
from tests.conftest import corpus_files, corpus_text

ALL_SNIFFERS = {**rdma.PARSERS, **linux.PARSERS}
KINDS = ("ibv_devinfo", "show_gids", "ibdev2netdev", "rdma_link", "ibstat", "ibstatus", "cma_roce_mode",
         "roce_tc_sysfs", "ofed_info", "hw_counters", "rdma_statistic", "ucx_info")


def parse(kind: str, text: str) -> dict:
    return rdma.PARSERS[kind].parse(text)


def assert_sniffed_as(kind: str, text: str) -> None:
    scores = {k: p.sniff(text) for k, p in ALL_SNIFFERS.items()}
    best = max(v for k, v in scores.items() if k != kind)
    assert scores[kind] > best, f"{kind} scored {scores[kind]}, others {scores}"


# --- seed excerpts, verbatim -----------------------------------------------------------------
# seeds/000_*.txt lines 379-397 (guest VM, Figure 20) and 363-364; seeds/001_*.txt lines 130-149 and
# 153-160 (PDF extraction split values with TABs: kept as found); seeds/004_*.txt lines 120-157,
# 163-164, 168-170.

SEED000_IBV_DEVINFO = (
    '[guest OS]$ ibv_devinfo\n'
    + 'hca_id: mlx5_1\n'
    + '  transport:          InfiniBand (0)\n'
    + '  fw_ver:             16.32.1010\n'
    + '  node_guid:          0050:56ff:feb3:9926\n'
    + '  sys_image_guid:     0c42:a103:00d3:9846\n'
    + '  vendor_id:          0x02c9\n'
    + '  vendor_part_id:     4120\n'
    + '  hw_ver:             0x0\n'
    + '  board_id:           MT_0000000008\n'
    + '  phys_port_cnt:      1\n'
    + '    port: 1\n'
    + '      state:          PORT_ACTIVE (4)\n'
    + '      max_mtu:        4096 (5)\n'
    + '      active_mtu:     4096 (5)\n'
    + '      sm_lid:         0\n'
    + '      port_lid:       0\n'
    + '      port_lmc:       0x00\n'
    + '      link_layer:     Ethernet\n'
)

SEED000_OFED_INFO = (
    '[guest OS]$ ofed_info -s\n'
    + 'MLNX_OFED_LINUX-5.4-3.0.3.0:\n'
)

SEED001_IBV_DEVINFO = (
    '[carnac_\t_host]# ibv_devin\tnfo\t\t\t\n'
    + 'hca_id:\tmlx5_0\t\t\t\t\n'
    + '\ttransport:\t\tInfiniBa\tand (0)\t\n'
    + '\tfw_ver:\t\t16.25.1\t020\t\n'
    + '\tnode_guid:\t\tec0d:9a\t03:0048:7266\t\n'
    + '\tsys_image_guid:\t\tec0d:9a\t03:0048:7266\t\n'
    + '\tvendor_id:\t\t0x02c9\t\t\n'
    + '\t<pre>vendor_part_id:</pre>\t\t4119\t\t\n'
    + '\thw_ver:\t\t0x0\t\t\n'
    + '\tboard_id:\t\tMT_0000\t000011\t\n'
    + '\tphys_port_cnt:\t\t1\t\t\n'
    + '\tDevice ports:\t\t\t\t\n'
    + '\tport:\t1\t\t\t\n'
    + '\t\tstate:\t\tPORT_ACTIVE\t(4)\n'
    + '\t\tmax_mtu:\t\t4096 (5)\t\n'
    + '\t\tactive_mtu:\t\t4096 (5)\t\n'
    + '\t\tsm_lid:\t\t0\t\n'
    + '\t\tport_lid:\t\t0\t\n'
    + '\t\tport_lmc:\t\t0x00\t\n'
    + '\t\tlink layer:\t\tEthernet\t\n'
)

SEED001_SHOW_GIDS = (
    '[carnac_\t_host]# s\tshow_gids\t5\t\t\t\n'
    + 'DEV\tPORT\tINDEX\tGID\tIPv4\tVER\tDEV\n'
    + '\n'
    + 'mlx5_0\t1\t0\tfe80:0000:0000:0000:ee0d:9aff:fe48:7266\tv1\teth1\n'
    + 'mlx5_0\t1\t1\tfe80:0000:0000:0000:ee0d:9aff:fe48:7266\tv2\teth1\n'
    + 'mlx5_0\t1\t2\t0000:0000:0000:0000:0000:ffff:0a64:0569 10.100.5.105\tv1\teth1\n'
    + 'mlx5_0\t1\t3\t0000:0000:0000:0000:0000:ffff:0a64:0569 10.100.5.105\tv2\teth1\n'
    + 'n_gids_\t_found=4\t\t\t\t\n'
)

SEED004_IBV_DEVINFO = (
    'root@b8-ce-f6-fc-40-12:~$ ibv_devinfo\n'
    + 'hca_id:    mlx5_0\n'
    + '    transport:            InfiniBand (0)\n'
    + '    fw_ver:                14.32.1010\n'
    + '    node_guid:            b8ce:f603:00fc:4012\n'
    + '    sys_image_guid:            b8ce:f603:00fc:4012\n'
    + '    vendor_id:            0x02c9\n'
    + '    vendor_part_id:            4117\n'
    + '    hw_ver:                0x0\n'
    + '    board_id:            MT_2470112034\n'
    + '    phys_port_cnt:            1\n'
    + '        port:    1\n'
    + '            state:            PORT_ACTIVE (4)\n'
    + '            max_mtu:        4096 (5)\n'
    + '            active_mtu:        1024 (3)\n'
    + '            sm_lid:            0\n'
    + '            port_lid:        0\n'
    + '            port_lmc:        0x00\n'
    + '            link_layer:        Ethernet\n'
    + '\n'
    + 'hca_id:    mlx5_1\n'
    + '    transport:            InfiniBand (0)\n'
    + '    fw_ver:                14.32.1010\n'
    + '    node_guid:            b8ce:f603:00fc:4013\n'
    + '    sys_image_guid:            b8ce:f603:00fc:4012\n'
    + '    vendor_id:            0x02c9\n'
    + '    vendor_part_id:            4117\n'
    + '    hw_ver:                0x0\n'
    + '    board_id:            MT_2470112034\n'
    + '    phys_port_cnt:            1\n'
    + '        port:    1\n'
    + '            state:            PORT_DOWN (1)\n'
    + '            max_mtu:        4096 (5)\n'
    + '            active_mtu:        1024 (3)\n'
    + '            sm_lid:            0\n'
    + '            port_lid:        0\n'
    + '            port_lmc:        0x00\n'
    + '            link_layer:        Ethernet\n'
)

SEED004_CMA_ROCE_MODE = (
    'root@b8-ce-f6-fc-40-12:~$ cma_roce_mode -d mlx5_0 -p 1 -m 2\n'
    + 'RoCE v2\n'
)

SEED004_IBDEV2NETDEV = (
    'root@b8-ce-f6-fc-40-12:~$ ibdev2netdev\n'
    + 'mlx5_0 port 1 ==> eth0 (Up)\n'
    + 'mlx5_1 port 1 ==> ens1f1np1 (Down)\n'
)


SEED_SAMPLES = {
    "SEED000_IBV_DEVINFO": ("ibv_devinfo", SEED000_IBV_DEVINFO),
    "SEED000_OFED_INFO": ("ofed_info", SEED000_OFED_INFO),
    "SEED001_IBV_DEVINFO": ("ibv_devinfo", SEED001_IBV_DEVINFO),
    "SEED001_SHOW_GIDS": ("show_gids", SEED001_SHOW_GIDS),
    "SEED004_IBV_DEVINFO": ("ibv_devinfo", SEED004_IBV_DEVINFO),
    "SEED004_CMA_ROCE_MODE": ("cma_roce_mode", SEED004_CMA_ROCE_MODE),
    "SEED004_IBDEV2NETDEV": ("ibdev2netdev", SEED004_IBDEV2NETDEV),
}


# --- every corpus sample: detected as its own kind --------------------------------------------

@pytest.mark.parametrize("kind,relpath", [(k, f) for k in KINDS for f in corpus_files(k)])
def test_corpus_sample_sniffed_as_its_kind(kind, relpath):
    assert_sniffed_as(kind, corpus_text(relpath))


@pytest.mark.parametrize("name", sorted(SEED_SAMPLES))
def test_seed_sample_sniffed_as_its_kind(name):
    kind, text = SEED_SAMPLES[name]
    assert_sniffed_as(kind, text)


def test_every_kind_has_corpus_samples():
    for kind in KINDS:
        assert corpus_files(kind), kind
    assert set(rdma.PARSERS) == set(KINDS) | {"rdma_cm_tos"}  # no corpus sample: see test_parsers_configfs.py
    assert all(p.kind == k for k, p in rdma.PARSERS.items())


# --- ibv_devinfo ------------------------------------------------------------------------------

def test_ibv_devinfo_cx6_list_then_verbose():
    f = parse("ibv_devinfo", corpus_text("ibv_devinfo/cx6-fw20-24-plus-irdma-list-and-verbose-upstream.txt"))
    assert f["hca_list"] == ["mlx5_0", "mlx5_1", "irdma0", "irdma1"]
    assert [d["hca_id"] for d in f["devices"]] == ["mlx5_0"]
    d = f["devices"][0]
    assert (d["transport"], d["transport_num"]) == ("InfiniBand", 0)
    assert d["fw_ver"] == "20.24.4702"
    assert d["vendor_id"] == "0x02c9" and d["vendor_part_id"] == 4123
    assert d["board_id"] == "MT_0000000225"
    assert d["node_guid"] == "b859:9f03:0037:8268"
    assert d["phys_port_cnt"] == 1
    (p,) = d["ports"]
    assert p["port"] == 1
    assert (p["state"], p["state_num"]) == ("PORT_ACTIVE", 4)
    assert (p["max_mtu"], p["active_mtu"]) == (4096, 4096)
    assert p["link_layer"] == "Ethernet"
    assert p["phys_state"] == "LINK_UP"
    assert p["active_speed"] == "25.0 Gbps (32)"
    assert p["gid_tbl_len"] == 256
    assert [g["index"] for g in p["gids"]] == [0, 1, 2, 3]
    g3 = p["gids"][3]
    assert g3["gid"] == "::ffff:192.168.1.11" and g3["type"] == "RoCE v2" and g3["ver"] == "v2"
    assert g3["ipv4"] == "192.168.1.11"
    # the full-hex v1 GID and the compressed v2 GID are the same address
    assert p["gids"][2]["gid_full"] == g3["gid_full"] == "0000:0000:0000:0000:0000:ffff:c0a8:010b"
    assert p["gids"][0]["type"] == "RoCE v1" and p["gids"][0]["ipv4"] is None


def test_ibv_devinfo_soft_roce_rxe():
    f = parse("ibv_devinfo", corpus_text("ibv_devinfo/rxe-soft-roce-verbose-gid-compressed.txt"))
    (d,) = f["devices"]
    assert d["hca_id"] == "rxe0"
    assert d["fw_ver"] == "0.0.0" and d["vendor_id"] == "0xffffff" and d["vendor_part_id"] == 0
    assert d["board_id"] is None  # rxe prints no board_id
    (p,) = d["ports"]
    assert (p["max_mtu"], p["active_mtu"]) == (4096, 1024)
    assert p["state"] == "PORT_ACTIVE" and p["link_layer"] == "Ethernet"
    assert [(g["index"], g["ver"]) for g in p["gids"]] == [(0, "v2"), (1, "v2")]
    assert p["gids"][1]["ipv4"] == "192.168.180.131"
    assert "hca_list" not in f


def test_ibv_devinfo_seed000_guest_vf():
    f = parse("ibv_devinfo", SEED000_IBV_DEVINFO)
    (d,) = f["devices"]
    assert d["hca_id"] == "mlx5_1"
    assert d["fw_ver"] == "16.32.1010" and d["vendor_part_id"] == 4120 and d["board_id"] == "MT_0000000008"
    (p,) = d["ports"]
    assert (p["port"], p["state"], p["state_num"]) == (1, "PORT_ACTIVE", 4)
    assert (p["max_mtu"], p["active_mtu"], p["link_layer"]) == (4096, 4096, "Ethernet")
    assert p["gids"] == [] and p["phys_state"] is None  # not -v: neither is printed


def test_ibv_devinfo_seed004_two_devices_one_down():
    f = parse("ibv_devinfo", SEED004_IBV_DEVINFO)
    assert [d["hca_id"] for d in f["devices"]] == ["mlx5_0", "mlx5_1"]
    p0, p1 = (d["ports"][0] for d in f["devices"])
    assert (p0["state"], p0["active_mtu"], p0["max_mtu"]) == ("PORT_ACTIVE", 1024, 4096)
    assert (p1["state"], p1["state_num"]) == ("PORT_DOWN", 1)
    assert all(d["fw_ver"] == "14.32.1010" and d["vendor_part_id"] == 4117 for d in f["devices"])
    assert f["devices"][1]["node_guid"] == "b8ce:f603:00fc:4013"


def test_ibv_devinfo_seed001_pdf_split_values_are_not_guessed():
    f = parse("ibv_devinfo", SEED001_IBV_DEVINFO)
    (d,) = f["devices"]
    assert d["hca_id"] == "mlx5_0"
    assert d["vendor_part_id"] == 4119  # key wrapped in <pre> tags, value intact
    # "16.25.1\t020", "MT_0000\t000011", "InfiniBa\tand (0)": split by the PDF extraction
    assert d["fw_ver"] is None and d["board_id"] is None and d["node_guid"] is None
    assert d["transport"] is None
    assert f["warnings"]
    (p,) = d["ports"]
    assert (p["state"], p["active_mtu"]) == ("PORT_ACTIVE", 4096)
    assert p["link_layer"] == "Ethernet"  # printed as `link layer:`


def test_ibv_devinfo_no_devices_message():
    # hand-written: what ibv_devinfo prints on a host without RDMA devices
    f = parse("ibv_devinfo", "$ ibv_devinfo\nNo IB devices found\n")
    assert f["devices"] == [] and f["no_devices"] is True


# --- show_gids --------------------------------------------------------------------------------

def test_show_gids_husky_tab_separated():
    f = parse("show_gids", corpus_text("show_gids/husky-tab-separated.txt"))
    assert f["n_gids_found"] == 4 and len(f["gids"]) == 4
    g3 = next(g for g in f["gids"] if g["index"] == 3)
    assert g3 == {"dev": "mlx5_0", "port": 1, "index": 3, "gid": "0000:0000:0000:0000:0000:ffff:c0a8:d3f2",
                  "ipv4": "192.168.211.242", "ver": "v2", "netdev": "rdma0"}
    g0 = f["gids"][0]
    assert g0["ipv4"] is None and g0["ver"] == "v1" and g0["netdev"] == "rdma0"


def test_show_gids_blog_space_aligned_empty_dev_column():
    f = parse("show_gids", corpus_text("show_gids/blog-pve-two-devs-one-without-netdev.txt"))
    assert f["n_gids_found"] == 5 and len(f["gids"]) == 5
    v2_ipv4 = [g for g in f["gids"] if g["ver"] == "v2" and g["ipv4"]]
    assert [(g["dev"], g["index"], g["ipv4"], g["netdev"]) for g in v2_ipv4] == [
        ("mlx5_0", 3, "192.168.6.132", "mce0")]
    last = f["gids"][-1]
    assert (last["dev"], last["index"], last["ver"], last["ipv4"], last["netdev"]) == ("mlx5_1", 0, "v1", None, None)


def test_show_gids_seed001_mangled_prompt_and_footer():
    f = parse("show_gids", SEED001_SHOW_GIDS)
    assert f["n_gids_found"] == 4
    assert [(g["index"], g["ipv4"], g["ver"], g["netdev"]) for g in f["gids"]] == [
        (0, None, "v1", "eth1"), (1, None, "v2", "eth1"),
        (2, "10.100.5.105", "v1", "eth1"), (3, "10.100.5.105", "v2", "eth1")]


# --- ibdev2netdev -----------------------------------------------------------------------------

def test_ibdev2netdev_leading_command_six_devices():
    f = parse("ibdev2netdev", corpus_text("ibdev2netdev/centos12-6-devs-leading-cmd.txt"))
    assert [(lk["dev"], lk["netdev"], lk["state"]) for lk in f["links"]] == [
        ("mlx5_0", "ens4f0", "Down"), ("mlx5_1", "ens4f1", "Up"), ("mlx5_2", "ens6", "Up"),
        ("mlx5_3", "ens14f0", "Up"), ("mlx5_4", "ens14f1", "Down"), ("mlx5_5", "ib0", "Up")]
    assert all(lk["port"] == 1 for lk in f["links"])


def test_ibdev2netdev_legacy_names():
    f = parse("ibdev2netdev", corpus_text("ibdev2netdev/eth4-eth5-ib2-mixed-legacy-names.txt"))
    assert {lk["dev"]: (lk["netdev"], lk["state"]) for lk in f["links"]} == {
        "mlx5_0": ("eth4", "Up"), "mlx5_1": ("eth5", "Down"), "mlx5_2": ("ib2", "Up")}


def test_ibdev2netdev_verbose_with_vfs():
    f = parse("ibdev2netdev", corpus_text("ibdev2netdev/sriov-cni-cx4-4vfs-verbose.txt"))
    assert len(f["links"]) == 6
    pf = f["links"][0]
    assert pf["dev"] == "mlx5_0" and pf["pci"] == "0000:02:00.0"
    assert pf["description"] == "CX456A - ConnectX-4 QSFP" and pf["fw_ver"] == "12.23.1020"
    assert (pf["device_id"], pf["port_state"], pf["netdev"], pf["state"]) == ("MT4115", "ACTIVE", "enp2s0f0", "Up")
    vf = f["links"][-1]
    assert (vf["dev"], vf["pci"], vf["netdev"], vf["state"]) == ("mlx5_5", "0000:02:00.2", "enp2s0f5", "Down")
    assert vf["description"] is None and vf["device_id"] == "MT4116" and vf["port_state"] == "DOWN"
    assert [lk["pci"] for lk in f["links"][2:]] == ["0000:02:00.5", "0000:02:00.6", "0000:02:00.7", "0000:02:00.2"]


def test_ibdev2netdev_seed004():
    f = parse("ibdev2netdev", SEED004_IBDEV2NETDEV)
    assert [(lk["dev"], lk["netdev"], lk["state"]) for lk in f["links"]] == [
        ("mlx5_0", "eth0", "Up"), ("mlx5_1", "ens1f1np1", "Down")]


# --- rdma link --------------------------------------------------------------------------------

def test_rdma_link_indexed_bond_devices():
    f = parse("rdma_link", corpus_text("rdma_link/bf3-roce-lag-bond-devices-indexed.txt"))
    assert [(lk["index"], lk["dev"], lk["port"], lk["netdev"]) for lk in f["links"]] == [
        (8, "mlx5_bond_0", 1, "reth0"), (9, "mlx5_bond_1", 1, "reth2"),
        (10, "mlx5_bond_2", 1, "reth4"), (11, "mlx5_bond_3", 1, "reth6")]
    assert {(lk["state"], lk["physical_state"]) for lk in f["links"]} == {("ACTIVE", "LINK_UP")}


def test_rdma_link_rxe():
    f = parse("rdma_link", corpus_text("rdma_link/rxe-single-link.txt"))
    assert f["links"] == [{"dev": "rxe0", "port": 1, "state": "ACTIVE", "physical_state": "LINK_UP",
                           "netdev": "ens33"}]


def test_rdma_link_ib_port_without_netdev():
    # hand-written, iproute2 layout for an InfiniBand port (no netdev printed)
    f = parse("rdma_link", "link mlx5_2/1 subnet_prefix fe80:0000:0000:0000 lid 7 sm_lid 1 lmc 0 "
                           "state ACTIVE physical_state LINK_UP\n")
    (lk,) = f["links"]
    assert lk["netdev"] is None and lk["lid"] == 7 and lk["state"] == "ACTIVE"


# --- ibstat / ibstatus ------------------------------------------------------------------------

def test_ibstat_cx4lx_tabs():
    f = parse("ibstat", corpus_text("ibstat/cx4lx-mt4117-25g-ethernet-tabs.txt"))
    (d,) = f["devices"]
    assert d["hca_id"] == "mlx5_0" and d["ca_type"] == "MT4117"
    assert d["fw_ver"] == "14.23.1020" and d["num_ports"] == 1
    (p,) = d["ports"]
    assert p == {"port": 1, "state": "Active", "physical_state": "LinkUp", "rate": 25, "base_lid": 0,
                 "lmc": 0, "sm_lid": 0, "capability_mask": "0x04010000", "port_guid": "0xee0d9afffe9e9fae",
                 "link_layer": "Ethernet"}


def test_ibstatus_two_devices_one_disabled():
    f = parse("ibstatus", corpus_text("ibstatus/debian-nfsrdma-port0-down-disabled.txt"))
    d0, d1 = f["devices"]
    p0, p1 = d0["ports"][0], d1["ports"][0]
    assert (d0["hca_id"], p0["port"], p0["state"], p0["state_num"]) == ("mlx5_0", 1, "DOWN", 1)
    assert (p0["physical_state"], p0["physical_state_num"]) == ("Disabled", 3)
    assert (d1["hca_id"], p1["state"], p1["physical_state"]) == ("mlx5_1", "ACTIVE", "LinkUp")
    assert p0["rate"] == p1["rate"] == 100
    assert p1["rate_text"] == "100 Gb/sec (4X EDR)"
    assert p0["link_layer"] == p1["link_layer"] == "Ethernet"
    assert p1["default_gid"] == "fe80:0000:0000:0000:1e34:daff:fe5a:1fed"


# --- cma_roce_mode ----------------------------------------------------------------------------

def test_cma_roce_mode_default_v1_then_set_v2():
    f = parse("cma_roce_mode", corpus_text("cma_roce_mode/cx4lx-default-ib-roce-v1-then-set-v2.txt"))
    assert f["mode"] == "RoCE v2"
    assert f["modes"] == ["IB/RoCE v1", "RoCE v2", "RoCE v2"]
    assert f["reads"][0] == {"mode": "IB/RoCE v1", "device": "mlx5_0", "port": 1}
    assert f["reads"][1]["set_mode"] == 2
    assert (f["device"], f["port"]) == ("mlx5_0", 1)


def test_cma_roce_mode_seed004():
    f = parse("cma_roce_mode", SEED004_CMA_ROCE_MODE)
    assert f["mode"] == "RoCE v2" and f["modes"] == ["RoCE v2"] and f["device"] == "mlx5_0"


def test_cma_roce_mode_bare_line_and_precise_sniff():
    assert parse("cma_roce_mode", "IB/RoCE v1\n")["mode"] == "IB/RoCE v1"
    assert rdma.PARSERS["cma_roce_mode"].sniff("IB/RoCE v1\n") == 95
    assert rdma.PARSERS["cma_roce_mode"].sniff("RoCE v2 is the default\n") == 0
    assert rdma.PARSERS["cma_roce_mode"].sniff("RoCE v2\nsomething else\n") == 0


# --- roce_tc_sysfs ----------------------------------------------------------------------------

def test_roce_tc_sysfs_empty_then_set():
    f = parse("roce_tc_sysfs", corpus_text("roce_tc_sysfs/centos12-traffic-class-empty-then-set.txt"))
    assert (f["traffic_class"], f["set"], f["device"], f["tc"]) == (106, True, "mlx5_2", 1)
    assert [(r["traffic_class"], r["set"]) for r in f["reads"]] == [(None, False), (106, True)]
    assert [w["value"] for w in f["writes"]] == [106]


def test_roce_tc_sysfs_empty_read_is_not_set():
    # hand-written: the first read of the corpus sample on its own
    f = parse("roce_tc_sysfs", "root@centos12:~# cat /sys/class/infiniband/mlx5_2/tc/1/traffic_class\n")
    assert (f["traffic_class"], f["set"], f["device"]) == (None, False, "mlx5_2")
    assert parse("roce_tc_sysfs", "") == {"traffic_class": None, "set": False,
                                          "reads": [{"traffic_class": None, "set": False}]}
    assert parse("roce_tc_sysfs", "Global tclass=104\n")["traffic_class"] == 104


def test_roce_tc_sysfs_sniff_is_precise():
    sniff = rdma.PARSERS["roce_tc_sysfs"].sniff
    assert sniff("Global tclass=106\n") == 95
    assert sniff("Global tclass=106\nsomething else\n") == 0
    assert sniff("") == 0


# --- ofed_info --------------------------------------------------------------------------------

def test_ofed_info_doca_internal():
    f = parse("ofed_info", corpus_text("ofed_info/bf3-doca-ofed-internal-23-07.txt"))
    assert f == {"version": "23.07-0.5.0", "flavor": "OFED-internal", "raw": "OFED-internal-23.07-0.5.0:"}


def test_ofed_info_seed000_mlnx_ofed():
    f = parse("ofed_info", SEED000_OFED_INFO)
    assert (f["version"], f["flavor"], f["raw"]) == ("5.4-3.0.3.0", "MLNX_OFED", "MLNX_OFED_LINUX-5.4-3.0.3.0:")


def test_ofed_info_full_form_first_line():
    # hand-written: first line of `ofed_info` without -s
    f = parse("ofed_info", "MLNX_OFED_LINUX-5.8-1.1.2.1 (OFED-5.8-1.1.2):\n\nclusterkit:\nmlnx_ofed_clusterkit/\n")
    assert (f["version"], f["flavor"], f["base"]) == ("5.8-1.1.2.1", "MLNX_OFED", "OFED-5.8-1.1.2")


# --- hw_counters ------------------------------------------------------------------------------

def test_hw_counters_glob_values_without_names():
    f = parse("hw_counters", corpus_text("hw_counters/glob-cat-np-cnp-sent-values-without-names.txt"))
    assert f["values"] == [3773741, 4232220, 79402419, 112641514]
    assert f["by_name"] == {"np_cnp_sent": [3773741, 4232220],
                            "np_ecn_marked_roce_packets": [79402419, 112641514]}
    # the glob hides which device printed which value: no per-device counter is claimed
    assert f["counters"] == {} and "by_device" not in f
    assert all(r["device"] is None and r["port"] == 1 for r in f["reads"])


def test_hw_counters_grep_h_and_name_value():
    # hand-written: `grep -H . /sys/class/infiniband/mlx5_*/ports/1/hw_counters/np_cnp_sent`
    text = ("$ grep -H . /sys/class/infiniband/mlx5_*/ports/1/hw_counters/np_cnp_sent\n"
            "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent:3773741\n"
            "/sys/class/infiniband/mlx5_1/ports/1/hw_counters/np_cnp_sent:4232220\n")
    f = parse("hw_counters", text)
    assert f["by_device"] == {"mlx5_0/1": {"np_cnp_sent": 3773741}, "mlx5_1/1": {"np_cnp_sent": 4232220}}
    assert "np_cnp_sent" not in f["counters"]  # two devices: not one counter
    f = parse("hw_counters", "rp_cnp_handled: 12\nnp_cnp_sent: 7\n")
    assert f["counters"] == {"rp_cnp_handled": 12, "np_cnp_sent": 7}


# --- rdma statistic ---------------------------------------------------------------------------

def test_rdma_statistic_single_line_after_ibdev2netdev():
    f = parse("rdma_statistic", corpus_text("rdma_statistic/mlx5-bond0-single-line-resp-cqe-errors.txt"))
    (lk,) = f["links"]
    assert (lk["dev"], lk["port"]) == ("mlx5_bond_0", 1)
    c = lk["counters"]
    assert len(c) == 29
    assert (c["resp_cqe_error"], c["resp_cqe_flush_error"]) == (3297, 2792)
    assert c["np_cnp_sent"] == c["rp_cnp_handled"] == c["np_ecn_marked_roce_packets"] == 0


# --- ucx_info ---------------------------------------------------------------------------------

def test_ucx_info_roce_vs_ib_and_unsupported_domain():
    f = parse("ucx_info", corpus_text(
        "ucx_info/hcn1-roce-mlx5_0-1k-prio28-vs-ib-mlx5_2-4k-mlx5_1-no-devices.txt"))
    assert f["unsupported"] == ["mlx5_1"]
    assert [(d["transport"], d["device"]) for d in f["devices"]] == [
        ("rc_verbs", "mlx5_0:1"), ("rc_mlx5", "mlx5_0:1"), ("ud_verbs", "mlx5_0:1"), ("ud_mlx5", "mlx5_0:1"),
        ("rc_verbs", "mlx5_2:1")]
    roce = f["devices"][1]
    assert (roce["priority"], roce["align_mtu"], roce["bandwidth_mbs"]) == (28, 1024, 2739.46)
    assert (roce["latency_ns"], roce["device_address_bytes"]) == (800, 18)
    assert roce["system_device"] == "0000:21:00.0" and roce["memory_domain"] == "mlx5_0"
    ib = f["devices"][-1]
    assert (ib["priority"], ib["align_mtu"], ib["bandwidth_mbs"]) == (50, 4096, 11794.23)
    assert ib["device_address_bytes"] == 3


# --- not this tool's output -------------------------------------------------------------------

GARBAGE = "hello world\nthis is not the output of any tool: 42\n"


@pytest.mark.parametrize("kind", KINDS)
def test_garbage_raises_parse_error(kind):
    with pytest.raises(ParseError):
        parse(kind, GARBAGE)


@pytest.mark.parametrize("kind", KINDS)
def test_garbage_sniffs_zero(kind):
    assert rdma.PARSERS[kind].sniff(GARBAGE) == 0
    assert rdma.PARSERS[kind].sniff("") == 0
