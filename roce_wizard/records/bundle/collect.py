"""What a support bundle collects from a run: the run directory, its journal, the versions its recorded
outputs show, the reboot ledger of its hosts and the inventory it used."""

from __future__ import annotations

import platform
import sys
from pathlib import Path
from typing import Any

from roce_wizard import __version__


class BundleError(Exception):
    """Bad input (no run, missing run dir, unreadable inventory, unwritable output): exit 2."""


def find_run(run: Path | None, base: Path | None = None) -> Path:
    """The run directory to export: `run` as given, else the newest run under the state dir."""
    from roce_wizard.records.runlog import runs_dir  # noqa: PLC0415

    if run is not None:
        if not run.is_dir():
            raise BundleError(f"--run {run}: no such run directory")
        if not (run / "events.jsonl").exists() and not (run / "raw").is_dir():
            raise BundleError(f"--run {run}: not a run directory (no events.jsonl, no raw/)")
        return run
    root = runs_dir(base)
    # a run's name is its start second and a random suffix: two runs of one second (a doctor, then the fix
    # right after it) are ordered by when their journal was last written, never by the random part
    runs = sorted((p for p in root.iterdir() if p.is_dir()), key=_run_order) if root.is_dir() else []
    latest = root / "latest"
    if latest.is_file():
        named = root / latest.read_text(encoding="utf-8").strip()
        if named.is_dir():
            newest = runs[-1] if runs else named
            return newest if _run_order(newest) > _run_order(named) else named
    if not runs:
        raise BundleError(f"no runs under {root}: run `roce-wizard doctor` first, or pass --run RUN_DIR")
    return runs[-1]


def _run_order(run: Path) -> tuple[str, int]:
    try:
        written = (run / "events.jsonl").stat().st_mtime_ns
    except OSError:
        written = 0
    return run.name[:15], written


def read_json(path: Path) -> Any:
    from roce_wizard.records.runlog import read_json_file  # noqa: PLC0415

    return read_json_file(path)  # torn (cut mid-character, NUL padding): None, said once


def run_events(run_dir: Path) -> list[dict[str, Any]]:
    from roce_wizard.records.runlog import read_events  # noqa: PLC0415

    return read_events(run_dir)


def versions(run_dir: Path, kinds: dict[str, str]) -> dict[str, Any]:
    """Tool, Python, platform; per host what its recorded outputs say (\"unknown\" where none did)."""
    from roce_wizard.analyze import read_one  # noqa: PLC0415

    hosts: dict[str, dict[str, Any]] = {}
    raw = run_dir / "raw"
    for target_dir in sorted(p for p in raw.iterdir() if p.is_dir()) if raw.is_dir() else []:
        facts: dict[str, Any] = {}
        for f in sorted(target_dir.glob("*.json")):
            read = read_one(f, str(target_dir))
            if read.facts is not None:
                facts.setdefault(read.kind, read.facts)
        kind = kinds.get(target_dir.name, "")
        if not facts and kind not in ("esxi", "guest", "linux"):
            continue
        hosts[target_dir.name] = _host_versions(facts, kind)
    return {
        "roce_wizard": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "hosts": hosts,
    }


def _host_versions(facts: dict[str, Any], kind: str) -> dict[str, Any]:
    unknown = "unknown"
    out: dict[str, Any] = {"kind": kind or unknown, "esxi_build": unknown, "firmware": unknown,
                           "driver": unknown, "ofed": unknown}
    summary = facts.get("esxi_host_summary") or {}
    if summary.get("product"):
        out["esxi_build"] = summary["product"]
    firmware = sorted({d.get("fw_current") for d in (facts.get("mlxfwmanager") or {}).get("devices", [])
                       if d.get("fw_current")}
                      | {d.get("fw_ver") for d in (facts.get("ibv_devinfo") or {}).get("devices", []) if d.get("fw_ver")})
    if firmware:
        out["firmware"] = ", ".join(firmware)
    vibs = {v.get("name"): v.get("version") for v in (facts.get("esxi_vib_list") or {}).get("vibs", [])}
    drivers = [f"{n} {vibs[n]}" for n in ("nmlx5-core", "nmlx5-rdma") if vibs.get(n)]
    if drivers:
        out["driver"] = ", ".join(drivers)
    elif kind in ("guest", "linux") and facts.get("ofed_info", {}).get("version"):
        out["driver"] = f"mlx5_core (MLNX_OFED {facts['ofed_info']['version']})"
    ofed = facts.get("ofed_info") or {}
    if ofed.get("version"):
        out["ofed"] = f"{ofed.get('flavor') or 'OFED'} {ofed['version']}"
    return out


def reboot_ledger(run_dir: Path, events: list[dict[str, Any]], hosts: set[str]) -> dict[str, Any]:
    """The reboot ledger (roce_wizard.engine.reboots) for this run's hosts."""
    from roce_wizard.records.ledger import build_ledger, ledger_from_events  # noqa: PLC0415

    try:
        # under a state dir: every run's events (the ledger spans runs); a run dir elsewhere: its own
        ledger = build_ledger(run_dir.parent.parent) if run_dir.parent.name == "runs" else ledger_from_events(events)
    except Exception as exc:  # noqa: BLE001 - a ledger that cannot be built is reported, the bundle goes on
        return {"source": "roce_wizard.reboots", "error": f"{type(exc).__name__}: {exc}", "hosts": {}}
    return {"source": "roce_wizard.reboots",
            "hosts": {h: entry.to_dict() for h, entry in sorted(ledger.items()) if not hosts or h in hosts}}


def load_inventory_at(path: Path | None, explicit: bool) -> tuple[Any | None, list[str]]:
    from roce_wizard.inventory import InventoryError, load_inventory  # noqa: PLC0415

    if path is None:
        return None, ["no inventory: this run recorded none; pass -i inventory.yaml to include it"]
    if not path.is_file():
        if explicit:
            raise BundleError(f"-i {path}: no such file")
        return None, [f"inventory {path} (as the run recorded it) is gone; pass -i to include one"]
    try:
        return load_inventory(path), []
    except InventoryError as exc:
        if explicit:
            raise BundleError(str(exc)) from None
        return None, [f"inventory {path} could not be read: {exc}"]
