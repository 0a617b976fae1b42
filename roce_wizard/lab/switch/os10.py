"""Dell OS10 commands of the lab CLI (a mixin of SwitchCli; split out of lab/switch/__init__.py). Sources of
each command family: lab/switch/__init__.py's docstring.
"""

from __future__ import annotations

import re

from roce_wizard.lab.switch import os10_qos
from roce_wizard.lab.switch import restore as switch_restore
from roce_wizard.lab.switch.cli_base import _Frame, _Unrecognized, render_running_config
from roce_wizard.lab.switch.common import (
    _apply_os10_policy,
    _apply_os10_queuing,
    _os10_derive,
    _os10_ecn_queues,
    _os10_nqos_cos,
    _parse_int_list,
    resolve_ports,
    roce_priority,
)
from roce_wizard.lab.switch.edits import map_dscps, save_file, saved_file, set_description, set_mtu
from roce_wizard.lab.switch.render_os10 import _os10_interface, _os10_interface_status, _os10_lldp, _os10_qos_interface
from roce_wizard.lab.switch.state import (
    OS10_DEFAULT_MTU,
    Os10Class,
    Os10Policy,
    Os10PolicyClass,
    cli_state,
    default_switch_priority,
)
from roce_wizard.lab.world import Switch, SwitchPort


