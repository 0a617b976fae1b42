"""inventory.yaml loading: host ranges, the seed 000 cluster, every error path, secrets."""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

import keyring
import pytest

from roce_wizard.inventory import (
    HostlistError,
    Inventory,
    InventoryError,
    SecretError,
    expand_hostlist,
    load_inventory,
    resolve_secret,
)
from roce_wizard.model import POLICY_KEYS, Policy, SecretRef, SecretSource, TargetKind

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "inventory-seed-cluster.yaml"


def write(tmp_path: Path, text: str, name: str = "inventory.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def load(tmp_path: Path, text: str) -> Inventory:
    return load_inventory(write(tmp_path, text))


# --------------------------------------------------------------------------------------------
# Host ranges


class TestExpandHostlist:
    def test_seed_001_incast_syntax(self):
        # seed 001: `--sources myhost[2,3,4]`
        assert expand_hostlist("myhost[2,3,4]") == ["myhost2", "myhost3", "myhost4"]

    def test_padding_kept(self):
        names = expand_hostlist("carnac-[01-16]")
        assert len(names) == 16
        assert names[0] == "carnac-01" and names[8] == "carnac-09" and names[-1] == "carnac-16"
        assert expand_hostlist("n[001-003]") == ["n001", "n002", "n003"]

    def test_no_padding_grows_naturally(self):
        assert expand_hostlist("x[8-10]") == ["x8", "x9", "x10"]

    def test_comma_list_and_ranges_in_one_group(self):
        assert expand_hostlist("n[1-3,7,10-11]") == ["n1", "n2", "n3", "n7", "n10", "n11"]

    def test_several_groups_cartesian_left_to_right(self):
        assert expand_hostlist("r[1-2]-n[01-03]") == [
            "r1-n01", "r1-n02", "r1-n03", "r2-n01", "r2-n02", "r2-n03",
        ]  # fmt: skip

    def test_top_level_list(self):
        assert expand_hostlist("a-[1-2],b") == ["a-1", "a-2", "b"]
        assert expand_hostlist("esx-01, esx-02") == ["esx-01", "esx-02"]

    def test_plain_name_and_suffix(self):
        assert expand_hostlist("esx-01") == ["esx-01"]
        assert expand_hostlist("esx-[01-02].hpc.example") == ["esx-01.hpc.example", "esx-02.hpc.example"]
        assert expand_hostlist("192.168.100.[11-12]/24") == ["192.168.100.11/24", "192.168.100.12/24"]

    @pytest.mark.parametrize(
        ("text", "fragment"),
        [
            ("esx-[16-01]", "reversed range"),
            ("esx-[a-b]", "bad range"),
            ("esx-[1-]", "bad range"),
            ("esx-[1--3]", "bad range"),
            ("esx-[]", "empty range"),
            ("esx-[1,,2]", "bad range"),
            ("esx-[1-3", "unclosed"),
            ("esx-1-3]", "without '['"),
            ("esx-[1-[2]]", "nested"),
            ("a,,b", "empty name"),
            ("", "empty name"),
            ("n[0-99999]", "more than"),
            ("n[0-99]-[0-99]", "more than"),
        ],
    )
    def test_errors(self, text, fragment):
        with pytest.raises(HostlistError, match=r".*") as exc:
            expand_hostlist(text)
        assert fragment in str(exc.value)
        assert isinstance(exc.value, ValueError)


# --------------------------------------------------------------------------------------------
# The seed 000 cluster

SEED_CLUSTER = """
policy:
  pfc_priority: 3
  roce_dscp: 26
defaults:
  esxi: {username: root, password: {env: ESXI_PASSWORD}, options: {known_hosts: ~/.ssh/known_hosts}}
  guest: {username: root, key_file: ~/.ssh/id_ed25519}
targets:
  esxi:
    - name: esx-[01-16]
      address: esx-[01-16].hpc.example
      port: 22
      roce:
        pf_pci: "0000:3b:00.0"
        vmnics: [vmnic2, vmnic3]
        vfs: [8, 7]
        switch_ports: ["s5232f-1:ethernet1/1/[1-16]", "s5232f-1:ethernet1/1/[17-32]"]
  guest:
    - name: compute-[01-16]
      address: compute-[01-16].hpc.example
      host: esx-[01-16]
      vm: compute-[01-16]
      roce: {netdev: ens256, ip: "192.168.100.[11-26]/24"}
  switch:
    - {name: s5232f-1, address: 10.0.0.2, device_type: dell_os10, username: admin, password: {keyring: "roce-wizard/s5232f-1"}}
  vcenter:
    - {name: vc-01, address: vcenter.hpc.example, username: administrator@vsphere.local, password: prompt, options: {ca_file: /etc/ssl/vc.pem}}
"""


@pytest.fixture
def seed(tmp_path) -> Inventory:
    return load(tmp_path, SEED_CLUSTER)


class TestSeedCluster:
    def test_counts(self, seed):
        assert len(seed.targets) == 16 + 16 + 1 + 1
        assert len(seed.by_kind(TargetKind.ESXI)) == 16
        assert len(seed.by_kind("guest")) == 16
        assert [t.name for t in seed.by_kind(TargetKind.SWITCH)] == ["s5232f-1"]
        assert [t.name for t in seed.by_kind(TargetKind.VCENTER)] == ["vc-01"]
        assert seed.by_kind(TargetKind.BMC) == []
        assert seed.warnings == []

    def test_esxi_hosts(self, seed):
        hosts = seed.by_kind(TargetKind.ESXI)
        assert [h.name for h in hosts] == [f"esx-{i:02d}" for i in range(1, 17)]
        for i, h in enumerate(hosts, start=1):
            assert h.address == f"esx-{i:02d}.hpc.example"
            assert h.port == 22
            assert h.roce.pf_pci == "0000:3b:00.0"
            assert h.roce.vmnics == ("vmnic2", "vmnic3")
            assert h.roce.vfs == (8, 7)
            assert h.roce.switch_ports == (f"s5232f-1:ethernet1/1/{i}", f"s5232f-1:ethernet1/1/{i + 16}")
            assert h.credentials.username == "root"
            assert h.credentials.password == SecretRef(SecretSource.ENV, name="ESXI_PASSWORD")
            assert h.options == {"known_hosts": "~/.ssh/known_hosts"}
        # each target owns its options: changing one does not change its neighbours
        hosts[0].options["timeout"] = 5
        assert "timeout" not in hosts[1].options

    def test_guests_zip_with_hosts(self, seed):
        guests = seed.by_kind(TargetKind.GUEST)
        for i, g in enumerate(guests, start=1):
            assert g.name == f"compute-{i:02d}"
            assert g.address == f"compute-{i:02d}.hpc.example"
            assert g.host == f"esx-{i:02d}"
            assert g.vm == f"compute-{i:02d}"
            assert g.roce.netdev == "ens256"
            assert g.roce.ip == f"192.168.100.{10 + i}/24"
            assert g.credentials.username == "root"
            assert g.credentials.key_file == "~/.ssh/id_ed25519"
            assert g.credentials.password is None
            assert g.related == (g.name, g.vm, g.host)

    def test_switch_and_vcenter(self, seed):
        sw = seed.get("s5232f-1")
        assert sw.kind is TargetKind.SWITCH
        assert sw.device_type == "dell_os10"
        assert sw.address == "10.0.0.2"
        assert sw.credentials.username == "admin"
        assert sw.credentials.password == SecretRef(SecretSource.KEYRING, name="roce-wizard/s5232f-1")
        vc = seed.get("vc-01")
        assert vc.address == "vcenter.hpc.example"
        assert vc.credentials.username == "administrator@vsphere.local"
        assert vc.credentials.password.source is SecretSource.PROMPT
        assert vc.options == {"ca_file": "/etc/ssl/vc.pem"}

    def test_policy_and_source(self, seed, tmp_path):
        assert seed.policy == Policy()
        path = tmp_path / "inventory.yaml"
        assert seed.path == path
        assert seed.get("esx-07").source == f"{path}:9"
        assert seed.get("compute-16").source == f"{path}:18"
        assert seed.get("s5232f-1").source == f"{path}:24"
        assert seed.get("vc-01").source == f"{path}:26"

    def test_get_and_select(self, seed):
        assert seed.get("nope") is None
        assert "esx-01" in seed
        assert [t.name for t in seed.select(["esx-[01-03]"])] == ["esx-01", "esx-02", "esx-03"]
        assert [t.name for t in seed.select(["compute-1*", "vc-01"])] == [
            *(f"compute-{i}" for i in range(10, 17)), "vc-01",
        ]  # fmt: skip
        assert [t.name for t in seed.select(["esx-02,esx-01"])] == ["esx-01", "esx-02"]  # file order
        assert [t.name for t in seed.select(["esx-0?"])] == [f"esx-0{i}" for i in range(1, 10)]
        assert len(seed.select([])) == 34
        with pytest.raises(InventoryError, match="no target matches 'esx-99'"):
            seed.select(["esx-99"])
        # a range reaching past the last target selects those that exist (a name it misses matches nothing)
        assert [t.name for t in seed.select(["esx-[16-17]"])] == ["esx-16"]

    def test_example_file_is_the_seed_cluster(self, seed):
        example = load_inventory(EXAMPLE)
        assert example.warnings == []

        def strip(targets):
            return [dataclasses.replace(t, source=None) for t in targets]

        assert strip(example.targets) == strip(seed.targets)
        assert example.policy == seed.policy
        assert example.get("esx-01").source == f"{EXAMPLE}:31"


# --------------------------------------------------------------------------------------------
# More formats


def test_defaults_merge_and_entry_wins(tmp_path):
    inv = load(
        tmp_path,
        """
        defaults:
          esxi:
            username: root
            port: 2222
            use_agent: false
            options: {known_hosts: /etc/kh, connect_timeout: 10}
            roce: {pf_pci: "3B:00.0", vmnics: [vmnic2]}
        targets:
          esxi:
            - {name: esx-01}
            - name: esx-02
              username: admin
              options: {connect_timeout: 30}
              roce: {vmnics: [vmnic4], vfs: [4]}
        """,
    )
    a, b = inv.targets
    assert (a.credentials.username, a.port, a.credentials.use_agent) == ("root", 2222, False)
    assert a.address == "esx-01"  # default address is the name
    assert a.roce.pf_pci == "0000:3b:00.0"  # normalised: domain added, lower case
    assert a.options == {"known_hosts": "/etc/kh", "connect_timeout": 10}
    assert b.credentials.username == "admin"
    assert b.options == {"known_hosts": "/etc/kh", "connect_timeout": 30}
    assert b.roce.pf_pci == "0000:3b:00.0" and b.roce.vmnics == ("vmnic4",) and b.roce.vfs == (4,)


def test_yaml_anchors_and_merge_keys(tmp_path):
    inv = load(
        tmp_path,
        """
        targets:
          linux:
            - &node {name: node-01, username: hpc, roce: {pf_pci: "0000:81:00.0", netdev: ens1f0, ip: 10.1.0.1/24}}
            - <<: *node
              name: node-02
              roce: {pf_pci: "0000:81:00.0", netdev: ens1f0, ip: 10.1.0.2/24, rdma_dev: mlx5_0}
        """,
    )
    assert [t.credentials.username for t in inv.targets] == ["hpc", "hpc"]
    assert inv.get("node-02").roce.rdma_dev == "mlx5_0"
    assert inv.get("node-02").roce.ip == "10.1.0.2/24"


def test_linux_and_bmc(tmp_path):
    inv = load(
        tmp_path,
        """
        targets:
          linux:
            - name: carnac-[01-04]
              roce: {pf_pci: "0000:5e:00.0", netdev: eth1, ip: "10.10.0.[1-4]/16", switch_ports: ["arista:Ethernet[1-4]/1"]}
          switch:
            - {name: arista, address: 10.0.0.1, device_type: arista_eos}
          bmc:
            - {name: "idrac-[01-04]", address: "10.0.9.[1-4]", host: "carnac-[01-04]", username: root, password: {env: IDRAC_PASSWORD}}
        """,
    )
    assert [t.name for t in inv.by_kind("bmc")] == ["idrac-01", "idrac-02", "idrac-03", "idrac-04"]
    assert inv.get("idrac-03").host == "carnac-03"
    assert inv.get("idrac-03").address == "10.0.9.3"
    assert inv.get("carnac-02").roce.switch_ports == ("arista:Ethernet2/1",)
    assert inv.get("carnac-02").roce.ip == "10.10.0.2/16"


def test_unquoted_pci_and_numeric_names_stay_text(tmp_path):
    # YAML 1.1 would read 12:00.0 as a sexagesimal float and 01 as an int
    inv = load(
        tmp_path,
        """
        targets:
          esxi:
            - {name: esx-01, roce: {pf_pci: 12:00.0}}
          guest:
            - {name: g1, host: esx-01, vm: 01}
        """,
    )
    assert inv.get("esx-01").roce.pf_pci == "0000:12:00.0"
    assert inv.get("g1").vm == "01"


def test_ipv6_address_and_interface(tmp_path):
    inv = load(
        tmp_path,
        """
        targets:
          linux:
            - {name: n1, address: "fd00::10", roce: {ip: "fd00:100::1/64"}}
            - {name: n2, address: "fe80::1%eth0"}
        """,
    )
    assert inv.get("n1").address == "fd00::10"
    assert inv.get("n1").roce.ip == "fd00:100::1/64"
    assert inv.get("n2").address == "fe80::1%eth0"


def test_policy_overrides(tmp_path):
    inv = load(
        tmp_path,
        """
        policy:
          pfc_priority: 4
          roce_dscp: 32
          trust: pcp
          eth_mtu: 4200
          roce_mtu: 2048
          min_bw_ratio: 0.8
          max_small_msg_lat_us: 5
          min_nmlx5_version: 4.23.0.36
          min_firmware: {ConnectX5: 16.35.2000}
          vib_datastore: /vmfs/volumes/shared/mlx
        targets: {}
        """,
    )
    p = inv.policy
    assert (p.pfc_priority, p.roce_dscp, p.trust, p.eth_mtu, p.roce_mtu) == (4, 32, "pcp", 4200, 2048)
    assert p.min_bw_ratio == 0.8 and p.max_small_msg_lat_us == 5.0
    assert isinstance(p.max_small_msg_lat_us, float)
    assert p.min_nmlx5_version == "4.23.0.36"
    assert p.min_firmware["ConnectX5"] == "16.35.2000"
    assert p.min_firmware["ConnectX4LX"] == "14.29.1016"  # others keep their defaults
    assert p.vib_datastore == "/vmfs/volumes/shared/mlx"
    assert p.pfc_bitmask == 0x10
    assert inv.targets == []


def test_switch_mtu_not_above_eth_mtu_warns(tmp_path):
    inv = load(tmp_path, "policy: {eth_mtu: 9216, switch_mtu: 9000}\ntargets: {}\n")
    assert len(inv.warnings) == 1
    assert "inventory.yaml:1: policy: switch_mtu 9000 does not exceed eth_mtu 9216" in inv.warnings[0]


def test_num_of_vfs_rule_defaults_to_the_sites_sum_plus_one_and_accepts_per_port(tmp_path):
    assert load(tmp_path, "targets: {}\n").policy.num_of_vfs_rule == "sum_plus_one"
    assert load(tmp_path, "policy: {num_of_vfs_rule: per_port}\ntargets: {}\n").policy.num_of_vfs_rule == "per_port"
    with pytest.raises(InventoryError, match="expected 'sum_plus_one' or 'per_port', got"):
        load(tmp_path, "policy: {num_of_vfs_rule: sum}\ntargets: {}\n")


def test_switch_port_on_unknown_switch_warns(tmp_path):
    inv = load(
        tmp_path,
        """
        targets:
          esxi:
            - name: esx-01
              roce:
                switch_ports: ["leaf-9:ethernet1/1/1"]
        """,
    )
    assert len(inv.warnings) == 1
    assert "inventory.yaml:5:" in inv.warnings[0] and "'leaf-9'" in inv.warnings[0]


# --------------------------------------------------------------------------------------------
# Error paths: each names file, line, field and what was expected

ERRORS = [
    # (id, yaml, line, field, fragments of the message)
    (
        "vfs-not-int",
        """
        targets:
          esxi:
            - name: esx-01
              roce:
                vmnics: [vmnic2]
                vfs: [eight]
        """,
        6,
        "targets.esxi[0].roce.vfs",
        ["expected a list of integers, got 'eight'"],
    ),
    (
        "vfs-negative",
        "targets:\n  esxi:\n    - {name: esx-01, roce: {vfs: [-1]}}\n",
        3,
        "targets.esxi[0].roce.vfs",
        ["expected a list of integers ≥ 0, got -1"],
    ),
    (
        "vfs-count-vs-vmnics",
        "targets:\n  esxi:\n    - {name: esx-01, roce: {vmnics: [vmnic2, vmnic3], vfs: [8]}}\n",
        3,
        "targets.esxi[0].roce.vfs",
        ["1 VF counts for 2 vmnics", "one VF count per vmnic"],
    ),
    (
        "range-count-mismatch",
        """
        targets:
          esxi:
            - name: esx-[01-16]
              address: esx-[01-08].hpc.example
        """,
        4,
        "targets.esxi[0].address",
        ["expands to 8 values", "to 16 targets", "expected 1 or 16 values"],
    ),
    (
        "range-count-mismatch-in-list",
        """
        targets:
          esxi:
            - name: esx-[01-04]
              roce:
                switch_ports:
                  - "sw:ethernet1/1/[1-3]"
        """,
        6,
        "targets.esxi[0].roce.switch_ports",
        ["expands to 3 values", "to 4 targets"],
    ),
    (
        "duplicate-target",
        """
        targets:
          esxi:
            - name: esx-[01-04]
          linux:
            - name: esx-03
        """,
        5,
        "targets.linux[0].name",
        ["duplicate target name 'esx-03'", "targets.esxi[0]", "inventory.yaml:3"],
    ),
    (
        "unknown-field",
        "targets:\n  esxi:\n    - name: esx-01\n      adress: 10.0.0.1\n",
        4,
        "targets.esxi[0].adress",
        ["unknown field 'adress'", "valid: name, address, port, username, password"],
    ),
    (
        "unknown-roce-field-for-kind",
        "targets:\n  guest:\n    - name: g\n      roce: {vmnics: [vmnic2]}\n",
        4,
        "targets.guest[0].roce.vmnics",
        ["unknown roce field 'vmnics'", "valid: netdev, rdma_dev, ip"],
    ),
    (
        "unknown-kind",
        "targets:\n  router:\n    - name: r1\n",
        2,
        "targets.router",
        ["unknown target kind 'router'", "esxi, guest, linux, switch, vcenter, bmc"],
    ),
    (
        "unknown-top-key",
        "hosts: []\ntargets: {}\n",
        1,
        "hosts",
        ["unknown top-level key 'hosts'", "policy, defaults, targets"],
    ),
    (
        "unknown-policy-key",
        "policy:\n  pfc_prio: 3\ntargets: {}\n",
        2,
        "policy.pfc_prio",
        ["unknown policy key 'pfc_prio'", *sorted(POLICY_KEYS)],
    ),
    (
        "vfs-per-port-is-per-target",
        "policy:\n  vfs_per_port: 8\ntargets: {}\n",
        2,
        "policy.vfs_per_port",
        ["roce.vfs"],
    ),
    ("pfc-priority-range", "policy:\n  pfc_priority: 8\ntargets: {}\n", 2, "policy.pfc_priority",
     ["expected an integer 0..7, got 8"]),
    ("pfc-priority-quoted", "policy:\n  pfc_priority: '3'\ntargets: {}\n", 2, "policy.pfc_priority",
     ["expected an integer 0..7, got '3'"]),
    ("pfc-priority-bool", "policy:\n  pfc_priority: true\ntargets: {}\n", 2, "policy.pfc_priority",
     ["expected an integer 0..7"]),
    ("roce-dscp-range", "policy:\n  roce_dscp: 64\ntargets: {}\n", 2, "policy.roce_dscp",
     ["expected an integer 0..63, got 64"]),
    ("eth-mtu-range", "policy:\n  eth_mtu: 9300\ntargets: {}\n", 2, "policy.eth_mtu",
     ["expected an integer 68..9216, got 9300"]),
    ("switch-mtu-range", "policy:\n  switch_mtu: 60\ntargets: {}\n", 2, "policy.switch_mtu",
     ["expected an integer 68..9216"]),
    ("roce-mtu-choice", "policy:\n  roce_mtu: 9000\ntargets: {}\n", 2, "policy.roce_mtu",
     ["one of 256, 512, 1024, 2048, 4096"]),
    ("bw-ratio-range", "policy:\n  min_bw_ratio: 1.5\ntargets: {}\n", 2, "policy.min_bw_ratio",
     ["expected a number > 0.0 and ≤ 1.0"]),
    ("latency-type", "policy:\n  max_small_msg_lat_us: fast\ntargets: {}\n", 2, "policy.max_small_msg_lat_us",
     ["expected a number > 0.0, got 'fast'"]),
    ("trust-choice", "policy:\n  trust: pfc\ntargets: {}\n", 2, "policy.trust", ["'dscp' or 'pcp'"]),
    ("version-format", "policy:\n  min_nmlx5_version: latest\ntargets: {}\n", 2, "policy.min_nmlx5_version",
     ["a dotted version"]),
    ("firmware-version", "policy:\n  min_firmware: {ConnectX5: new}\ntargets: {}\n", 2,
     "policy.min_firmware.ConnectX5", ["a dotted version"]),
    ("datastore-shell", "policy:\n  vib_datastore: /vmfs/volumes/x;reboot\ntargets: {}\n", 2,
     "policy.vib_datastore", ["without shell metacharacters"]),
    ("policy-not-mapping", "policy: [3]\ntargets: {}\n", 1, "policy", ["expected a mapping, got a list"]),
    (
        "switch-without-device-type",
        "targets:\n  switch:\n    - {name: sw1, address: 10.0.0.2}\n",
        3,
        "targets.switch[0].device_type",
        ["missing 'device_type'", "arista_eos, mellanox_mlnxos, dell_os10, cumulus_nvue"],
    ),
    (
        "switch-bad-device-type",
        "targets:\n  switch:\n    - name: sw1\n      device_type: cisco_ios\n",
        4,
        "targets.switch[0].device_type",
        ["expected one of arista_eos, mellanox_mlnxos, dell_os10, cumulus_nvue, sonic, got 'cisco_ios'"],
    ),
    (
        "guest-host-missing",
        "targets:\n  esxi:\n    - name: esx-01\n  guest:\n    - name: g1\n      host: esx-02\n",
        6,
        "targets.guest[0].host",
        ["host 'esx-02' must name an esxi target", "no such target"],
    ),
    (
        "guest-host-wrong-kind",
        "targets:\n  vcenter:\n    - name: vc\n  guest:\n    - {name: g1, host: vc}\n",
        5,
        "targets.guest[0].host",
        ["must name an esxi target", "a vcenter target"],
    ),
    (
        "bmc-host-wrong-kind",
        "targets:\n  guest:\n    - name: g1\n  bmc:\n    - {name: idrac-01, host: g1}\n",
        5,
        "targets.bmc[0].host",
        ["must name an esxi or linux target", "a guest target"],
    ),
    (
        "guest-host-from-defaults",
        "defaults:\n  guest: {host: esx-09}\ntargets:\n  guest:\n    - name: g1\n",
        2,
        "defaults.guest.host",
        ["host 'esx-09' must name an esxi target"],
    ),
    ("bad-pci", "targets:\n  esxi:\n    - {name: e, roce: {pf_pci: '3b:00'}}\n", 3, "targets.esxi[0].roce.pf_pci",
     ["expected a PCI address [dddd:]bb:dd.f in hex", "got '3b:00'"]),
    ("bad-pci-function", "targets:\n  esxi:\n    - {name: e, roce: {pf_pci: '0000:3b:00.9'}}\n", 3,
     "targets.esxi[0].roce.pf_pci", ["PCI address"]),
    ("bad-vmnic", "targets:\n  esxi:\n    - {name: e, roce: {vmnics: [eth0]}}\n", 3, "targets.esxi[0].roce.vmnics",
     ["expected an ESXi uplink name vmnicN", "got 'eth0'"]),
    ("vmnics-not-list", "targets:\n  esxi:\n    - {name: e, roce: {vmnics: vmnic2}}\n", 3,
     "targets.esxi[0].roce.vmnics", ["expected a list of vmnic names, got 'vmnic2'"]),
    ("netdev-space", "targets:\n  guest:\n    - {name: g, roce: {netdev: 'ens 256'}}\n", 3,
     "targets.guest[0].roce.netdev",
     ["Linux interface name"]),
    ("netdev-slash", "targets:\n  guest:\n    - {name: g, roce: {netdev: 'a/b'}}\n", 3, "targets.guest[0].roce.netdev",
     ["no '/'"]),
    ("netdev-long", "targets:\n  guest:\n    - {name: g, roce: {netdev: abcdefghijklmnop}}\n", 3,
     "targets.guest[0].roce.netdev", ["1-15 characters"]),
    ("netdev-shell", "targets:\n  guest:\n    - {name: g, roce: {netdev: 'eth0;id'}}\n", 3,
     "targets.guest[0].roce.netdev", ["shell metacharacters"]),
    ("ip-no-prefix", "targets:\n  guest:\n    - {name: g, roce: {ip: 192.168.100.11}}\n", 3, "targets.guest[0].roce.ip",
     ["expected an IP address with a prefix length"]),
    ("ip-invalid", "targets:\n  guest:\n    - {name: g, roce: {ip: 300.1.1.1/24}}\n", 3, "targets.guest[0].roce.ip",
     ["got '300.1.1.1/24'"]),
    ("switch-port-format", "targets:\n  esxi:\n    - {name: e, roce: {switch_ports: [ethernet1/1/1]}}\n", 3,
     "targets.esxi[0].roce.switch_ports", ["'switch-name:port'"]),
    ("bad-name", "targets:\n  esxi:\n    - name: 'esx 01'\n", 3, "targets.esxi[0].name",
     ["letters, digits", "got 'esx 01'"]),
    ("name-shell", "targets:\n  esxi:\n    - name: 'esx;reboot'\n", 3, "targets.esxi[0].name", ["got 'esx;reboot'"]),
    ("name-missing", "targets:\n  esxi:\n    - address: 10.0.0.1\n", 3, "targets.esxi[0].name", ["missing 'name'"]),
    ("name-reversed-range", "targets:\n  esxi:\n    - name: esx-[16-01]\n", 3, "targets.esxi[0].name",
     ["reversed range"]),
    ("name-null", "targets:\n  esxi:\n    - name:\n", 3, "targets.esxi[0].name",
     ["expected a target name or host range, got nothing (null)"]),
    ("port-range", "targets:\n  esxi:\n    - {name: e, port: 70000}\n", 3, "targets.esxi[0].port",
     ["expected an integer 1..65535, got 70000"]),
    ("port-type", "targets:\n  esxi:\n    - {name: e, port: ssh}\n", 3, "targets.esxi[0].port",
     ["expected an integer 1..65535, got 'ssh'"]),
    ("use-agent-type", "targets:\n  esxi:\n    - {name: e, use_agent: maybe}\n", 3, "targets.esxi[0].use_agent",
     ["expected true or false, got 'maybe'"]),
    ("key-file-on-vcenter", "targets:\n  vcenter:\n    - {name: vc, key_file: /k}\n", 3, "targets.vcenter[0].key_file",
     ["unknown field 'key_file'"]),
    ("options-not-mapping", "targets:\n  esxi:\n    - {name: e, options: [a]}\n", 3, "targets.esxi[0].options",
     ["expected a mapping of transport options, got a list"]),
    ("password-env-name", "targets:\n  esxi:\n    - {name: e, password: {env: 1BAD}}\n", 3,
     "targets.esxi[0].password.env", ["expected an environment variable name"]),
    ("password-source", "targets:\n  esxi:\n    - {name: e, password: {vault: x}}\n", 3,
     "targets.esxi[0].password.vault", ["unknown password source 'vault'", "valid: env, keyring"]),
    ("password-two-sources", "targets:\n  esxi:\n    - {name: e, password: {env: A, keyring: b/c}}\n", 3,
     "targets.esxi[0].password", ["exactly one of env or keyring"]),
    ("password-keyring-format", "targets:\n  esxi:\n    - {name: e, password: {keyring: justaname}}\n", 3,
     "targets.esxi[0].password.keyring", ["'service/user'"]),
    ("username-shell", "targets:\n  esxi:\n    - {name: e, username: 'root;id'}\n", 3, "targets.esxi[0].username",
     ["a user name"]),
    ("defaults-name", "defaults:\n  esxi:\n    name: x\ntargets: {}\n", 3, "defaults.esxi.name",
     ["unknown field 'name'"]),
    ("defaults-kind", "defaults:\n  vm: {}\ntargets: {}\n", 2, "defaults.vm", ["unknown target kind 'vm'"]),
    ("defaults-bad-value", "defaults:\n  esxi: {port: x}\ntargets:\n  esxi: [{name: e}]\n", 2,
     "defaults.esxi.port", ["expected an integer 1..65535"]),
    ("targets-missing", "policy: {}\n", 1, "targets", ["no 'targets' section"]),
    ("kind-not-list", "targets:\n  esxi: {name: e}\n", 2, "targets.esxi",
     ["expected a list of targets, got a mapping"]),
    ("entry-not-mapping", "targets:\n  esxi:\n    - esx-01\n", 3, "targets.esxi[0]",
     ["expected a mapping with at least 'name', got 'esx-01'"]),
    ("duplicate-yaml-key", "targets:\n  esxi:\n    - name: a\n      name: b\n", 4, "targets.esxi[0].name",
     ["duplicate key (first at line 3)"]),
]


@pytest.mark.parametrize(("yaml_text", "line", "fld", "fragments"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_error_paths(tmp_path, yaml_text, line, fld, fragments):
    path = write(tmp_path, yaml_text)
    with pytest.raises(InventoryError) as exc:
        load_inventory(path)
    err = exc.value
    message = str(err)
    assert message.startswith(f"{path}:{line}: {fld}: "), message
    assert (err.file, err.line, err.field) == (str(path), line, fld)
    assert err.expected, message
    assert "inventory.yaml" in message
    for fragment in fragments:
        assert fragment in message, message
    assert isinstance(err, ValueError)


@pytest.mark.parametrize(
    "address",
    [
        "esx-01;reboot",
        "$(reboot)",
        "`id`",
        "esx 01",
        "esx-01|nc",
        "esx-01&",
        "esx-01>x",
        "-oProxyCommand=touch",
        "esx-01\\n",
        "fe80::1%;rm",
        "a..b",
        "http://vc",
        "x" * 64 + ".example",
    ],
)
def test_shell_metacharacter_addresses_rejected(tmp_path, address):
    quoted = address.replace("'", "''")
    path = write(tmp_path, f"targets:\n  esxi:\n    - name: esx-01\n      address: '{quoted}'\n")
    with pytest.raises(InventoryError) as exc:
        load_inventory(path)
    assert exc.value.line == 4
    assert exc.value.field == "targets.esxi[0].address"
    assert "expected a hostname or an IPv4/IPv6 address" in str(exc.value)


def test_address_default_from_name_is_validated(tmp_path):
    # a name may contain '_'-free, dot-leading forms that are not hostnames
    path = write(tmp_path, "targets:\n  esxi:\n    - name: .esx\n")
    with pytest.raises(InventoryError) as exc:
        load_inventory(path)
    assert exc.value.line == 3 and "hostname" in str(exc.value)


class TestFileErrors:
    def test_missing_file(self, tmp_path):
        path = tmp_path / "nope.yaml"
        with pytest.raises(InventoryError) as exc:
            load_inventory(path)
        assert str(exc.value).startswith(f"{path}: ")
        assert "no such file" in str(exc.value) and exc.value.expected

    def test_directory(self, tmp_path):
        with pytest.raises(InventoryError, match="is a directory"):
            load_inventory(tmp_path)

    @pytest.mark.parametrize("text", ["", "\n\n# only a comment\n", "~\n"])
    def test_empty(self, tmp_path, text):
        path = tmp_path / "inventory.yaml"
        path.write_text(text)
        with pytest.raises(InventoryError) as exc:
            load_inventory(path)
        assert str(exc.value) == f"{path}: the file is empty"

    def test_top_level_not_mapping(self, tmp_path):
        path = write(tmp_path, "- esx-01\n- esx-02\n")
        with pytest.raises(InventoryError) as exc:
            load_inventory(path)
        assert str(exc.value).startswith(f"{path}:1: ")
        assert "expected a mapping with 'policy', 'defaults' and 'targets', got a list" in str(exc.value)

    def test_yaml_syntax_error_names_the_line(self, tmp_path):
        path = write(
            tmp_path,
            """
            targets:
              esxi:
                - name: esx-01
                 address: x
            """,
        )
        with pytest.raises(InventoryError) as exc:
            load_inventory(path)
        assert exc.value.line == 4
        assert str(exc.value).startswith(f"{path}:4: YAML syntax error: ")

    def test_yaml_syntax_error_does_not_echo_the_line(self, tmp_path):
        path = write(tmp_path, 'targets:\n  esxi:\n    - {name: e, password: "hunter2-secret}\n')
        with pytest.raises(InventoryError) as exc:
            load_inventory(path)
        assert "hunter2" not in str(exc.value)
        assert exc.value.line is not None

    def test_unquoted_range_in_flow_mapping_gets_a_hint(self, tmp_path):
        path = write(tmp_path, "targets:\n  bmc:\n    - {name: idrac-[01-16], host: esx-[01-16]}\n")
        with pytest.raises(InventoryError) as exc:
            load_inventory(path)
        assert exc.value.line == 3
        assert "must be quoted" in str(exc.value)

    def test_not_utf8(self, tmp_path):
        path = tmp_path / "inventory.yaml"
        path.write_bytes(b"targets:\n  esxi:\n    - name: \xff\xfe\n")
        with pytest.raises(InventoryError, match="not UTF-8"):
            load_inventory(path)


# --------------------------------------------------------------------------------------------
# Secrets


def test_plaintext_password_warns_without_the_secret(tmp_path):
    inv = load(
        tmp_path,
        """
        targets:
          esxi:
            - name: esx-[01-02]
              password: "S3cr3t!pw"
          switch:
            - {name: sw, device_type: arista_eos, password: 12345678}
        """,
    )
    path = tmp_path / "inventory.yaml"
    assert len(inv.warnings) == 2
    first, second = inv.warnings
    assert first == (
        f"{path}:4: plaintext password for target esx-01…esx-02; use {{env: …}}, {{keyring: …}} or prompt"
    )
    assert second.startswith(f"{path}:6: plaintext password for target sw;")
    for w in inv.warnings:
        assert "S3cr3t" not in w and "12345678" not in w
    ref = inv.get("esx-02").credentials.password
    assert ref.source is SecretSource.PLAINTEXT
    assert "S3cr3t" not in repr(ref) and "S3cr3t" not in str(ref) and "S3cr3t" not in repr(inv.get("esx-02"))
    assert resolve_secret(ref) == "S3cr3t!pw"
    assert resolve_secret(inv.get("sw").credentials.password) == "12345678"


def test_plaintext_in_defaults_warns_once(tmp_path):
    inv = load(
        tmp_path,
        """
        defaults:
          esxi: {password: hunter2}
        targets:
          esxi:
            - name: esx-01
            - name: esx-02
        """,
    )
    assert len(inv.warnings) == 2  # one per entry, both pointing at the defaults line
    assert all(w.startswith(f"{tmp_path / 'inventory.yaml'}:2: plaintext password") for w in inv.warnings)
    assert all("hunter2" not in w for w in inv.warnings)


def test_password_forms_and_ranges(tmp_path):
    inv = load(
        tmp_path,
        """
        targets:
          bmc:
            - {name: "idrac-[01-02]", password: {keyring: "roce-wizard/idrac-[01-02]"}}
          esxi:
            - {name: esx-01, password: prompt}
            - {name: esx-02, password: ~}
            - {name: esx-03, password: {env: ESXI_PASSWORD}}
        """,
    )
    assert inv.get("idrac-02").credentials.password == SecretRef(SecretSource.KEYRING, name="roce-wizard/idrac-02")
    prompt_ref = inv.get("esx-01").credentials.password
    assert prompt_ref.source is SecretSource.PROMPT and prompt_ref.name == "root on esx-01"
    assert inv.get("esx-02").credentials.password is None
    assert inv.warnings == []


def test_resolve_env(monkeypatch):
    ref = SecretRef(SecretSource.ENV, name="ESXI_PASSWORD")
    monkeypatch.setenv("ESXI_PASSWORD", "from-env")
    assert resolve_secret(ref) == "from-env"
    monkeypatch.delenv("ESXI_PASSWORD")
    with pytest.raises(SecretError, match="environment variable ESXI_PASSWORD is not set") as exc:
        resolve_secret(ref)
    assert isinstance(exc.value, InventoryError)


def test_resolve_keyring(monkeypatch):
    calls = []

    def fake_get_password(service, user):
        calls.append((service, user))
        return "from-keyring" if user == "s5232f-1" else None

    monkeypatch.setattr(keyring, "get_password", fake_get_password)
    assert resolve_secret(SecretRef(SecretSource.KEYRING, name="roce-wizard/s5232f-1")) == "from-keyring"
    assert calls == [("roce-wizard", "s5232f-1")]
    with pytest.raises(SecretError, match="no password for service 'roce-wizard' user 'other'"):
        resolve_secret(SecretRef(SecretSource.KEYRING, name="roce-wizard/other"))


def test_resolve_keyring_backend_failure(monkeypatch):
    def broken(service, user):
        raise keyring.errors.NoKeyringError("No recommended backend was available")

    monkeypatch.setattr(keyring, "get_password", broken)
    with pytest.raises(SecretError, match="keyring roce-wizard/sw: NoKeyringError"):
        resolve_secret(SecretRef(SecretSource.KEYRING, name="roce-wizard/sw"))


def test_resolve_prompt(seed):
    ref = seed.get("vc-01").credentials.password
    asked = []

    def prompt(text):
        asked.append(text)
        return "typed"

    assert resolve_secret(ref, prompt) == "typed"
    assert asked == ["Password for administrator@vsphere.local on vc-01: "]
    with pytest.raises(SecretError, match="cannot prompt"):
        resolve_secret(ref)

    def eof(text):
        raise EOFError

    with pytest.raises(SecretError, match="no password entered for administrator@vsphere.local on vc-01"):
        resolve_secret(ref, eof)


def test_resolve_plaintext():
    assert resolve_secret(SecretRef(SecretSource.PLAINTEXT, value="pw")) == "pw"
