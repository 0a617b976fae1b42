"""`doctor --local`: this machine as the run's one target, reached by the local transport (no SSH).

`local_setup` builds the one-target inventory (kind `linux`, or `guest` for a VM's guest OS; name = this
host's name; address `localhost`; the RoCE fields the caller knows) and loads it exactly as an inventory
file is loaded (`session.load_setup`: the same field validation, playbook, catalog and selections), so
`--select`, `--skip`, `--stage` and `--checks-dir` mean what they mean for any doctor run.
`local_transports` gives the engine the local transport for that kind.
"""

from __future__ import annotations

import dataclasses
import re
import socket
import tempfile
from pathlib import Path
from typing import Any

import yaml

from roce_wizard.model import TargetKind
from roce_wizard.session import Setup, SetupError, load_setup
from roce_wizard.transports.local import LocalTransport

LOCAL_SOURCE = "doctor --local"
_PLAYBOOK = {TargetKind.LINUX: "baremetal", TargetKind.GUEST: "vsphere-sriov"}


def local_inventory(guest: bool = False, *, name: str | None = None, netdev: str | None = None,
                    rdma_dev: str | None = None, pf_pci: str | None = None, ip: str | None = None) -> dict[str, Any]:
    """The inventory document of this machine alone (a plain dict, as a YAML inventory would hold it)."""
    kind = TargetKind.GUEST if guest else TargetKind.LINUX
    roce = {"netdev": netdev, "rdma_dev": rdma_dev, "ip": ip}
    if kind is TargetKind.LINUX:
        roce["pf_pci"] = pf_pci
    elif pf_pci:
        raise SetupError("--pf-pci: a guest's RoCE port is a VF; give its --netdev / --rdma-dev instead")
    entry: dict[str, Any] = {"name": name or socket.gethostname(), "address": "localhost"}
    if any(roce.values()):
        entry["roce"] = {k: v for k, v in roce.items() if v}
    return {"targets": {kind.value: [entry]}}


def local_setup(guest: bool = False, *, playbook: str | None = None, select_: list[str] | None = None,
                skip: list[str] | None = None, stage: list[str] | None = None,
                checks_dir: list[Path] | None = None, name: str | None = None, netdev: str | None = None,
                rdma_dev: str | None = None, pf_pci: str | None = None, ip: str | None = None) -> Setup:
    """The Setup of `doctor --local`: this machine as its one target. `playbook` defaults to baremetal for a
    linux host and vsphere-sriov for a guest. A value the inventory would refuse (a netdev with a '/', a
    hostname that is not a target name) is a SetupError naming the option."""
    document = local_inventory(guest, name=name, netdev=netdev, rdma_dev=rdma_dev, pf_pci=pf_pci, ip=ip)
    kind = TargetKind.GUEST if guest else TargetKind.LINUX
    with tempfile.TemporaryDirectory(prefix="roce-wizard-local-") as tmp:
        path = Path(tmp) / "local-inventory.yaml"
        path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
        try:
            setup = load_setup(path, playbook or _PLAYBOOK[kind], select_, skip, stage, None, checks_dir)
        except SetupError as exc:
            raise SetupError(_as_option(str(exc), str(path))) from None
    setup.targets = [dataclasses.replace(t, source=LOCAL_SOURCE) for t in setup.targets]
    setup.warnings = [_as_option(w, str(path)) for w in setup.warnings]
    return setup


def local_transports(setup: Setup, *, timeout: float = 60.0) -> dict[TargetKind, LocalTransport]:
    """The engine's transports for a local setup: one LocalTransport for the kinds of its targets."""
    transport = LocalTransport(command_timeout=timeout)
    return {t.kind: transport for t in setup.targets}


def _as_option(message: str, path: str) -> str:
    """An inventory message about the generated file, said about `doctor --local` and its options."""
    for field, option in (("roce.netdev", "--netdev"), ("roce.rdma_dev", "--rdma-dev"),
                          ("roce.pf_pci", "--pf-pci"), ("roce.ip", "--ip"), (".name", "the host name")):
        if field in message:
            message = f"{option}: {message}"
            break
    return re.sub(re.escape(path) + r"(?::\d+)?", LOCAL_SOURCE, message)
