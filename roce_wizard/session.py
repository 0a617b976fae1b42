"""What both front ends need before the engine runs: the inventory, playbook and catalog as one
`Setup`, and the live transports for its targets. The CLI turns a `SetupError` into exit 2; the
wizard shows it. One place, so `doctor`, `fix` and the wizard cannot drift apart.
"""

from __future__ import annotations

import getpass
import importlib
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from roce_wizard.catalog import CatalogError, load_catalog, select
from roce_wizard.model import SSH_KINDS, LoadedCheck, Policy, SecretSource, Stage, Target, TargetKind


class SetupError(Exception):
    """The inventory, playbook, catalog or a selection cannot be used; the message says why."""


def split_list(values: list[str] | None) -> list[str]:
    """`--select RW2,RW304 --select RW5` → ["RW2", "RW304", "RW5"]."""
    return [v.strip() for raw in values or [] for v in raw.split(",") if v.strip()]


class Prompter:
    """Resolves credentials by reference once per reference; never logs or echoes them.
    `interactive=False` (the wizard owns the terminal) never prompts: a `prompt:` secret then fails
    that target's login, which RW001 reports."""

    def __init__(self, interactive: bool = True) -> None:
        self.cache: dict[tuple[str, str, str], str] = {}
        self.interactive = interactive

    def __call__(self, target: Target) -> str | None:
        from roce_wizard.inventory import InventoryError, resolve_secret  # noqa: PLC0415
        from roce_wizard.transports.base import ConnectErrorKind, TransportError  # noqa: PLC0415

        ref = target.credentials.password
        if ref is None:
            return None
        key = (ref.source.value, ref.name, target.name if ref.source is SecretSource.PROMPT else "")
        if key not in self.cache:
            prompt = getpass.getpass if self.interactive and sys.stdin.isatty() else None
            try:
                self.cache[key] = resolve_secret(ref, prompt=prompt)
            except InventoryError as exc:  # e.g. the env var is unset: nothing is sent, the cause is the message
                raise TransportError(ConnectErrorKind.CREDENTIAL, target, exc.problem) from None
        return self.cache[key]


# Transports for the kinds that are not reached over SSH: module, class. Each takes the keyword
# arguments below and turns every failure into a TransportError or a CommandResult.
OTHER_TRANSPORTS = {
    TargetKind.VCENTER: ("roce_wizard.transports.vsphere", "VSphereTransport"),
    TargetKind.SWITCH: ("roce_wizard.transports.switch", "SwitchTransport"),
    TargetKind.BMC: ("roce_wizard.transports.redfish", "RedfishTransport"),
}


def live_transports(kinds: set[TargetKind], *, known_hosts: Path | None, trust_on_first_use: bool,
                    concurrency: int, connect_timeout: float, timeout: float, run_dir: Path,
                    interactive: bool = True) -> dict[TargetKind, Any]:
    """One transport per target kind (SSH shared by the SSH kinds)."""
    from roce_wizard.transports.ssh import SshTransport  # noqa: PLC0415

    prompter = Prompter(interactive)
    common = {"password_resolver": prompter, "connect_timeout": connect_timeout, "command_timeout": timeout,
              "max_concurrent_connects": concurrency}
    ssh = SshTransport(known_hosts=known_hosts, trust_on_first_use=trust_on_first_use, **common)
    out: dict[TargetKind, Any] = {kind: ssh for kind in SSH_KINDS}
    for kind in sorted(kinds - SSH_KINDS, key=lambda k: k.value):
        module_name, class_name = OTHER_TRANSPORTS[kind]
        module = importlib.import_module(module_name)
        extra = {"known_hosts": known_hosts, "trust_on_first_use": trust_on_first_use,
                 "session_log_dir": run_dir / "sessions"} if kind is TargetKind.SWITCH else {}
        if kind is TargetKind.SWITCH:  # the transport never parses: it is given the check side's read-back
            from roce_wizard.checklib.switch_verify import read_back  # noqa: PLC0415

            extra["verify"] = read_back
        out[kind] = getattr(module, class_name)(**common, **extra)
    return out


@dataclass
class Setup:
    targets: list[Target]
    chosen: dict[str, LoadedCheck]
    stage_of: dict[str, Stage]
    policy: Policy
    playbook: str
    warnings: list[str] = field(default_factory=list)  # the inventory's (plaintext passwords, …)


def load_setup(inventory: Path, playbook: str = "vsphere-sriov", select_: list[str] | None = None,
               skip: list[str] | None = None, stage: list[str] | None = None, host: list[str] | None = None,
               checks_dir: list[Path] | None = None) -> Setup:
    """Inventory, playbook, catalog and selections as doctor, fix and the wizard read them."""
    from roce_wizard.inventory import InventoryError, load_inventory  # noqa: PLC0415
    from roce_wizard.playbook import PlaybookError, load_playbook  # noqa: PLC0415

    try:
        inv = load_inventory(inventory)
        book = load_playbook(playbook)
        catalog = load_catalog(checks_dir or [])
    except (InventoryError, PlaybookError, CatalogError) as exc:
        raise SetupError(str(exc)) from None
    stage_of = {code: book.stage_of(code) for code in catalog}
    # site checks not named by the playbook run in their own stage
    builtin = str(Path(__file__).parent.parent / "checks")
    site = {code: c for code, c in catalog.items() if stage_of[code] is None and checks_dir
            and not c.path.startswith(builtin)}
    in_book = {code: c for code, c in catalog.items() if stage_of[code] is not None or code in site}
    stage_of = {code: stage_of[code] or in_book[code].meta.stage for code in in_book}
    try:
        chosen = select(in_book, split_list(select_), split_list(skip))
    except CatalogError as exc:
        raise SetupError(str(exc)) from None
    stages = split_list(stage)
    if stages:
        valid = {s.value for s in Stage}
        bad = [s for s in stages if s not in valid]
        if bad:
            raise SetupError(f"--stage {', '.join(bad)}: expected one of {', '.join(sorted(valid))}")
        keep_preflight = "preflight" not in stages
        chosen = {c: v for c, v in chosen.items()
                  if stage_of[c].value in stages or (keep_preflight and c == "RW001")}
    try:
        targets = inv.select(host or [])  # names, host ranges (esx-[01-04]) or globs
    except InventoryError as exc:
        raise SetupError(str(exc)) from None
    policy = inv.policy if book.policy == {} else Policy(**{**book.policy, **inv.policy.to_dict()})
    return Setup(targets, chosen, stage_of, policy, book.name, list(inv.warnings))
