"""A Cumulus Linux switch driven by NVUE, in the lab: the `nv` commands roce-wizard reads and writes.

Cumulus Linux is a Linux shell (netmiko's `cumulus_linux` driver: a `$` prompt, no enable, no config
mode); NVUE is its `nv` command. What this emulator answers, and where each form comes from:
  - `nv show qos roce` — the table layout of corpus cumulus_nv_show_qos_roce/nvue-cmdref-lossy-mode-no-pfc.txt
    (NVUE command reference example).
  - `nv show interface -o json` — per interface `link.mtu` and `link.state` (NVUE JSON object model).
  - `nv set qos roce`, `nv set qos roce mode lossless|lossy` — NVIDIA Cumulus Linux User Guide, "RDMA over
    Converged Ethernet - RoCE" (`nv set qos roce` and `... mode lossless` are equivalent; RoCE mode sets the
    port trust, PFC on switch priority 3 and ECN on traffic class 3 on every port; lossy mode: no PFC).
  - `nv set interface swpN link mtu M` — Cumulus Linux 5.14 User Guide, "Switch Port Attributes" (MTU).
  - `nv set qos mapping default-global dscp D switch-priority P` — Cumulus Linux User Guide, "Quality of
    Service" (CL 5.3 and later).
  - `nv config diff`, `nv config apply [--y|-y|--assume-yes]`, `nv config apply <revision>`, `nv config
    detach`, `nv config save`, `nv config revision` (the table of its documented example) — NVUE Command
    Reference, "Config Commands". Without `-y`, `nv config apply` asks `Are you sure? [y/N]` (NVIDIA's own
    examples show that prompt): this lab always asks, so a tool must pass `-y` or answer.
Every other `nv` line is refused with `Error: …` (the real wording of NVUE's parser errors was not found:
the lab's text is its own, the prefix is what tools match), and any other shell word with bash's
`-bash: X: command not found`.

The world's port fields stay the truth: `nv show` derives NVUE's switch-wide view from them, and an
applied revision writes them. Each apply records the configuration it produced as a revision
(`_snapshot`), so `nv config apply <rev>` puts that configuration back whole, as NVUE's declarative
revisions do.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from typing import Any

from roce_wizard.lab.switch.counters import render_nvue_roce_counters
from roce_wizard.lab.switch.state import _restore, _snapshot, cli_state
from roce_wizard.lab.world import Switch, World

MTU_RANGE = (552, 9216)  # what the lab takes for `link mtu` (Spectrum ports; outside it NVUE refuses)
_APPLY_YES = {"-y", "--y", "--assume-yes"}


@dataclass
class NvueState:
    revisions: dict[int, Any] = field(default_factory=dict)  # rev id -> snapshot of what it applied
    applied: int = 0
    pending: list[tuple[str, Any]] = field(default_factory=list)  # (what, value) `nv set` since the last apply
    next_rev: int = 1
    applies: list[int] = field(default_factory=list)  # the revisions applied, in order (`nv config revision`)


def nvue_state(switch: Switch) -> NvueState:
    state = switch.__dict__.get("nvue_state")
    if state is None:
        state = NvueState()
        switch.__dict__["nvue_state"] = state
    if not state.revisions:  # the configuration the switch booted with is revision 1, applied and saved
        state.revisions[1] = _snapshot(switch)
        state.applied, state.next_rev, state.applies = 1, 2, [1]
    return state


def _cabled(switch: Switch) -> list[Any]:
    return [p for p in switch.ports if p.peer is not None] or list(switch.ports)


def roce_view(world: World, switch: Switch) -> dict[str, Any]:
    """NVUE's switch-wide RoCE settings as the port fields make them."""
    ports = _cabled(switch)
    prio = int(world.policy.get("pfc_priority", 3))
    # one switch-wide PFC list: what any port pauses (a port with another list than the rest shows up here)
    pfc = sorted(set().union(*(p.no_drop for p in ports))) if ports and all(p.pfc_enabled for p in ports) else []
    return {"mode": "lossless" if pfc else "lossy", "pfc": pfc,
            "trust": "pcp,dscp" if ports and all(p.trust == "dscp" for p in ports) else "pcp",
            "ecn_tcs": [0, prio] if ports and all(p.ecn for p in ports) else [0]}


