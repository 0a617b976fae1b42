"""The pieces every vendor CLI shares: the refusal exception, mode frames, keyword abbreviation, and
the running configuration each vendor prints (split out of lab/switch/__init__.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from roce_wizard.lab.switch.render_eos import _eos_running_config
from roce_wizard.lab.switch.render_onyx import _onyx_running_config
from roce_wizard.lab.switch.render_os10 import _os10_running_config
from roce_wizard.lab.world import Switch, SwitchPort, World


# the CLI state machine


class _Unrecognized(Exception):
    def __init__(self, token: str = "", kind: str = "invalid"):
        super().__init__(token)
        self.token = token
        self.kind = kind  # invalid / incomplete / privileged / message


@dataclass
class _Frame:
    kind: str  # exec enable config if txq cmap pmap pmapc sysqos tmap
    label: str = ""
    ports: list[SwitchPort] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)


# keywords each vendor's commands use: a unique prefix of one of them stands for it (`sh int`, `conf t`)
_COMMON_WORDS = {
    "show", "configure", "terminal", "interface", "interfaces", "running-config", "startup-config", "exit",
    "end", "enable", "disable", "no", "mtu", "description", "shutdown", "priority-flow-control", "priority",
    "flowcontrol", "receive", "send", "on", "off", "qos", "trust", "dscp", "version", "length", "width",
    "write", "memory", "copy", "include", "exclude", "begin", "lldp", "neighbors", "status", "ethernet",
    "switchport", "mode", "default", "map", "do",
}
_VOCAB = {
    "eos": _COMMON_WORDS | {"session", "commit", "abort", "no-drop", "drop", "cos", "tx-queue", "random-detect",
                            "ecn", "minimum-threshold", "maximum-threshold", "kbytes", "bytes", "mbytes",
                            "segments", "traffic-class", "to", "maps", "flowcontrol", "session-config", "diffs",
                            "hostname", "bandwidth", "percent", "configuration", "sessions"},
    "onyx": _COMMON_WORDS | {"dcb", "force", "auto", "configuration", "cli", "session", "paging", "L2", "L3",
                             "both", "traffic-class", "congestion-control", "minimum-absolute", "maximum-absolute",
                             "remote", "dscp-to-switch-priority", "switch-priority", "pfc-wd", "red"},
    "os10": (_COMMON_WORDS - {"running-config", "startup-config"}) | {
                             "running-configuration", "startup-configuration", "transmit", "class-map",
                             "policy-map", "type", "network-qos", "queuing", "match", "qos-group", "queue", "class",
                             "pause", "pfc-cos", "service-policy", "input", "output", "trust-map", "qos-map",
                             "random-detect", "ecn", "bandwidth", "percent", "system", "range", "dscp-map",
                             "ets", "interface", "wred", "color", "green", "yellow", "red", "minimum-threshold",
                             "maximum-threshold", "drop-probability"},
}
_VOCAB_LOWER = {v: {w.lower() for w in words} for v, words in _VOCAB.items()}
_STOP_AFTER = {"description", "session", "hostname", "class", "network-qos", "queuing", "dscp-map", "trust-map", "wred",
               "service-policy", "include", "exclude", "begin"}
_CONF_T = re.compile(r"^conf(?:i(?:g(?:u(?:r(?:e)?)?)?)?)?(?:\s+t(?:e(?:r(?:m(?:i(?:n(?:a(?:l)?)?)?)?)?)?)?)?$",
                     re.IGNORECASE)


def _expand(line: str, vendor: str) -> str:
    vocab = _VOCAB_LOWER[vendor]
    if _CONF_T.match(line.strip()):
        return "configure terminal" if " " in line.strip() or vendor != "eos" else "configure"
    out: list[str] = []
    stopped = False
    for tok in line.split():
        if not stopped and re.fullmatch(r"[A-Za-z][A-Za-z-]*", tok):
            low = tok.lower()
            if low not in vocab:
                if low == "sh":
                    tok = "show"
                elif low in ("int", "inter"):
                    tok = "interface"
                else:
                    cands = [w for w in vocab if w.startswith(low)]
                    if len(cands) == 1:
                        tok = cands[0]
            if tok.lower() in _STOP_AFTER:
                stopped = True
        out.append(tok)
    return " ".join(out)



def render_running_config(world: World, switch: Switch) -> str:
    """The running configuration as the vendor prints it (also what `write memory` saves)."""
    return {"eos": _eos_running_config, "onyx": _onyx_running_config, "os10": _os10_running_config}[switch.vendor](
        world, switch)
