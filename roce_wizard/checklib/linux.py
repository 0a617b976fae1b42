"""What the Linux guest and bare-metal checks (RW4xx) share: which RDMA device / port / netdev to judge,
and the fix steps (validated netdev and RDMA device names, NetworkManager profiles, systemd boot units).

Checks stay pure: these functions only read `Facts` and build `Step`s.
"""

from __future__ import annotations

import re

from roce_wizard.commands.shell import UnsafeValue, safe
from roce_wizard.model import Facts, Step
from roce_wizard.probes import rdma_device

__all__ = [
    "UNIT_DIR",
    "boot_unit_steps",
    "hca_section",
    "nm_connection",
    "nm_modify_step",
    "rdma_links",
    "roce_netdevs",
    "roce_ports",
    "safe_netdev",
    "safe_rdmadev",
]


# ---------------------------------------------------------------------------- Linux RDMA


def rdma_links(facts: Facts) -> list[dict]:
    """RDMA device/port -> netdev bindings: `rdma link show` first, then `ibdev2netdev`."""
    return [*(facts.get("rdma_link") or {}).get("links", []), *(facts.get("ibdev2netdev") or {}).get("links", [])]


def hca_section(raw: str | None, hca_id: str) -> str | None:
    """The part of an ibv_devinfo output about one device (the whole output when it is not found)."""
    if not raw:
        return None
    m = re.search(rf"hca_id:\s*{re.escape(hca_id)}\b.*?(?=hca_id:|\Z)", raw, re.DOTALL)
    return m.group(0) if m else raw


def roce_ports(facts: Facts) -> tuple[list[tuple[dict, dict, str | None]], bool, str | None]:
    """(device, port, netdev) to judge; whether they are the inventory's RoCE port; why none."""
    devices = {d.get("hca_id"): d for d in facts.need("ibv_devinfo").get("devices", []) if d.get("hca_id")}
    links = rdma_links(facts)
    bound = {(lk.get("dev"), lk.get("port")): lk.get("netdev") for lk in links}
    eth = [(d, p, bound.get((n, p.get("port")))) for n, d in devices.items() for p in d.get("ports", [])
           if (p.get("link_layer") or "").lower() == "ethernet"]
    t = facts.target
    if t is None or not (t.roce.netdev or t.roce.rdma_dev):
        return eth, False, None if eth else "ibv_devinfo shows no Ethernet port"
    name = rdma_device(t, facts.data)
    if name is None:
        if not links and len(eth) == 1:
            return eth, True, None
        return [], True, f"no RDMA device is known to serve {t.roce.netdev} (RW402)"
    dev = devices.get(name)
    if dev is None:
        return [], True, f"{name} is not listed by ibv_devinfo (RW402)"
    pno = next((lk.get("port") for lk in links if lk.get("dev") == name and lk.get("netdev") == t.roce.netdev), 1)
    port = next((p for p in dev.get("ports", []) if p.get("port") == pno), None)
    if port is None:
        return [], True, f"ibv_devinfo shows no port {pno} on {name}"
    return [(dev, port, t.roce.netdev)], True, None


def roce_netdevs(facts: Facts) -> tuple[list[str], str | None]:
    """The RoCE netdev(s) to judge: the inventory's; else those an RDMA link binds and that are up."""
    t = facts.target
    if t is not None and t.roce.netdev:
        return [t.roce.netdev], None
    links = rdma_links(facts)
    if t is not None and t.roce.rdma_dev:
        names = [lk["netdev"] for lk in links if lk.get("dev") == t.roce.rdma_dev and lk.get("netdev")]
        if names:
            return names[:1], None
    ifaces = {i.get("name"): i for i in facts.need("ip_json").get("interfaces", [])}
    names = []
    for lk in links:
        name = lk.get("netdev")
        up = (lk.get("state") or "").upper() in ("UP", "ACTIVE")
        if name in ifaces and up and (ifaces[name].get("link_type") or "ether") == "ether" and name not in names:
            names.append(name)
    if names:
        return names, None
    return [], "which interface carries RoCE needs the inventory's roce.netdev (or rdma link / ibdev2netdev output)"


