"""NVIDIA Onyx commands of the lab CLI (a mixin of SwitchCli; split out of lab/switch/__init__.py). Sources of
each command family: lab/switch/__init__.py's docstring.
"""

from __future__ import annotations

import re

from roce_wizard.lab.switch.cli_base import _VOCAB_LOWER, _Frame, _Unrecognized, render_running_config
from roce_wizard.lab.switch.common import _parse_int_list, resolve_ports, roce_priority
from roce_wizard.lab.switch.edits import map_dscps, save_file, saved_file, set_description, set_mtu
from roce_wizard.lab.switch.render_onyx import (
    _onyx_congestion,
    _onyx_dcb_pfc,
    _onyx_interface,
    _onyx_lldp,
    _onyx_pfc_global,
    _onyx_qos_interface,
)
from roce_wizard.lab.switch.state import (
    ONYX_DEFAULT_MTU,
    _restore,
    cli_state,
    default_switch_priority,
)
from roce_wizard.lab.world import Switch, SwitchPort


class OnyxCommands:
    """NVIDIA Onyx commands of the lab CLI (a mixin of SwitchCli). Sources of its
    outputs and refusals: the package docstring (lab/switch/__init__.py) and the checks that read them."""

    def _show_onyx(self, sw: Switch, words: list[str], low: list[str]) -> str:
        head = low[0]
        if head == "version":
            return self._show_version()
        if head in ("running-config", "configuration"):
            if self.mode == "exec":
                raise _Unrecognized(words[0])
            return render_running_config(self.world, sw)
        if head == "dcb" and low[1:2] == ["priority-flow-control"]:
            rest = low[2:]
            if not rest:
                return _onyx_dcb_pfc(self.world, sw, list(sw.ports))
            if rest[0] == "interface" and len(words) > 3:
                return _onyx_dcb_pfc(self.world, sw, self._ports_arg(sw, words[3:]))
            raise _Unrecognized(words[2])
        if head == "interfaces":
            rest = words[1:]
            lrest = low[1:]
            if not rest:
                return "\n\n\n".join(_onyx_interface(sw, p) for p in sw.ports)
            if lrest[0] != "ethernet":
                raise _Unrecognized(rest[0])
            if lrest[-1] == "congestion-control":
                ports = self._ports_arg(sw, rest[1:-1])
                return "\n\n".join(_onyx_congestion(self.world, sw, p) for p in ports)
            if lrest[-1] == "status":
                return self._onyx_status(sw, self._ports_arg(sw, rest[1:-1]))
            ports = self._ports_arg(sw, rest[1:])
            return "\n\n\n".join(_onyx_interface(sw, p) for p in ports)
        if head == "qos":
            if low[1:3] == ["interface", "ethernet"]:
                ports = self._ports_arg(sw, words[3:])
                return "\n\n".join(_onyx_qos_interface(p) for p in ports)
            if len(low) == 1:
                return "\n\n".join(_onyx_qos_interface(p) for p in sw.ports)
            raise _Unrecognized(words[1])
        if head == "lldp" and "remote" in low:
            return _onyx_lldp(self.world, sw)
        raise _Unrecognized(words[0])

    def _onyx_status(self, sw: Switch, ports: list[SwitchPort]) -> str:
        rule = "-" * 100
        out = [rule, f"{'Port':<23}{'Operational state':<20}{'Admin':<10}{'Speed':<10}{'MTU':<8}Description", rule]
        for p in ports:
            out.append(f"{p.name:<23}{'Up' if p.link_up else 'Down':<20}{'Enabled':<10}{'100G':<10}{p.mtu:<8}"
                       f"{p.description or 'N/A'}")
        return "\n".join(out)


    # ------------------------------------------------------------------ Onyx

    def _onyx(self, line: str, words: list[str], low: list[str]) -> str:
        common = self._common(words, low)
        if common is not None:
            return common
        mode = self.mode
        if low == ["no", "cli", "session", "paging", "enable"]:  # what netmiko's mellanox_mlnxos driver sends
            return ""
        if mode in ("exec", "enable"):
            if low in (["configure", "terminal"], ["configure"]):
                self._need_enable()
                self.stack.append(_Frame("config"))
                return ""
            if low in (["write", "memory"], ["write"]):
                self._need_enable()
                self._save()
                return ""
            if low[:1] in (["configure"], ["write"]):
                self._need_enable()
            raise _Unrecognized(self._onyx_bad_token(words, low))
        if low == ["exit"]:
            self._pop()
            return ""
        if low == ["end"]:
            self._to_enable()
            return ""
        if low in (["configuration", "write"], ["write", "memory"]):
            self._save()
            return ""
        if low[:3] == ["configuration", "write", "to"] and len(words) in (4, 5) and low[4:] in ([], ["no-switch"]):
            save_file(self.world, self.switch, f"onyx:{words[3]}")
            return ""
        if low[:2] == ["configuration", "switch-to"] and len(words) == 3:
            _restore(self.switch, saved_file(self.switch, f"onyx:{words[2]}", f"% File {words[2]} does not exist"))
            return ""
        neg = low[0] == "no"
        body_w = words[1:] if neg else words
        body = low[1:] if neg else low
        if body[:2] == ["interface", "ethernet"]:
            if len(body_w) < 3:
                raise _Unrecognized(kind="incomplete")
            res = resolve_ports(self.switch, body_w[2])
            if res is None:
                raise _Unrecognized(body_w[2])
            ports, spec = res
            inline = body_w[3:]
            if inline:  # `interface ethernet 1/1-1/2 qos trust L3` from config mode
                cmd_w = (["no"] if neg else []) + inline
                out = self._onyx_interface_cmd(ports, cmd_w, [w.lower() for w in cmd_w])
                if out is None:
                    raise _Unrecognized(inline[0])
                return out
            if neg:
                raise _Unrecognized(kind="incomplete")
            while self.mode == "if":
                self.stack.pop()
            self.stack.append(_Frame("if", f"{spec}", ports))
            return ""
        if mode == "if":
            out = self._onyx_interface_cmd(self.stack[-1].ports, words, low)
            if out is not None:
                return out
        if mode in ("config", "if"):
            out = self._onyx_global_cmd(words, low)
            if out is not None:
                return out
        raise _Unrecognized(self._onyx_bad_token(words, low))

    @staticmethod
    def _onyx_bad_token(words: list[str], low: list[str]) -> str:
        vocab = _VOCAB_LOWER["onyx"]
        for w, lw in zip(words, low, strict=True):
            if lw not in vocab and not re.fullmatch(r"[\d/,-]+", lw):
                return w
        return words[-1]

    def _onyx_global_cmd(self, words: list[str], low: list[str]) -> str | None:
        state = cli_state(self.switch)
        sw = self.switch
        neg = low[0] == "no"
        body = low[1:] if neg else low
        text = " ".join(body)
        if re.fullmatch(r"dcb priority-flow-control enable( force)?", text):
            if neg:
                state.onyx_pfc_global = False
                for p in sw.ports:
                    if p.pfc_enabled:
                        state.onyx_admin_pending.add(p.name)
                        p.pfc_enabled = False
            else:
                state.onyx_pfc_global = True
                for p in sw.ports:
                    if p.name in state.onyx_admin_pending:
                        p.pfc_enabled = True
                state.onyx_admin_pending.clear()
            return ""
        m = re.fullmatch(r"dcb priority-flow-control priority (\d+)( enable)?", text)
        if m:
            prio = int(m.group(1))
            if prio > 7:
                raise _Unrecognized(m.group(1))
            if not neg and not m.group(2):
                raise _Unrecognized(kind="incomplete")
            for p in sw.ports:
                if neg:
                    p.no_drop.discard(prio)
                else:
                    p.no_drop.add(prio)
            return ""
        m = re.fullmatch(r"qos map dscp-to-switch-priority dscp ([\d ,-]+) switch-priority (\d)", text)
        if m:
            dscps = _parse_int_list(m.group(1), 0, 63)
            if dscps is None:
                raise _Unrecognized(m.group(1).split()[0])
            map_dscps(state.dscp_map, dscps, int(m.group(2)), default_switch_priority, neg=neg)
            return ""
        return None

    def _onyx_interface_cmd(self, ports: list[SwitchPort], words: list[str], low: list[str]) -> str | None:
        state = cli_state(self.switch)
        roce = roce_priority(self.world)
        neg = low[0] == "no"
        body = low[1:] if neg else low
        text = " ".join(body)
        if body[:1] == ["mtu"]:
            return set_mtu(ports, body, neg=neg, vendor="onyx", default=ONYX_DEFAULT_MTU, suffixes=((), ("force",)),
                           token=words[-1], out_of_range="% MTU must be between {lo} and {hi}")
        if body[:1] == ["description"]:
            return set_description(ports, words[1:] if neg else words, neg=neg)
        if body == ["shutdown"]:
            for p in ports:
                p.link_up = neg
            return ""
        if body[:2] == ["qos", "trust"]:
            if neg:
                trust = "pcp"
            elif body[2:] in (["l3"], ["both"]):
                trust = "dscp"
            elif body[2:] in (["l2"], ["port"]):
                trust = "pcp"
            else:
                raise _Unrecognized(kind="incomplete" if len(body) == 2 else "invalid", token=words[-1])
            for p in ports:
                p.trust = trust
            return ""
        m = re.fullmatch(r"dcb priority-flow-control mode( (on|auto))?( force)?", text)
        if m:
            if neg or m.group(2) == "auto":
                for p in ports:
                    p.pfc_enabled = False
                    state.onyx_admin_pending.discard(p.name)
                return ""
            if m.group(2) != "on":
                raise _Unrecognized(kind="incomplete")
            on = _onyx_pfc_global(self.switch) and state.onyx_pfc_global is not False
            for p in ports:
                if on:
                    p.pfc_enabled = True
                else:
                    state.onyx_admin_pending.add(p.name)
            return ""
        m = re.fullmatch(r"flowcontrol (send|receive)( (on|off))?( force)?", text)
        if m:
            value = (m.group(3) == "on") and not neg
            if not neg and m.group(3) is None:
                raise _Unrecognized(kind="incomplete")
            for p in ports:
                if m.group(1) == "send":
                    p.flowcontrol_tx = value
                else:
                    p.flowcontrol_rx = value
            return ""
        m = re.fullmatch(r"traffic-class (\d)( congestion-control( (ecn|red|both)( .*)?)?)?", text)
        if m:
            queue = int(m.group(1))
            if neg:
                on = False
            else:
                if m.group(4) is None:
                    raise _Unrecognized(kind="incomplete")
                rest = m.group(5) or ""
                if not re.fullmatch(r" minimum-(absolute|relative) \d+ maximum-(absolute|relative) \d+", rest):
                    raise _Unrecognized(kind="incomplete")
                on = m.group(4) in ("ecn", "both")
            for p in ports:
                self._set_ecn(p, queue, on, roce, state)
            return ""
        return None