def render_qos_roce(world: World, switch: Switch) -> str:
    v = roce_view(world, switch)
    dmap = {d: cli_state(switch).dscp_map.get(d, d >> 3) for d in range(64)}

    def row(key: str, oper: str, applied: str = "") -> str:
        return f"{key:<20}{oper:<13}{applied}".rstrip()

    mode = v["mode"]
    out = ["                    operational  applied", "------------------  -----------  -------",
           row("enable", "", "on"), row("mode", mode, mode), row("congestion-control", ""),
           row("  congestion-mode", "ECN"), row("  enabled-tc", ",".join(map(str, v["ecn_tcs"]))),
           row("  max-threshold", "1.43 MB"), row("  min-threshold", "146.48 KB"), row("  probability", "100"),
           row("lldp-app-tlv", ""), row("  priority", "3"), row("  protocol-id", "4791"), row("  selector", "UDP"),
           row("pfc", ""), row("  pfc-priority", ",".join(map(str, v["pfc"])) or "-"),
           row("trust", ""), row("  trust-mode", v["trust"]), "",
           "RoCE PCP/DSCP->SP mapping configurations", "==========================================="]
    lists = [",".join(str(d) for d in range(64) if dmap[d] == sp) or "-" for sp in range(8)]
    width = max(23, *(len(x) for x in lists))  # NVUE sizes a column to its widest cell
    out += [f"       pcp  {'dscp':<{width}}  switch-prio", f"    -  ---  {'-' * width}  -----------"]
    for sp in range(8):
        out.append(f"    {sp}  {sp:<3}  {lists[sp]:<{width}}  {sp}")
    out += ["", "RoCE SP->TC mapping and ETS configurations", "=============================================",
            "       switch-prio  traffic-class  scheduler-weight",
            "    -  -----------  -------------  ----------------"]
    for sp in range(8):
        tc = sp if sp in (3, 6) else 0
        out.append(f"    {sp}  {sp:<11}  {tc:<13}  {'strict-priority' if sp == 6 else 'DWRR-50%'}")
    return "\n".join(out)


def render_interfaces_json(switch: Switch) -> str:
    return json.dumps({p.name: {"link": {"mtu": p.mtu, "state": {"up" if p.link_up else "down": {}}},
                                "type": "swp"} for p in switch.ports}, indent=2)


