"""The lab switch CLI's state machine: modes, prompts, errors, `show` dispatch and the verbs every
vendor shares; the vendors' own commands come from the EOS / Onyx / OS10 mixins.
"""

from __future__ import annotations

import copy
import re
import time

from roce_wizard.lab.switch.cli_base import render_running_config, _Frame, _Unrecognized, _expand
from roce_wizard.lab.switch.common import resolve_ports, _eos_mac, _mac, _reconcile, _uptime
from roce_wizard.lab.switch.eos import EosCommands
from roce_wizard.lab.switch.onyx import OnyxCommands
from roce_wizard.lab.switch.os10 import Os10Commands
from roce_wizard.lab.switch.state import EOS_MODEL, EOS_VERSION, ONYX_VERSION, OS10_VERSION, VENDORS, cli_state
from roce_wizard.lab.world import Switch, SwitchPort, World


class SwitchCli(EosCommands, OnyxCommands, Os10Commands):
    """One SSH session's CLI on one switch: feed it lines, read what the switch prints.

    ``run(line)`` returns the output of one line (without the prompt that follows); ``prompt`` is the
    prompt to print next; ``closed`` turns true when the session ended (``exit`` at the top).
    """

    def __init__(self, world: World, switch_name: str, *, start_privileged: bool | None = None):
        self.world = world
        self.switch = world.switches[switch_name]
        self.vendor = self.switch.vendor
        if self.vendor not in VENDORS:
            raise ValueError(f"switch {switch_name}: vendor {self.vendor!r} has no CLI in the lab")
        privileged = (self.vendor == "os10") if start_privileged is None else start_privileged
        self.stack: list[_Frame] = [_Frame("enable" if privileged else "exec")]
        self.closed = False
        self.session: str | None = None  # EOS `configure session` name while in it
        self.started = time.time()

    # ------------------------------------------------------------------ prompts and modes

    @property
    def mode(self) -> str:
        return self.stack[-1].kind

    @property
    def target(self) -> Switch:
        """The switch config commands change: the real one, or an EOS session's copy."""
        if self.session is not None:
            return cli_state(self.switch).eos_sessions[self.session]
        return self.switch

    @property
    def prompt(self) -> str:
        host = self.switch.name
        frame = self.stack[-1]
        if self.vendor == "eos":
            if frame.kind == "exec":
                return f"{host}>"
            if frame.kind == "enable":
                return f"{host}#"
            base = f"config-s-{self.session[:6]}" if self.session is not None else "config"
            if frame.kind == "config":
                return f"{host}({base})#"
            if frame.kind == "if":
                return f"{host}({base}-if-{frame.label})#"
            if frame.kind == "txq":
                return f"{host}({base}-if-{frame.label}-txq-{frame.data['queue']})#"
        if self.vendor == "onyx":
            head = f"{host} [standalone: master]"
            if frame.kind == "exec":
                return f"{head} > "
            if frame.kind == "enable":
                return f"{head} # "
            if frame.kind == "config":
                return f"{head} (config) # "
            if frame.kind == "if":
                return f"{head} (config interface ethernet {frame.label}) # "
        if self.vendor == "os10":
            labels = {"enable": "", "exec": "", "config": "(config)", "sysqos": "(config-sys-qos)", "wred": "(config-wred)",
                      "tmap": "(config-tmap-dscp-map)"}
            if frame.kind in labels:
                return f"{host}{labels[frame.kind]}#"
            if frame.kind == "if":
                return f"{host}({frame.label})#"
            if frame.kind == "cmap":
                kind = "nqos" if frame.data["type"] == "network-qos" else "queuing"
                return f"{host}(config-cmap-{kind})#"
            if frame.kind == "pmap":
                return f"{host}(config-pmap-{frame.data['type']})#"
            if frame.kind == "pmapc":
                kind = "nqos" if frame.data["type"] == "network-qos" else "que"
                return f"{host}(config-pmap-c-{kind})#"
        return f"{host}#"

    def _in_config(self) -> bool:
        return self.mode not in ("exec", "enable")

    def _pop(self) -> None:
        if len(self.stack) > 1:
            self.stack.pop()

    def _to_enable(self) -> None:
        while self.stack and self.stack[-1].kind not in ("enable", "exec"):
            self.stack.pop()

    # ------------------------------------------------------------------ errors

    def _error(self, err: _Unrecognized, line: str) -> str:
        if err.kind == "message":
            return err.token
        if self.vendor == "eos":
            if err.kind in ("incomplete", "privileged"):
                return {"incomplete": "% Incomplete command",
                        "privileged": "% Invalid input (privileged mode required)"}[err.kind]
            # `% Invalid input (at token 1: 'bogus')`: EOS names the first word it could not take (real
            # answers recorded in public eAPI/CLI test fixtures); with no word named, the line's last one
            words = line.split()
            token = err.token or (words[-1] if words else "")
            index = next((i for i, w in enumerate(words) if w.lower() == token.lower()), max(len(words) - 1, 0))
            return f"% Invalid input (at token {index}: '{token}')"
        if self.vendor == "onyx":
            if err.kind == "incomplete":
                return "% Incomplete command"
            token = err.token or (line.split()[0] if line.split() else "")
            return f'% Unrecognized command "{token}".\nType "?" for help.'
        if err.kind == "incomplete":
            return "% Error: Incomplete command."
        return "% Error: Unrecognized command."

    # ------------------------------------------------------------------ entry point

    def run(self, raw: str) -> str:
        """Run one line; return what the switch prints before the next prompt ('' for nothing)."""
        line = raw.replace("\t", " ").strip()
        if not line or line.startswith("!") and self.vendor == "eos":
            return ""
        pipe = None
        if "|" in line:
            line, _, pipe = line.partition("|")
            line = line.strip()
            pipe = pipe.strip()
        expanded = _expand(line, self.vendor)
        frozen = cli_state(self.switch).frozen
        held = {p.name: {f: copy.deepcopy(getattr(p, f)) for f in frozen} for p in self.switch.ports} if frozen else None
        try:
            out = self._dispatch(expanded)
        except _Unrecognized as err:
            return self._error(err, expanded)
        finally:
            if held:  # the hardware kept these (the `freeze` knob)
                for port in self.switch.ports:
                    for f, value in held[port.name].items():
                        setattr(port, f, value)
        if pipe and out:
            out = self._filter(out, pipe)
        return out

    def _filter(self, text: str, pipe: str) -> str:
        verb, _, arg = pipe.partition(" ")
        verb = verb.lower()
        arg = arg.strip().strip('"')
        lines = text.split("\n")
        try:
            rx = re.compile(arg)
        except re.error:
            rx = re.compile(re.escape(arg))
        if "include".startswith(verb) or verb == "grep":
            return "\n".join(x for x in lines if rx.search(x))
        if "exclude".startswith(verb):
            return "\n".join(x for x in lines if not rx.search(x))
        if "begin".startswith(verb):
            for i, x in enumerate(lines):
                if rx.search(x):
                    return "\n".join(lines[i:])
            return ""
        if verb in ("no-more", "nomore"):
            return text
        return text

    def _dispatch(self, line: str) -> str:
        words = line.split()
        low = [w.lower() for w in words]
        if low[0] == "do" and self._in_config() and len(words) > 1:
            return self._dispatch(" ".join(words[1:]))
        if low[0] == "show":
            return self._show(words[1:], low[1:])
        handler = {"eos": self._eos, "onyx": self._onyx, "os10": self._os10}[self.vendor]
        return handler(line, words, low)

    # ------------------------------------------------------------------ shared verbs

    def _common(self, words: list[str], low: list[str]) -> str | None:
        """Verbs every vendor has in the exec and enable modes; None when the line is not one."""
        mode = self.mode
        if low == ["exit"] or low == ["quit"] or low == ["logout"]:
            if mode in ("exec", "enable"):
                self.closed = True
                return ""
            return None
        if mode not in ("exec", "enable"):
            return None
        if low[0] == "terminal":
            if self.vendor == "eos" and low[1:2] == ["width"] and len(low) == 3 and low[2].isdigit():
                return f"Width set to {low[2]} columns."
            if self.vendor == "eos" and low[1:2] == ["length"] and len(low) == 3 and low[2].isdigit():
                return "Pagination disabled." if low[2] == "0" else f"Pagination set to {low[2]} lines."
            if len(low) == 3 and low[1] in ("length", "width") and low[2].isdigit():
                return ""  # netmiko's dell_os10 / mellanox drivers: `terminal length 0`, `terminal width 511`
            raise _Unrecognized(low[1] if len(low) > 1 else "", kind="incomplete" if len(low) == 1 else "invalid")
        if low == ["enable"]:
            self.stack[-1] = _Frame("enable")
            return ""
        if low == ["disable"] and self.vendor != "os10":
            self.stack[-1] = _Frame("exec")
            return ""
        return None

    def _need_enable(self) -> None:
        if self.mode == "exec":
            raise _Unrecognized(kind="privileged")

    def _save(self) -> None:
        self.switch.saved_config = render_running_config(self.world, self.switch)

    # ------------------------------------------------------------------ show

    def _show(self, words: list[str], low: list[str]) -> str:
        if not low:
            raise _Unrecognized(kind="incomplete")
        sw = self.switch
        _reconcile(self.world, sw)
        if low[0] in ("interface", "interfaces"):  # both spellings work on all three
            low = [{"eos": "interfaces", "onyx": "interfaces", "os10": "interface"}[self.vendor], *low[1:]]
        fn = {"eos": self._show_eos, "onyx": self._show_onyx, "os10": self._show_os10}[self.vendor]
        return fn(sw, words, low)

    def _ports_arg(self, sw: Switch, words: list[str]) -> list[SwitchPort]:
        if not words:
            return list(sw.ports)
        res = resolve_ports(sw, " ".join(words))
        if res is None:
            raise _Unrecognized(words[0])
        return res[0]

    def _show_version(self) -> str:
        now = time.time()
        d, h, m, s = _uptime(now - self.started + 3 * 86400 + 7265)
        if self.vendor == "eos":
            return "\n".join([
                f"Arista {EOS_MODEL}-F",
                "Hardware version: 11.01",
                "Serial number: SSJ17290000",
                f"Hardware MAC address: {_eos_mac(self.switch)}",
                f"System MAC address: {_eos_mac(self.switch)}",
                "",
                f"Software image version: {EOS_VERSION}",
                "Architecture: x86_64",
                f"Internal build version: {EOS_VERSION}-29128873.4283M",
                "Internal build ID: 8a1b7cc7-5f3e-4c0a-9d52-0c3b7e8f9a10",
                "Image format version: 2.0",
                "Image optimization: Strata-4GB",
                "",
                f"Uptime: {d} days, {h} hours and {m} minutes",
                "Total memory: 8099104 kB",
                "Free memory: 5590328 kB",
            ])
        if self.vendor == "onyx":
            return "\n".join([
                "Product name:      Onyx",
                f"Product release:   {ONYX_VERSION}",
                "Build ID:          #1-dev",
                "Build date:        2021-07-05 18:41:29",
                "Target arch:       x86_64",
                "Target hw:         x86_64",
                "Built by:          sw-r2d2-bot@b1e6f0f5b6a5",
                f"Version summary:   X86_64 {ONYX_VERSION} 2021-07-05 18:41:29 x86_64",
                "",
                "Product model:     x86onie",
                f"Host ID:           {_mac(self.switch).replace(':', '').upper()}",
                "System serial num: MT2036X00000",
                "System UUID:       4c1e3b2a-0d9f-11eb-8000-0c42a1000000",
                "",
                f"Uptime:            {d}d {h}h {m}m {s}.120s",
                "CPU load averages: 0.10 / 0.12 / 0.09",
                "Number of CPUs:    4",
                "System memory:     2800 MB used / 5010 MB free / 7810 MB total",
                "Swap:              0 MB used / 0 MB free / 0 MB total",
            ])
        return "\n".join([
            "Dell EMC Networking OS10 Enterprise",
            "Copyright (c) 1999-2021 by Dell Inc. All Rights Reserved.",
            f"OS Version: {OS10_VERSION}",
            f"Build Version: {OS10_VERSION}.255",
            "Build Time: 2021-03-12T10:57:24+0000",
            "System Type: S5232F-ON",
            "Architecture: x86_64",
            f"Up Time: {d} days {h:02d}:{m:02d}:{s:02d}",
        ])
