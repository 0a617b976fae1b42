"""The detail pane wraps a check's explain text once: the docstring's own ~100-column wrapping is undone
(tui/widgets/detail.reflow), its deliberate breaks (commands, lists, short lines, Sources) are kept."""

from __future__ import annotations

from roce_wizard.tui.widgets.detail import reflow

# RW405's "How to fix by hand" section as the catalog parses it (checks/guest/rw405_*.py), shortened
RW405 = """\
ip link set dev <netdev> mtu 9000
and make it persistent, whichever the guest uses:
  NetworkManager: nmcli con mod <connection> 802-3-ethernet.mtu 9000; nmcli con up <connection>
  netplan:        `mtu: 9000` under the interface in /etc/netplan/*.yaml; netplan apply
In a VM the VF must allow a guest MTU change (RW304 allowGuestOSMtuChange) and the VDS must
carry 9000 (RW303).
Sources: `ip link set dev <if> mtu N` and the probe's `ip -j addr show` — ip-link(8) / ip-address(8), the real
    binary (Debian iproute2); `nmcli con mod <conn> 802-3-ethernet.mtu N`, `nmcli con up` —
    nm-settings-nmcli(5)."""


def test_reflow_joins_wrapped_prose_and_keeps_deliberate_breaks():
    assert reflow(RW405).splitlines() == [
        "ip link set dev <netdev> mtu 9000",
        "and make it persistent, whichever the guest uses:",
        "  NetworkManager: nmcli con mod <connection> 802-3-ethernet.mtu 9000; nmcli con up <connection>",
        "  netplan:        `mtu: 9000` under the interface in /etc/netplan/*.yaml; netplan apply",
        "In a VM the VF must allow a guest MTU change (RW304 allowGuestOSMtuChange) and the VDS must carry 9000 "
        "(RW303).",
        "Sources: `ip link set dev <if> mtu N` and the probe's `ip -j addr show` — ip-link(8) / ip-address(8), the "
        "real binary (Debian iproute2); `nmcli con mod <conn> 802-3-ethernet.mtu N`, `nmcli con up` — "
        "nm-settings-nmcli(5).",
    ]


def test_reflow_keeps_indented_commands_after_a_colon():
    text = ("Read the current string, change only pfctx/pfcrx, write it all back, as the driver's manual says:\n"
            "    esxcli system module parameters list -m nmlx5_core\n"
            "then reboot the host.")
    assert reflow(text) == text
