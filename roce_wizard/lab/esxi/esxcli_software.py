"""`esxcli software vib ...` and the datastore the VIBs are installed from."""

from __future__ import annotations

import re
import time
from typing import Any

from roce_wizard.lab import scenarios
from roce_wizard.lab.esxi.common import NMLX5_ZIP, VIB_DIR, _err
from roce_wizard.lab.esxi.esxcli_model import Out, _fields
from roce_wizard.lab.proto import Ctx, Reply
from roce_wizard.lab.world import EsxiHost, Vib, World

# ---------------------------------------------------------------------------- software vib


def _vib_id(v: Vib) -> str:
    return f"{v.vendor}_bootbank_{v.name}_{v.version}"


def _vib_list(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out:
    rows = []
    for v in sorted(host.vibs_installed.values(), key=lambda v: (v.vendor, v.name)):
        rows.append({"Name": v.name, "Version": v.version, "Vendor": v.vendor, "AcceptanceLevel": v.acceptance,
                     "InstallDate": v.install_date, "ID": _vib_id(v), "CreationDate": v.install_date,
                     "Status": ""})
    return Out("table", "VIB", _fields("Name", "Version", "Vendor", "Acceptance Level", "Install Date"), rows,
               extra=["ID", "CreationDate", "Status"])


_VIB_FILE_RE = re.compile(r"^(?P<vendor>[A-Za-z]+)_bootbank_(?P<name>[a-z0-9-]+)_(?P<version>[^/]+)\.vib$")
_KNOWN_VIBS = {v.name: v for v in (scenarios.MFT, scenarios.NMST, scenarios.NMLX5_ASYNC,
                                    scenarios.NMLX5_RDMA_ASYNC)}


def datastore(world: World) -> dict[str, str]:
    """The shared datastore's package files in this world (a copy of `datastore_files()` to start with):
    a test or a lab user may put other packages there, e.g. NVIDIA's offline-bundle .zip of MFT/NMST
    instead of the .vib files."""
    return world.__dict__.setdefault("lab_datastore", dict(datastore_files()))


def datastore_files() -> dict[str, str]:
    """The packages seed 000 keeps on the shared datastore (what the fixes install from)."""
    return {
        f"{VIB_DIR}/{_vib_id(scenarios.MFT)}.vib": "(VMware installation bundle: mft)\n",
        f"{VIB_DIR}/{_vib_id(scenarios.NMST)}.vib": "(VMware installation bundle: nmst)\n",
        f"{VIB_DIR}/{NMLX5_ZIP}": "(offline bundle: nmlx5-core, nmlx5-rdma 4.21.71.101)\n",
    }


def _vibs_in_file(path: str) -> list[Vib] | None:
    """The VIBs a package file holds, from its name (None: not a package the lab knows)."""
    base = path.rsplit("/", 1)[-1]
    m = _VIB_FILE_RE.match(base)
    if m and m["name"] in _KNOWN_VIBS:
        known = _KNOWN_VIBS[m["name"]]
        return [Vib(m["name"], m["version"], m["vendor"], known.acceptance)]
    for name in ("nmst", "mft"):  # NVIDIA's own file names: nmst-<version>.x86_64.vib, mft-...
        if base.endswith(".vib") and re.match(rf"^{name}[-_]", base, re.IGNORECASE):
            return [_KNOWN_VIBS[name]]
    if base.endswith(".zip") and "nmlx5" in base.lower():
        return [scenarios.NMLX5_ASYNC, scenarios.NMLX5_RDMA_ASYNC]
    # an offline bundle / component zip of the firmware tools (NVIDIA ships MFT for ESXi so too: RW201); the
    # real esxcli reads the bundle's index.xml, the lab goes by the name
    for name in ("nmst", "mft"):
        if base.endswith(".zip") and re.search(name, base, re.IGNORECASE):
            return [_KNOWN_VIBS[name]]
    return None


def _package_exists(ctx: Ctx, path: str) -> bool:
    if not path.startswith("/"):
        return False
    if path in ctx.files:  # the world's datastore (files() holds it)
        return True
    # another datastore folder holding a copy of a known package
    return path.startswith("/vmfs/volumes/") and "*" not in path and _vibs_in_file(path) is not None


def _install_result(title: str, message: str, reboot: bool, installed: list[str], removed: list[str],
                    skipped: list[str]) -> Out:
    row = {"Message": message, "RebootRequired": reboot, "VIBsInstalled": installed, "VIBsRemoved": removed,
           "VIBsSkipped": skipped}
    return Out("structs", "InstallationResult", _fields("Message", "Reboot Required")
               + [("VIBs Installed", "VIBsInstalled"), ("VIBs Removed", "VIBsRemoved"),
                  ("VIBs Skipped", "VIBsSkipped")], [row], title=title)


_REBOOT_MSG = "The update completed successfully, but the system needs to be rebooted for the changes to be effective."


def _vib_install(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out | Reply:
    urls = opts.get("viburl") or []
    depots = opts.get("depot") or []
    if not urls and not depots:
        return _err("Error: At least one of -v|--viburl or -d|--depot must be given")
    wanted: list[Vib] = []
    for url in urls:
        path = url.removeprefix("file://")
        vibs = _vibs_in_file(path) if _package_exists(ctx, path) else None
        if vibs is None or not path.endswith(".vib"):
            return _err(f"[VibDownloadError]\n ('{url}', '', \"[Errno 2] No such file or directory: '{path}'\")\n"
                        f" url = {url}\n Please refer to the log file for more details.")
        wanted += vibs
    for depot in depots:
        path = depot.removeprefix("file://")
        vibs = _vibs_in_file(path) if _package_exists(ctx, path) else None
        if vibs is None or not path.endswith(".zip"):
            index = f"zip:{path}?index.xml"
            return _err(f"[MetadataDownloadError]\n Could not download from depot at {index}, skipping "
                        f"(('{index}', '', \"Error extracting index.xml from {path}: [Errno 2] No such file or "
                        f"directory: '{path}'\"))\n"
                        f"        url = {index}\n Please refer to the log file for more details.")
        names = opts.get("vibname") or []
        wanted += [v for v in vibs if not names or v.name in names]
    installed, removed, skipped = [], [], []
    changes: list[Vib] = []
    for vib in wanted:
        have = host.vibs_installed.get(vib.name)
        if have is not None and have.version == vib.version and have.vendor == vib.vendor:
            skipped.append(_vib_id(vib))
            continue
        installed.append(_vib_id(vib))
        if have is not None:
            removed.append(_vib_id(have))
        changes.append(vib)
    if opts.get("dry-run"):
        return _install_result("Installation Result", "Dryrun only, host not changed. The following installers will "
                               "be applied: [BootBankInstaller]", bool(changes), installed, removed, skipped)
    if not changes:
        return _install_result("Installation Result", "Host is not changed.", False, [], [], skipped)
    today = time.strftime("%Y-%m-%d")
    for vib in changes:
        host.vibs_installed[vib.name] = Vib(vib.name, vib.version, vib.vendor, vib.acceptance, today)
    return _install_result("Installation Result", _REBOOT_MSG, True, installed, removed, skipped)


def _vib_remove(ctx: Ctx, host: EsxiHost, opts: dict[str, Any]) -> Out | Reply:
    removed = []
    for name in opts["vibname"]:
        vib = host.vibs_installed.get(name) or next(
            (v for v in host.vibs_installed.values() if _vib_id(v) == name), None)
        if vib is None:
            return _err(f"[NoMatchError]\n No VIB matching VIB search specification '{name}'.\n"
                        " Please refer to the log file for more details.")
        removed.append(vib)
    if opts.get("dry-run"):
        return _install_result("Removal Result", "Dryrun only, host not changed. The following installers will be "
                               "applied: [BootBankInstaller]", True, [], [_vib_id(v) for v in removed], [])
    for vib in removed:
        host.vibs_installed.pop(vib.name, None)
    return _install_result("Removal Result", _REBOOT_MSG, True, [], [_vib_id(v) for v in removed], [])