# ---------------------------------------------------------------------------- fix plans (Linux guest / bare metal)
# Settings a Linux fix changes at run time are lost at reboot unless persisted the way the guest's
# own stack expects: NetworkManager profiles for MTU / addresses / pause, a systemd oneshot unit for
# what no network manager knows (cma_roce_mode, the RoCE traffic class, mlnx_qos).

_FIX_NETDEV = re.compile(r"^[A-Za-z0-9_.@-]{1,15}$")  # stricter than probes' _IFNAME: it goes into a grep pattern
_FIX_RDMADEV = re.compile(r"^[A-Za-z0-9_.-]{1,32}$")
_NM_VALUE = re.compile(r"^[A-Za-z0-9_.,:/+-]{0,256}$")
_UNIT_NAME = re.compile(r"^[A-Za-z0-9_.@-]{1,64}\.service$")
UNIT_DIR = "/etc/systemd/system"


def safe_netdev(name: str) -> str:
    """A Linux netdev name, validated for a fix command (quoted when needed)."""
    return safe(name, _FIX_NETDEV)


def safe_rdmadev(name: str) -> str:
    """An RDMA device name (mlx5_0), validated for a fix command."""
    return safe(name, _FIX_RDMADEV)


def nm_connection(netdev: str) -> str:
    """Shell lines setting $c to the NetworkManager connection on `netdev`; they exit 1 with a message
    when there is none (a netplan / ifcfg guest: persisting there is by hand)."""
    safe_netdev(netdev)
    pattern = ":" + netdev.replace(".", "\\.") + "$"
    return (f"c=$(nmcli -t -f NAME,DEVICE con show | grep -e '{pattern}' | head -n 1 | cut -d: -f1); "
            f'[ -n "$c" ] || {{ echo "no NetworkManager connection on {netdev}: persist it in netplan / ifcfg '
            f'by hand" >&2; exit 1; }}')


def nm_modify_step(netdev: str, settings: list[tuple[str, str]], what: str, before: str | None = None) -> Step:
    """Persist `settings` (NetworkManager property, value) in the connection profile of `netdev`.

    `nmcli con mod` changes the profile only (what applies at boot / on `con up`): the change that
    is wanted now is a step of its own (ip / ethtool), so the link is not re-activated."""
    args = []
    for key, value in settings:
        if not re.fullmatch(r"[+-]?[a-z0-9-]+\.[a-z0-9-]+", key) or not _NM_VALUE.match(value):
            raise UnsafeValue(f"refusing to put {key}={value!r} into a remote command")
        args.append(f"{key} {safe(value, _NM_VALUE) if value else chr(39) * 2}")
    return Step(f"persist {what} in the NetworkManager profile of {netdev} (applies at every boot)",
                f'{nm_connection(netdev)}; nmcli con mod "$c" {" ".join(args)}',
                before=before, after=" ".join(f"{k} {v}" for k, v in settings))


def boot_unit_steps(unit: str, description: str, commands: list[str], after: str = "openibd.service") -> tuple[Step, ...]:
    """Write a systemd oneshot unit that runs `commands` at every boot, and enable it.

    `commands` are ExecStart lines built from validated values only (a shell redirection goes
    through `/bin/sh -c "…"`). Writing the unit again is harmless: the steps are idempotent."""
    import shlex

    if not _UNIT_NAME.match(unit):
        raise UnsafeValue(f"refusing to name a unit {unit!r}")
    for cmd in commands:
        if "\n" in cmd or "'" in cmd:
            raise UnsafeValue(f"refusing to put {cmd!r} into a unit file")
    lines = ["[Unit]", f"Description={description}", f"After={after} network-online.target",
             "Wants=network-online.target", "", "[Service]", "Type=oneshot", "RemainAfterExit=yes",
             *(f"ExecStart={cmd}" for cmd in commands), "", "[Install]", "WantedBy=multi-user.target"]
    path = f"{UNIT_DIR}/{unit}"
    text = " ".join(shlex.quote(line) for line in lines)
    return (
        Step(f"write the boot hook {path} (a systemd oneshot unit)", f"printf '%s\\n' {text} > {path}",
             before=None, after="; ".join(commands)),
        Step(f"enable {unit} so it runs at every boot", f"systemctl daemon-reload && systemctl enable {unit}",
             before=None, after="enabled"),
    )