class Os10Commands:
    """Dell OS10 commands of the lab CLI (a mixin of SwitchCli). Sources of its
    outputs and refusals: the package docstring (lab/switch/__init__.py) and the checks that read them."""

    def _show_os10(self, sw: Switch, words: list[str], low: list[str]) -> str:
        head = low[0]
        if head == "version":
            return self._show_version()
        if head in ("running-configuration", "running-config", "startup-configuration", "startup-config"):
            text = render_running_config(self.world, sw) if head.startswith("running") else \
                (self.switch.saved_config or render_running_config(self.world, self.switch))
            rest = words[1:]
            if not rest:
                return text
            if low[1] == "interface" and len(rest) > 1:
                ports = self._ports_arg(sw, rest[1:])
                return self._os10_sections(text, [f"interface {p.name}" for p in ports])
            if low[1] in ("class-map", "policy-map"):
                return self._os10_sections(text, [x for x in text.split("\n") if x.startswith(low[1] + " ")])
            raise _Unrecognized(rest[0])
        if head == "interface":
            rest = words[1:]
            if low[1:] == ["status"]:
                return _os10_interface_status(list(sw.ports))
            if not rest:
                return "\n\n".join(_os10_interface(sw, p) for p in sw.ports)
            ports = self._ports_arg(sw, rest)
            return "\n\n".join(_os10_interface(sw, p) for p in ports)
        if head == "qos" and low[1:2] == ["interface"]:
            ports = self._ports_arg(sw, words[2:])
            return "\n\n".join(_os10_qos_interface(sw, p) for p in ports)
        if head == "lldp" and low[1:2] == ["neighbors"]:
            return _os10_lldp(self.world, sw)
        raise _Unrecognized(words[0])

    @staticmethod
    def _os10_sections(text: str, heads: list[str]) -> str:
        out: list[str] = []
        lines = text.split("\n")
        for i, line in enumerate(lines):
            if line in heads:
                out.append(line)
                for nxt in lines[i + 1:]:
                    if not nxt.startswith(" "):
                        out.append("!")
                        break
                    out.append(nxt)
        return "\n".join(out)

    # ------------------------------------------------------------------ OS10

    def _os10(self, line: str, words: list[str], low: list[str]) -> str:
        common = self._common(words, low)
        if common is not None:
            return common
        mode = self.mode
        sw = self.switch
        state = cli_state(sw)
        if mode in ("exec", "enable"):
            if low in (["configure", "terminal"], ["configure"]):
                self.stack.append(_Frame("config"))
                return ""
            if low in (["copy", "running-configuration", "startup-configuration"], ["write", "memory"],
                       ["copy", "running-config", "startup-config"]):
                self._save()
                return ""
            if len(words) == 3 and low[0] == "copy" and low[1] == "running-configuration" and \
                    re.fullmatch(r"config://[a-z0-9_.-]+", low[2]):
                save_file(self.world, sw, f"os10:{words[2][9:]}")
                return ""
            if len(words) == 3 and low[0] == "copy" and low[2] == "running-configuration" and \
                    low[1].startswith("config://"):
                snap = saved_file(sw, f"os10:{words[1][9:]}", f"% Error: {words[1]}: No such file or directory")
                # a copy onto the running configuration MERGES (restore.py): what a change added stays
                switch_restore.merge(sw, snap)
                _os10_derive(self.world, sw)
                return ""
            raise _Unrecognized(words[0])
        if low == ["end"]:
            self._to_enable()
            return ""
        if low == ["exit"]:
            self._pop()
            return ""
        neg = low[0] == "no"
        body = low[1:] if neg else low
        body_w = words[1:] if neg else words
        # entering objects works from config and from any sub-mode (OS10 leaves the current one)
        if body[:1] == ["interface"]:
            if neg:
                raise _Unrecognized(kind="invalid")
            rest = body_w[1:]
            is_range = bool(rest) and rest[0].lower() == "range"
            if is_range:
                rest = rest[1:]
            if not rest:
                raise _Unrecognized(kind="incomplete")
            res = resolve_ports(sw, " ".join(rest))
            if res is None:
                raise _Unrecognized(rest[0])
            ports, spec = res
            label = f"conf-range-eth{spec}" if (is_range or len(ports) > 1 or "-" in spec or "," in spec) \
                else f"conf-if-eth{spec}"
            self._to_config()
            self.stack.append(_Frame("if", label, ports))
            return ""
        if body[:1] in (["class-map"], ["policy-map"]) and len(body) >= 4 and body[1] == "type":
            kind = body[2]
            if kind not in ("network-qos", "queuing"):
                raise _Unrecognized(kind="invalid")
            name = body_w[3]
            if body[0] == "class-map":
                if neg:
                    state.os10_class_maps.pop((kind, name), None)
                    return ""
                self._to_config()
                state.os10_class_maps.setdefault((kind, name), Os10Class(-1))
                self.stack.append(_Frame("cmap", name, data={"type": kind, "name": name}))
                return ""
            if neg:
                state.os10_policies.pop(name, None)
                for attach in (state.os10_port_nqos, state.os10_port_queuing):
                    for port_name in [k for k, v in attach.items() if v == name]:
                        del attach[port_name]
                        p = sw.port(port_name)
                        if p is not None and kind == "network-qos":
                            p.no_drop = set()
                        elif p is not None:
                            p.ecn = False
                return ""
            existing = state.os10_policies.get(name)
            if existing is not None and existing.kind != kind:
                raise _Unrecognized(kind="message", token=f"% Error: policy-map {name} exists with another type.")
            self._to_config()
            state.os10_policies.setdefault(name, Os10Policy(kind))
            self.stack.append(_Frame("pmap", name, data={"type": kind, "name": name}))
            return ""
        if body[:2] == ["trust", "dscp-map"] and len(body_w) == 3:
            if neg:
                state.os10_dscp_maps.pop(body_w[2], None)
                return ""
            self._to_config()
            state.os10_dscp_maps.setdefault(body_w[2], {})
            self.stack.append(_Frame("tmap", body_w[2], data={"name": body_w[2]}))
            return ""
        if body[:1] == ["wred"] and len(body_w) == 2:
            if neg:
                try:
                    os10_qos.remove_profile(state, body_w[1])
                except os10_qos.Refused as exc:
                    raise _Unrecognized(kind="message", token=exc.message) from None
                return ""
            self._to_config()
            state.os10_wred.setdefault(body_w[1], os10_qos.Os10Wred())
            self.stack.append(_Frame("wred", body_w[1], data={"name": body_w[1]}))
            return ""
        if body == ["system", "qos"]:
            self._to_config()
            self.stack.append(_Frame("sysqos"))
            return ""
        frame = self.stack[-1]
        if mode == "if":
            out = self._os10_interface_cmd(frame.ports, words, low)
            if out is not None:
                return out
        if mode == "cmap":
            m = re.fullmatch(r"match (qos-group|queue) (\d)", " ".join(body))
            if m and not neg:
                want = "qos-group" if frame.data["type"] == "network-qos" else "queue"
                if m.group(1) != want:
                    raise _Unrecognized(kind="invalid")
                state.os10_class_maps[(frame.data["type"], frame.data["name"])] = Os10Class(int(m.group(2)))
                self._os10_refresh()
                return ""
        if mode == "pmap":
            if body[:1] == ["class"] and len(body_w) == 2:
                pol = state.os10_policies[frame.data["name"]]
                cname = body_w[1]
                if neg:
                    pol.classes.pop(cname, None)
                    self._os10_refresh()
                    return ""
                if (frame.data["type"], cname) not in state.os10_class_maps:
                    raise _Unrecognized(kind="message", token=f"% Error: class-map {cname} does not exist.")
                pol.classes.setdefault(cname, Os10PolicyClass())
                self.stack.append(_Frame("pmapc", cname, data={**frame.data, "class": cname}))
                return ""
        if mode == "pmapc":
            klass = state.os10_policies[frame.data["name"]].classes[frame.data["class"]]
            text = " ".join(body)
            if frame.data["type"] == "network-qos":
                if text == "pause":
                    klass.pause = not neg
                    self._os10_refresh()
                    return ""
                if body[:1] == ["pfc-cos"]:
                    if neg:
                        klass.pfc_cos = set()
                    else:
                        cos = _parse_int_list(" ".join(body[1:]), 0, 7)
                        if cos is None:
                            raise _Unrecognized(kind="incomplete" if len(body) == 1 else "invalid")
                        klass.pfc_cos = set(cos)
                    self._os10_refresh()
                    return ""
            else:
                try:
                    if os10_qos.class_line(state, klass, body, body_w, neg):
                        self._os10_refresh()
                        return ""
                except os10_qos.Refused as exc:
                    raise _Unrecognized(kind="message", token=exc.message) from None
                m = re.fullmatch(r"bandwidth percent (\d+)", text)
                if m or (neg and text.startswith("bandwidth")):
                    klass.bandwidth = None if neg or m is None else int(m.group(1))
                    return ""
        if mode == "wred":
            try:
                os10_qos.wred_line(state, frame.data["name"], body, neg)
            except os10_qos.Refused as exc:
                raise _Unrecognized(kind="message", token=exc.message) from None
            self._os10_refresh()
            return ""
        if mode == "tmap":
            m = re.fullmatch(r"qos-group (\d) dscp ([\d,\- ]+)", " ".join(body))
            if m and not neg:
                dscps = _parse_int_list(m.group(2), 0, 63)
                if dscps is None:
                    raise _Unrecognized(kind="invalid")
                map_dscps(state.os10_dscp_maps[frame.data["name"]], dscps, int(m.group(1)), default_switch_priority)
                return ""
        if mode == "sysqos":
            m = re.fullmatch(r"trust-map dscp (\S+)", " ".join(body_w).lower())
            if m:
                name = body_w[2] if len(body_w) > 2 else "default"
                if name != "default" and name not in state.os10_dscp_maps:
                    raise _Unrecognized(kind="message", token=f"% Error: trust-map {name} does not exist.")
                for p in sw.ports:  # the system default applies to every port without one of its own
                    if neg:
                        continue
                    p.trust = "dscp"
                    state.os10_port_trust_map[p.name] = name
                return ""
        raise _Unrecognized(words[0])

    def _to_config(self) -> None:
        while self.stack[-1].kind not in ("config", "enable", "exec"):
            self.stack.pop()

    def _os10_refresh(self) -> None:
        """After a class-map/policy-map edit, the attached ports take the policies' meaning."""
        sw = self.switch
        state = cli_state(sw)
        for name, pol in state.os10_policies.items():
            if pol.kind == "network-qos":
                _apply_os10_policy(sw, name)
            else:
                _apply_os10_queuing(self.world, sw, name)

    def _os10_interface_cmd(self, ports: list[SwitchPort], words: list[str], low: list[str]) -> str | None:
        sw = self.switch
        state = cli_state(sw)
        roce = roce_priority(self.world)
        neg = low[0] == "no"
        body = low[1:] if neg else low
        body_w = words[1:] if neg else words
        text = " ".join(body)
        if body[:1] == ["mtu"]:
            return set_mtu(ports, body, neg=neg, vendor="os10", default=OS10_DEFAULT_MTU,
                           out_of_range="% Error: MTU value out of range ({lo}-{hi}).")
        if body[:1] == ["description"]:
            return set_description(ports, body_w, neg=neg)
        if body == ["shutdown"]:
            for p in ports:
                p.link_up = neg
            return ""
        if re.fullmatch(r"priority-flow-control mode( on)?", text):
            if not neg and text.endswith("mode"):
                raise _Unrecognized(kind="incomplete")
            for p in ports:
                p.pfc_enabled = not neg
            return ""
        m = re.fullmatch(r"flowcontrol (receive|transmit)( (on|off))?", text)
        if m:
            if not neg and m.group(3) is None:
                raise _Unrecognized(kind="incomplete")
            value = m.group(3) == "on" and not neg
            for p in ports:
                if m.group(1) == "receive":
                    p.flowcontrol_rx = value
                else:
                    p.flowcontrol_tx = value
            return ""
        m = re.fullmatch(r"service-policy (input|output) type (network-qos|queuing)( (\S+))?", text)
        if m:
            kind = m.group(2)
            name = body_w[4] if len(body_w) > 4 else None
            attach = state.os10_port_nqos if kind == "network-qos" else state.os10_port_queuing
            if neg:
                for p in ports:
                    attach.pop(p.name, None)
                    if kind == "network-qos":
                        p.no_drop = set()
                    else:
                        p.ecn = False
                return ""
            if name is None:
                raise _Unrecognized(kind="incomplete")
            pol = state.os10_policies.get(name)
            if pol is None or pol.kind != kind:
                raise _Unrecognized(kind="message", token=f"% Error: Policy-map {name} does not exist.")
            if (kind == "network-qos") != (m.group(1) == "input"):
                raise _Unrecognized(kind="invalid")
            for p in ports:
                attach[p.name] = name
                if kind == "network-qos":
                    p.no_drop = _os10_nqos_cos(state, name)
                else:
                    p.ecn = roce in _os10_ecn_queues(state, name)
            return ""
        if body[:2] == ["trust-map", "dscp"]:
            if neg:
                for p in ports:
                    state.os10_port_trust_map.pop(p.name, None)
                    p.trust = "pcp"
                return ""
            name = body_w[2] if len(body_w) > 2 else None
            if name is None:
                raise _Unrecognized(kind="incomplete")
            if name.lower() != "default" and name not in state.os10_dscp_maps:
                raise _Unrecognized(kind="message", token=f"% Error: trust-map {name} does not exist.")
            for p in ports:
                state.os10_port_trust_map[p.name] = "default" if name.lower() == "default" else name
                p.trust = "dscp"
            return ""
        if body_w[:3] == ["switchport", "access", "vlan"] and len(body_w) == 4 and body_w[3] == "1":
            return ""  # the one switchport line the lab's own running config prints (VLAN 1, the default)
        return None
