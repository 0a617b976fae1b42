"""The fix of a switch check: the commands by hand in the vendor's syntax (`vendor_fix`, a finding's `fix`)
and the fix plan (`switch_plan`: one `switch-config` step per switch and check, every failing port in it).
Every switch change: rollback point first, a config session where the vendor has one, save only after verifying."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from roce_wizard.checklib.switch import ALL_PORTS, UNLISTED_PORTS, VENDOR_NAMES, vendor_of
from roce_wizard.commands.switch_config import CONFIG_VENDORS, render_config_command
from roce_wizard.model import Facts
from roce_wizard.parsers.switch import port_key

__all__ = ["FixParts", "FixText", "config_lines", "interface_name", "switch_plan", "vendor_fix"]




def interface_name(vendor: str, port: str) -> str:
    """How the vendor's config mode names the port: EOS `Ethernet3`, Onyx `ethernet 1/3`, OS10
    `ethernet1/1/3`, NVUE `swp3`."""
    key = port_key(port)
    if key is None or port == ALL_PORTS:
        return port
    nums = "/".join(str(n) for n in key[1])
    names = {
        "eos": {"eth": f"Ethernet{nums}", "po": f"Port-Channel{nums}"},
        "onyx": {"eth": f"ethernet {nums}", "po": f"port-channel {nums}", "mpo": f"mlag-port-channel {nums}"},
        "os10": {"eth": f"ethernet{nums}", "po": f"port-channel{nums}"},
    }
    return names.get(vendor, {}).get(key[0], port)


@dataclass(frozen=True)
class FixParts:
    """What a fix-by-hand configures, as data: plan_fix groups these across ports into one change."""

    vendor: str
    port: str | None
    interface_lines: tuple[str, ...]
    global_lines: tuple[str, ...]


_PORT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9/._:-]{0,63}$")


class FixText(str):
    """A finding's fix-by-hand text that also carries its `FixParts` (a str everywhere else)."""

    parts: FixParts


def vendor_fix(vendor: str, port: str | None, interface_lines: list[str] = (), global_lines: list[str] = ()) -> str:  # type: ignore[assignment]
    """The exact commands, from a rollback point to the save, for one port (and/or switch-wide lines).
    A port name the switch printed that does not look like one gives a sentence, no lines (and no plan)."""
    if port and port not in (ALL_PORTS, UNLISTED_PORTS) and not _PORT_NAME.match(port):
        from roce_wizard.commands.handfix import SWITCH_PORT, refused

        return refused(SWITCH_PORT)
    text = FixText(_vendor_fix_text(vendor, port, interface_lines, global_lines))
    text.parts = FixParts(vendor, port, tuple(interface_lines), tuple(global_lines))
    return text


def _vendor_fix_text(vendor: str, port: str | None, interface_lines: list[str] = (),  # type: ignore[assignment]
                     global_lines: list[str] = ()) -> str:  # type: ignore[assignment]
    ifname = interface_name(vendor, port) if port and port != ALL_PORTS else None
    if vendor == "eos":
        body = list(global_lines)
        if ifname and interface_lines:
            body += [f"interface {ifname}", *(f"   {ln}" for ln in interface_lines)]
        elif interface_lines:
            body += ["interface <every RoCE port, e.g. Ethernet1-4>", *(f"   {ln}" for ln in interface_lines)]
        return "\n".join([
            "copy running-config flash:roce-wizard-rollback.cfg   ! rollback point first",
            "configure session roce-wizard", *body,
            "show session-config diffs", "commit",
            "copy running-config startup-config   ! once the re-check passes",
        ])
    if vendor == "onyx":
        body = list(global_lines)
        if interface_lines:
            where = ifname or "ethernet <every RoCE port, e.g. 1/1-1/4>"
            body += [f"interface {where} {ln}" for ln in interface_lines]
        return "\n".join([
            "configuration write to roce-wizard-rollback no-switch   # rollback point first",
            "configure terminal", *body, "exit",
            "configuration write   # once the re-check passes",
        ])
    if vendor == "os10":
        body = list(global_lines)
        if interface_lines:
            body += [f"interface {ifname or 'range ethernet<first>-<last RoCE port>'}", *(f" {ln}" for ln in interface_lines)]
        return "\n".join([
            "copy running-configuration config://roce-wizard-rollback.xml   ! rollback point first",
            "configure terminal", *body, "end",
            "write memory   ! once the re-check passes",
        ])
    if vendor == "sonic":
        return "\n".join([
            "sudo config save -y /etc/sonic/config_db.rollback.json   # rollback point first",
            *global_lines, *interface_lines,
            "sudo config save -y   # once the re-check passes",
        ])
    if vendor == "nvue":  # NVUE Command Reference, "Config Commands"
        return "\n".join([
            "nv config revision   # note the applied revision R: `nv config apply R -y` rolls back",
            *global_lines, *interface_lines,
            "nv config diff", "nv config apply -y   # or answer y at `Are you sure? [y/N]`",
            "nv config save   # once the re-check passes (Cumulus Linux 5.9+ saves on apply)",
        ])
    return "\n".join([*global_lines, *interface_lines])


