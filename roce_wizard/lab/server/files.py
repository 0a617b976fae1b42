"""The lab directory's files: lab.env, state.json, inventory.yaml's YAML style, atomic private writes."""

from __future__ import annotations

import json
import os
import shlex
import tempfile
from pathlib import Path
from typing import Any

import yaml

from roce_wizard.lab.scenarios import WIDE_ABOVE, roce_ip
from roce_wizard.lab.server.config import DEFAULT_VFS, ENV_FILE, ROCE_VMNICS, STATE_FILE
from roce_wizard.lab.world import EsxiHost, Guest, World


def read_env(directory: str | Path) -> dict[str, str]:
    """The credentials a lab wrote to DIR/lab.env (what `set -a; . DIR/lab.env` would export)."""
    path = Path(directory) / ENV_FILE
    out: dict[str, str] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line and not line.startswith("#") and "=" in line:
                key, _, value = line.partition("=")
                out[key] = (shlex.split(value) or [""])[0]
    return out


# ---------------------------------------------------------------------------- helpers


class _InventoryDumper(yaml.SafeDumper):
    """Plain YAML a person can read: no &anchors, short lists of scalars inline."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
    flow = all(isinstance(x, (str, int, float)) for x in data) and len(data) <= 8
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


_InventoryDumper.add_representer(list, _represent_list)


def _vfs_of(host: EsxiHost) -> list[int]:
    """VFs per RoCE port as the host's nmlx5 max_vfs gives them (the scenario's intent)."""
    raw = host.module_params.get("max_vfs", "")
    try:
        entries = [int(x) for x in raw.split(",") if x.strip() != ""]
    except ValueError:
        entries = []
    order = [n.name for n in host.nmlx5_vmnics()]
    vfs = []
    for i, vmnic in enumerate(ROCE_VMNICS):
        position = order.index(vmnic) if vmnic in order else -1
        value = entries[position] if 0 <= position < len(entries) else 0
        vfs.append(value)
    if not any(vfs):
        return list(DEFAULT_VFS)
    return vfs


def _roce_ip(world: World, guest: Guest) -> str | None:
    iface = guest.interface(guest.roce_netdev)
    if iface is not None and iface.ipv4:
        return iface.ipv4[0]
    if guest.vm is None:
        return None
    # a fresh guest has no RoCE address yet: the one the healthy cluster gives it (the intent)
    digits = "".join(ch for ch in guest.name if ch.isdigit())
    return roce_ip(int(digits), len(world.hosts) > WIDE_ABOVE) if digits else None


def _write_private(path: Path, data: bytes) -> None:
    _atomic_write(path, data.decode(), 0o600)


def _atomic_write(path: Path, text: str, mode: int = 0o644) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def read_state(directory: str | os.PathLike[str]) -> dict[str, Any] | None:
    """DIR/state.json, or None when there is none (yet)."""
    try:
        return json.loads((Path(directory) / STATE_FILE).read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None
