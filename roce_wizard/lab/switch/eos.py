"""Arista EOS commands of the lab CLI (a mixin of SwitchCli; split out of lab/switch/__init__.py). Sources of
each command family: lab/switch/__init__.py's docstring.
"""

from __future__ import annotations

import copy
import difflib
import re
import time

from roce_wizard.lab.switch import restore as switch_restore
from roce_wizard.lab.switch.cli_base import _Frame, _Unrecognized, render_running_config
from roce_wizard.lab.switch.common import _parse_int_list, _reconcile, resolve_ports, roce_priority
from roce_wizard.lab.switch.counters import render_eos_queue
from roce_wizard.lab.switch.edits import map_dscps, save_file, saved_file, set_mtu
from roce_wizard.lab.switch.render_eos import (
    _eos_default_tc,
    _eos_flowcontrol,
    _eos_interface,
    _eos_interfaces_status,
    _eos_lldp,
    _eos_pfc,
    _eos_qos_interface,
    _eos_qos_maps,
)
from roce_wizard.lab.switch.state import EOS_DEFAULT_MTU, CliState, _restore, cli_state
from roce_wizard.lab.world import Switch, SwitchPort


class EosCommands:
    """Arista EOS commands of the lab CLI (a mixin of SwitchCli). Sources of its
    outputs and refusals: the package docstring (lab/switch/__init__.py) and the checks that read them."""

    def _show_eos(self, sw: Switch, words: list[str], low: list[str]) -> str:
        head = low[0]
        if head == "version":
            return self._show_version()
        if head in ("running-config", "startup-config"):
            self._need_enable()
            text = render_running_config(self.world, sw) if head == "running-config" else \
                (self.switch.saved_config or render_running_config(self.world, self.switch))
            if low[1:2] in (["interfaces"], ["interface"]) and len(words) > 2:
                ports = self._ports_arg(sw, words[2:])
                return self._eos_sections(text, [f"interface {p.name}" for p in ports])
            if len(low) > 1:
                raise _Unrecognized(words[1])
            return text
        if head == "priority-flow-control":
            rest = low[1:]
            if rest[:1] == ["interfaces"]:
                return _eos_pfc(sw, self._ports_arg(sw, words[2:]))
            if rest in ([], ["status"]):
                return _eos_pfc(sw, list(sw.ports))
            raise _Unrecognized(words[1])
        if head == "interfaces":
            rest = words[1:]
            if low[1:] == ["counters", "queue", "detail"]:  # lab/switch/counters.py: moved by world traffic
                return render_eos_queue(sw)
            if low[-1] == "status":
                return _eos_interfaces_status(sw, self._ports_arg(sw, rest[:-1]))
            if low[-1] == "flowcontrol":
                return _eos_flowcontrol(self._ports_arg(sw, rest[:-1]))
            ports = self._ports_arg(sw, rest)
            return "\n".join(_eos_interface(sw, p, time.time()) for p in ports)
        if head == "flowcontrol":
            if low[1:2] == ["interface"] or low[1:2] == ["interfaces"]:
                return _eos_flowcontrol(self._ports_arg(sw, words[2:]))
            if len(low) == 1:
                return _eos_flowcontrol(list(sw.ports))
            raise _Unrecognized(words[1])
        if head == "qos":
            if low[1:2] == ["interfaces"] or low[1:2] == ["interface"]:
                ports = self._ports_arg(sw, words[2:])
                return "\n\n".join(_eos_qos_interface(self.world, sw, p) for p in ports)
            if low[1:2] == ["maps"]:
                return _eos_qos_maps(sw)
            raise _Unrecognized(words[1] if len(words) > 1 else "")
        if head == "lldp" and low[1:2] == ["neighbors"]:
            return _eos_lldp(self.world, sw)
        if head == "session-config":
            if self.session is None:
                return "% Not in a configuration session"
            sw = self.target
            _reconcile(self.world, sw)
            if low[1:] == ["diffs"]:
                before = render_running_config(self.world, self.switch).split("\n")
                after = render_running_config(self.world, sw).split("\n")
                diff = difflib.unified_diff(before, after, "system:/running-config",
                                            f"session:/{self.session}-session-config", lineterm="")
                return "\n".join(diff)
            return render_running_config(self.world, sw)
        if head == "configuration" and low[1:2] == ["sessions"]:
            names = sorted(cli_state(self.switch).eos_sessions)
            out = ["Maximum number of completed sessions: 1", "Maximum number of pending sessions: 5", "",
                   "  Name       State         User    Terminal", "  ---------- ------------- ------- --------"]
            for name in names:
                mark = "*" if name == self.session else " "
                out.append(f"{mark} {name:<10} pending       admin   vty3")
            return "\n".join(out)
        if head == "hostname":
            return f"Hostname: {sw.name}\nFQDN:     {sw.name}"
        raise _Unrecognized(words[0])

    @staticmethod
    def _eos_sections(text: str, heads: list[str]) -> str:
        out: list[str] = []
        lines = text.split("\n")
        for i, line in enumerate(lines):
            if line in heads:
                out.append(line)
                for nxt in lines[i + 1:]:
                    if not nxt.startswith(" "):
                        break
                    out.append(nxt)
        return "\n".join(out)


    # ------------------------------------------------------------------ EOS

    def _eos(self, line: str, words: list[str], low: list[str]) -> str:
        common = self._common(words, low)
        if common is not None:
            return common
        mode = self.mode
        if mode in ("exec", "enable"):
            if low[0] in ("configure", "config"):
                self._need_enable()
                if len(low) == 1 or low[1:] == ["terminal"]:
                    self.stack.append(_Frame("config"))
                    return ""
                if low[1] == "replace" and len(words) == 3:
                    where, _, name = words[2].partition(":")
                    _restore(self.switch, saved_file(self.switch, f"{where.lower()}:{name}",
                                                     f"% Error opening {words[2]} (No such file or directory)"))
                    return ""
                if low[1] == "session":
                    if len(words) < 3:
                        raise _Unrecognized(kind="incomplete")
                    name = words[2]
                    if len(low) == 4 and low[3] in ("commit", "abort"):
                        return self._eos_session_end(name, low[3] == "commit")
                    if len(words) > 3:
                        raise _Unrecognized(words[3])
                    self._eos_session_open(name)
                    return ""
                raise _Unrecognized(words[1])
            if low[:2] == ["no", "configure"] and low[2:3] == ["session"] and len(words) == 4:
                cli_state(self.switch).eos_sessions.pop(words[3], None)
                return ""
            if low in (["write"], ["write", "memory"]) or low == ["copy", "running-config", "startup-config"]:
                self._need_enable()
                self._save()
                return "Copy completed successfully."
            m = re.fullmatch(r"copy (flash|checkpoint):([a-z0-9_.-]+) running-config", " ".join(low))
            if m:  # a copy onto running-config MERGES (restore.py); only `configure replace` restores exactly
                self._need_enable()
                switch_restore.merge(self.switch, saved_file(self.switch, f"{m[1]}:{words[1].split(':', 1)[1]}",
                                                             f"% Error opening {words[1]} (No such file or directory)"))
                return "Copy completed successfully."
            m = re.fullmatch(r"copy running-config (flash|checkpoint):([A-Za-z0-9_.-]+)", " ".join(low))
            if m:
                self._need_enable()
                save_file(self.world, self.switch, f"{m[1]}:{words[2].split(':', 1)[1]}")
                return "Copy completed successfully."
            raise _Unrecognized(words[0])
        # every config mode
        if low == ["end"]:
            self.session = None
            self._to_enable()
            return ""
        if low == ["exit"]:
            if mode == "config":
                self.session = None
            self._pop()
            return ""
        if low in (["commit"], ["abort"]) and self.session is not None:
            return self._eos_session_end(self.session, low[0] == "commit")
        if low[0] == "interface":
            return self._eos_enter_interface(words[1:])
        if mode in ("if", "txq"):
            handled = self._eos_interface_cmd(words, low)
            if handled is not None:
                return handled
        if mode == "config":
            handled = self._eos_global_cmd(words, low)
            if handled is not None:
                return handled
        raise _Unrecognized(words[0])

    def _eos_session_open(self, name: str) -> None:
        state = cli_state(self.switch)
        if name not in state.eos_sessions:
            _reconcile(self.world, self.switch)
            copy_sw = copy.deepcopy(self.switch)
            cli_state(copy_sw).eos_sessions = {}
            state.eos_sessions[name] = copy_sw
        self.session = name
        self._to_enable()
        self.stack.append(_Frame("config"))

    def _eos_session_end(self, name: str, commit: bool) -> str:
        state = cli_state(self.switch)
        pending = state.eos_sessions.pop(name, None)
        if pending is None:
            raise _Unrecognized(kind="message", token=f"% Session {name} does not exist")
        if commit:
            for new in pending.ports:
                old = self.switch.port(new.name)
                if old is None:
                    continue
                for f in ("mtu", "pfc_enabled", "no_drop", "trust", "flowcontrol_rx", "flowcontrol_tx", "ecn",
                          "description", "link_up"):
                    setattr(old, f, copy.deepcopy(getattr(new, f)))
            mine = cli_state(pending)
            state.dscp_map = dict(mine.dscp_map)
            state.ecn_other = copy.deepcopy(mine.ecn_other)
        if self.session == name:
            self.session = None
            self._to_enable()
        return ""

    def _eos_enter_interface(self, words: list[str]) -> str:
        if not words:
            raise _Unrecognized(kind="incomplete")
        res = resolve_ports(self.target, " ".join(words))
        if res is None:
            raise _Unrecognized(words[0])
        ports, spec = res
        label = "Et" + spec.replace(" ", "")
        while self.mode in ("if", "txq"):
            self.stack.pop()
        self.stack.append(_Frame("if", label, ports))
        return ""

    def _eos_global_cmd(self, words: list[str], low: list[str]) -> str | None:
        state = cli_state(self.target)
        neg = low[0] == "no"
        body = low[1:] if neg else low
        m = re.fullmatch(r"qos map dscp ([\d ]+) to traffic-class (\d)", " ".join(body))
        if m:
            dscps = _parse_int_list(m.group(1), 0, 63)
            if dscps is None:
                raise _Unrecognized(kind="invalid")
            map_dscps(state.dscp_map, dscps, int(m.group(2)), _eos_default_tc, neg=neg)
            return ""
        return None  # nothing unmodelled is taken: a strict device refuses what the lab cannot vouch for

    def _eos_interface_cmd(self, words: list[str], low: list[str]) -> str | None:
        frame = self.stack[-1]
        ports = frame.ports
        roce = roce_priority(self.world)
        state = cli_state(self.target)
        neg = low[0] == "no"
        body = low[1:] if neg else low
        text = " ".join(body)
        # tx-queue sub-mode
        if frame.kind == "txq":
            queue = frame.data["queue"]
            if re.fullmatch(r"random-detect ecn( .*)?", text):
                if not neg and "minimum-threshold" not in text:
                    raise _Unrecognized(kind="incomplete")
                for p in ports:
                    self._set_ecn(p, queue, not neg, roce, state)
                return ""
            self.stack.pop()  # anything else is an interface command: EOS leaves tx-queue mode for it
        if body[:1] == ["tx-queue"] and len(body) == 2 and body[1].isdigit() and int(body[1]) < 8:
            if neg:
                for p in ports:
                    self._set_ecn(p, int(body[1]), False, roce, state)
                return ""
            while self.mode == "txq":
                self.stack.pop()
            self.stack.append(_Frame("txq", self.stack[-1].label, ports, {"queue": int(body[1])}))
            return ""
        if body[:1] == ["description"]:
            desc = " ".join(words[2:] if neg else words[1:])
            for p in ports:
                p.description = "" if neg else desc
            return ""
        if body[:1] == ["mtu"]:
            return set_mtu(ports, body, neg=neg, vendor="eos", default=EOS_DEFAULT_MTU)
        if body == ["shutdown"]:
            for p in ports:
                p.link_up = neg
            return ""
        if body[:1] == ["qos"] and body[1:2] == ["trust"]:
            if neg:
                for p in ports:
                    p.trust = "pcp"
                return ""
            if body[2:] == ["dscp"]:
                trust = "dscp"
            elif body[2:] == ["cos"]:
                trust = "pcp"
            else:
                raise _Unrecognized(kind="incomplete" if len(body) == 2 else "invalid")
            for p in ports:
                p.trust = trust
            return ""
        if body[:1] == ["priority-flow-control"]:
            rest = body[1:]
            if rest[:1] == ["priority"]:
                if len(rest) < 2 or not rest[1].isdigit() or int(rest[1]) > 7:
                    raise _Unrecognized(kind="incomplete" if len(rest) == 1 else "invalid")
                prio = int(rest[1])
                if neg or rest[2:] == ["drop"]:
                    for p in ports:
                        p.no_drop.discard(prio)
                    return ""
                if rest[2:] == ["no-drop"]:
                    for p in ports:
                        p.no_drop.add(prio)
                    return ""
                raise _Unrecognized(kind="incomplete" if len(rest) == 2 else "invalid")
            turn_off = rest in ([], ["mode"], ["on"], ["mode", "on"]) if neg else rest in (["off"], ["mode", "off"])
            if turn_off:
                for p in ports:
                    p.pfc_enabled = False
                return ""
            if not neg and rest in (["on"], ["mode", "on"]):
                for p in ports:
                    p.pfc_enabled = True
                return ""
            raise _Unrecognized(kind="incomplete" if rest in ([], ["mode"]) else "invalid")
        if body[:1] == ["flowcontrol"]:
            if len(body) >= 2 and body[1] in ("send", "receive"):
                if neg:
                    value = False
                elif body[2:] in (["on"], ["off"]):
                    value = body[2] == "on"
                else:
                    raise _Unrecognized(kind="incomplete" if len(body) == 2 else "invalid")
                for p in ports:
                    if body[1] == "send":
                        p.flowcontrol_tx = value
                    else:
                        p.flowcontrol_rx = value
                return ""
            raise _Unrecognized(kind="incomplete" if len(body) == 1 else "invalid")
        return None

    def _set_ecn(self, p: SwitchPort, queue: int, on: bool, roce: int, state: CliState) -> None:
        if queue == roce:
            p.ecn = on
            return
        queues = state.ecn_other.setdefault(p.name, set())
        if on:
            queues.add(queue)
        else:
            queues.discard(queue)
        if not queues:
            state.ecn_other.pop(p.name, None)