# --------------------------------------------------------------------------------------------
# fix plans: one configuration change per switch and check, every failing port in it

def _range_groups(vendor: str, ports: list[str]) -> list[str]:
    """Interface specs covering `ports` with ranges of consecutive ports (the vendor's range syntax)."""
    keyed = sorted({port_key(p): p for p in ports if port_key(p) is not None}.items())
    runs: list[list[tuple[int, ...]]] = []
    for (kind, nums), _name in keyed:
        if runs and len(runs[-1][-1]) == len(nums) and runs[-1][-1][:-1] == nums[:-1] \
                and runs[-1][-1][-1] + 1 == nums[-1]:
            runs[-1].append(nums)
        else:
            runs.append([nums])

    def text(nums: tuple[int, ...]) -> str:
        return "/".join(str(n) for n in nums)

    out = []
    for run in runs:
        first, last = text(run[0]), text(run[-1])
        out.append(first if first == last else f"{first}-{last}")
    return out


def config_lines(vendor: str, groups: list[tuple[list[str], tuple[str, ...]]], global_lines: list[str]) -> list[str]:
    """The configuration-mode lines for switch-wide lines and (ports, interface lines) groups, with
    interface ranges where the vendor has them."""
    lines = list(global_lines)
    for ports, body in groups:
        specs = _range_groups(vendor, ports)
        if not specs or not body:
            continue
        if vendor == "eos":
            lines += ["interface " + ",".join(f"Ethernet{spec}" for spec in specs), *(f"   {ln}" for ln in body)]
        elif vendor == "onyx":
            lines += [f"interface ethernet {spec} {ln}" for spec in specs for ln in body]
        elif vendor == "nvue":  # NVUE is flat: every line is a whole `nv set` command
            lines += [ln for ln in body if ln not in lines]
        elif vendor == "os10":
            head = (f"interface ethernet{specs[0]}" if len(specs) == 1 and "-" not in specs[0]
                    else "interface range " + ",".join(f"ethernet{spec}" for spec in specs))
            lines += [head, *(f" {ln}" for ln in body), " exit"]
    return lines


def switch_plan(check: Any, facts: Facts, findings: list[Any], fld: str, expect: dict[str, Any],
                summary: str, verify_ports: list[str] | None = None) -> Any:
    """The FixPlan of a switch check: one `switch-config` step for every failing port (grouped, with
    ranges), verified by reading `fld` back on those ports (`expect`), then saved; None when nothing
    fails or the vendor has no config path here (NVUE, SONiC: the finding's fix-by-hand)."""
    import json

    from roce_wizard.model import FixPlan, RebootKind, Safety, Step

    vendor = vendor_of(facts)
    parts = [f.fix.parts for f in findings if isinstance(f.fix, FixText)]
    if vendor not in CONFIG_VENDORS or not parts:
        return None
    global_lines: list[str] = []
    by_body: dict[tuple[str, ...], list[str]] = {}
    for part in parts:
        global_lines += [ln for ln in part.global_lines if ln not in global_lines]
        if part.port and part.port not in (ALL_PORTS, UNLISTED_PORTS) and part.interface_lines:
            by_body.setdefault(part.interface_lines, [])
            if part.port not in by_body[part.interface_lines]:
                by_body[part.interface_lines].append(part.port)
    lines = config_lines(vendor, [(ports, body) for body, ports in by_body.items()], global_lines)
    for ln in lines:
        if "\n" in ln or not ln.strip() or not all(32 <= ord(c) < 127 for c in ln):
            from roce_wizard.probes import UnsafeValue

            raise UnsafeValue(f"refusing to send {ln!r} to a switch")
    if not lines:
        return None
    ports = [p for body_ports in by_body.values() for p in body_ports] or [ALL_PORTS]
    # read back on the ports that failed (a switch-wide change, e.g. Onyx's no-drop list, too)
    judged = list(dict.fromkeys(f.subject for f in findings if f.subject not in (None, ALL_PORTS, UNLISTED_PORTS)))
    meta = {"name": f"roce-wizard-{check.code.lower()}", "vendor": vendor,
            "verify": [{"field": fld, "ports": verify_ports or judged or [ALL_PORTS], "expect": expect}]}
    before = "; ".join(f"{f.subject}: {json.dumps(f.observed, default=str)}" for f in findings if f.subject)
    how = {"eos": "backup, config session", "nvue": "note the applied revision, nv set, nv config diff, "
           "nv config apply -y"}.get(vendor, "backup, configure")
    step = Step(f"configure {', '.join(ports)} on {facts.target_name} ({VENDOR_NAMES.get(vendor, vendor)}: {how}, "
                "verify, save; rollback if the verify fails)",
                render_config_command(meta, lines),
                before=before or None, after="\n".join(lines))
    return FixPlan(check=check.code, target=facts.target_name, summary=summary, steps=(step,),
                   safety=Safety.DISRUPTIVE, reboot=RebootKind.NONE)