class NvueCli:
    """One SSH session's shell on a Cumulus Linux switch (same interface as SwitchCli)."""

    vendor = "nvue"

    def __init__(self, world: World, switch_name: str):
        self.world = world
        self.switch = world.switches[switch_name]
        self.closed = False
        self.confirming: Any = None  # what `y` does after `nv config apply` asked `Are you sure? [y/N]`

    @property
    def prompt(self) -> str:
        return "" if self.confirming is not None else f"cumulus@{self.switch.name}:mgmt:~$ "

    def run(self, raw: str) -> str:
        line = raw.strip()
        if self.confirming is not None:
            action, self.confirming = self.confirming, None
            return action() if line.lower() in ("y", "yes") else "Aborted by user"
        if not line:
            return ""
        words = line.split()
        if words[0] in ("exit", "logout"):
            self.closed = True
            return ""
        if words[0] != "nv":
            return f"-bash: {words[0]}: command not found"
        frozen = cli_state(self.switch).frozen  # the `freeze` test knob: the hardware keeps these fields
        held = {p.name: {f: copy.deepcopy(getattr(p, f)) for f in frozen} for p in self.switch.ports}
        try:
            return self._nv(words[1:])
        except _Refused as exc:
            return f"Error: {exc}"
        finally:
            for port in self.switch.ports:
                for f, value in held[port.name].items():
                    setattr(port, f, value)

    # ------------------------------------------------------------------ nv

    def _nv(self, args: list[str]) -> str:
        state = nvue_state(self.switch)
        if args == ["show", "qos", "roce"]:
            return render_qos_roce(self.world, self.switch)
        if args == ["show", "interface", "-o", "json"]:
            return render_interfaces_json(self.switch)
        if len(args) == 6 and args[:2] == ["show", "interface"] and args[3:] == ["qos", "roce", "counters"]:
            port = self.switch.port(args[2])  # lab/switch/counters.py: moved by world traffic
            if port is None:
                raise _Refused(f"interface {args[2]} does not exist")
            return render_nvue_roce_counters(self.world, self.switch, port)
        if args[:1] == ["set"]:
            state.pending.append(self._set(args[1:]))
            return ""
        if args == ["config", "diff"]:
            return self._diff(state)
        if args[:2] == ["config", "apply"]:
            rest = args[2:]
            yes = bool(_APPLY_YES & set(rest))
            rev = [a for a in rest if a not in _APPLY_YES]
            if len(rev) > 1 or (rev and not rev[0].isdigit()):
                raise _Refused(f"invalid revision {' '.join(rev)!r}")
            if rev and int(rev[0]) not in state.revisions:
                raise _Refused(f"revision {rev[0]} does not exist")
            if not rev and not state.pending:
                return "Warning: no pending changes; nothing to apply"
            action = (lambda: self._apply_revision(int(rev[0]))) if rev else self._apply
            if not yes:
                self.confirming = action
                return "Are you sure? [y/N] "
            return action()
        if args == ["config", "detach"]:
            state.pending.clear()
            return ""
        if args == ["config", "save"]:
            self.switch.saved_config = render_qos_roce(self.world, self.switch)
            return "saved"
        if args == ["config", "revision"]:
            rows = ["Rev ID                State              Apply ID                          Apply Date           "
                    "Type      User     Reason         Message",
                    "--------------------  -----------------  --------------------------------  -------------------  "
                    "--------  -------  -------------  -------------------------------"]
            for rev in sorted(state.revisions):
                order = max(i for i, r in enumerate(state.applies) if r == rev)
                apply_id = f"rev_{rev}_apply_{state.applies[: order + 1].count(rev)}"
                when = f"2026-01-15 09:{30 + order // 60:02d}:{order % 60:02d}"
                rows.append(f"{rev:<20}  {'applied':<17}  {apply_id:<32}  {when}  CLI       "
                            "cumulus  Config update  Config update by cumulus")
            return "\n".join(rows)
        raise _Refused(f"unknown or unsupported command: nv {' '.join(args)}")

    def _set(self, args: list[str]) -> tuple[str, Any]:
        if args in (["qos", "roce"], ["qos", "roce", "mode", "lossless"]):
            return "roce-mode", "lossless"
        if args == ["qos", "roce", "mode", "lossy"]:
            return "roce-mode", "lossy"
        if len(args) == 5 and args[0] == "interface" and args[2:4] == ["link", "mtu"]:
            if self.switch.port(args[1]) is None:
                raise _Refused(f"interface {args[1]} does not exist")
            if not args[4].isdigit() or not MTU_RANGE[0] <= int(args[4]) <= MTU_RANGE[1]:
                raise _Refused(f"mtu {args[4]} is out of range {MTU_RANGE[0]}-{MTU_RANGE[1]}")
            return "mtu", (args[1], int(args[4]))
        m = re.fullmatch(r"qos mapping default-global dscp ([\d,]+) switch-priority ([0-7])", " ".join(args))
        if m:
            dscps = [int(d) for d in m[1].split(",")]
            if any(d > 63 for d in dscps):
                raise _Refused(f"dscp {m[1]} is out of range 0-63")
            return "dscp-map", (dscps, int(m[2]))
        raise _Refused(f"unknown or unsupported command: nv set {' '.join(args)}")

    def _diff(self, state: NvueState) -> str:
        out = ["- set:"]
        for what, value in state.pending:
            if what == "roce-mode":
                out += ["    qos:", "      roce:", f"        mode: {value}"]
            elif what == "mtu":
                out += ["    interface:", f"      {value[0]}:", "        link:", f"          mtu: {value[1]}"]
            else:
                out += ["    qos:", "      mapping:", "        default-global:", "          dscp:",
                        *(f"            '{d}':\n              switch-priority: {value[1]}" for d in value[0])]
        return "\n".join(out) if state.pending else ""

    def _apply(self) -> str:
        state = nvue_state(self.switch)
        prio = int(self.world.policy.get("pfc_priority", 3))
        for what, value in state.pending:
            if what == "roce-mode":  # switch-wide: every port (the User Guide's default RoCE configuration)
                for p in self.switch.ports:
                    p.trust, p.ecn = "dscp", True
                    p.pfc_enabled, p.no_drop = (True, {prio}) if value == "lossless" else (False, set())
            elif what == "mtu":
                self.switch.port(value[0]).mtu = value[1]
            else:
                dmap = cli_state(self.switch).dscp_map
                for d in value[0]:
                    dmap.pop(d, None) if value[1] == d >> 3 else dmap.__setitem__(d, value[1])
        state.pending.clear()
        rev = state.next_rev
        state.next_rev += 1
        state.revisions[rev] = _snapshot(self.switch)
        state.applied = rev
        state.applies.append(rev)
        return f"applied [rev_id: {rev}]"

    def _apply_revision(self, rev: int) -> str:
        state = nvue_state(self.switch)
        _restore(self.switch, state.revisions[rev])
        state.pending.clear()
        state.applied = rev
        state.applies.append(rev)
        return f"applied [rev_id: {rev}]"


class _Refused(Exception):
    pass
