"""Dell OS10 ECN in the lab: WRED profiles, the only way OS10 marks ECN on a queue.

Source: Dell SmartFabric OS10 User Guide 10.5.0, "Configure RoCE on the switch"
(https://www.dell.com/support/manuals/en-in/dell-emc-smartfabric-os10/smartfabric-os-user-guide-10-5-0/configure-roce-on-the-switch?guid=guid-ddfa4455-8f64-4014-8543-ceb6719c904d&lang=en-us),
step 2 and 3, whose lines this module accepts and prints:

    wred wred_ecn
     random-detect ecn
     random-detect color green minimum-threshold 1000 maximum-threshold 2000 drop-probability 100
    policy-map type queuing policy_2Q
     class Q3
      bandwidth percent 70
      random-detect wred_ecn

`random-detect ecn` is a line of the WRED profile, not of a queuing class: typed in a class, OS10's
parser does not know it and answers `% Error: Unrecognized command.` (the Dell guide above puts ECN
in a WRED profile; the refusal follows from it, no capture of it was found). A class's
`random-detect NAME` must name an existing profile. The thresholds are kept as typed (KB and %).
"""

from __future__ import annotations

import re

from roce_wizard.lab.switch.state import ECN_MAX_KB, ECN_MIN_KB, CliState, Os10PolicyClass, Os10Wred

AUTO_PROFILE = "wred-ecn"  # the profile the lab names when a fault or the world turns ECN on by itself
COLORS = ("green", "yellow", "red")
_COLOR = re.compile(r"random-detect color (green|yellow|red) minimum-threshold (\d+) maximum-threshold (\d+)"
                    r" drop-probability (\d+)")


class Refused(Exception):
    """The line is not OS10's: `message` is what the switch prints."""

    def __init__(self, message: str = "% Error: Unrecognized command."):
        super().__init__(message)
        self.message = message


def class_has_ecn(state: CliState, klass: Os10PolicyClass) -> bool:
    """A queuing class marks ECN when the WRED profile it names has `random-detect ecn`."""
    profile = state.os10_wred.get(klass.wred or "")
    return bool(profile is not None and profile.ecn)


def auto_profile(state: CliState) -> str:
    """The profile a class gets when the lab turns ECN on without a CLI (faults undone, scenarios)."""
    profile = state.os10_wred.setdefault(AUTO_PROFILE, Os10Wred())
    profile.ecn = True
    profile.colors.setdefault("green", (ECN_MIN_KB, ECN_MAX_KB, 100))
    return AUTO_PROFILE


def wred_line(state: CliState, name: str, body: list[str], neg: bool) -> None:
    """One line typed in `wred NAME` mode (config-wred)."""
    profile = state.os10_wred[name]
    text = " ".join(body)
    if text == "random-detect ecn":
        profile.ecn = not neg
        return
    if neg and len(body) == 3 and body[:2] == ["random-detect", "color"] and body[2] in COLORS:
        profile.colors.pop(body[2], None)
        return
    m = _COLOR.fullmatch(text)
    if m and not neg:
        low, high, prob = int(m[2]), int(m[3]), int(m[4])
        if not (low <= high and 0 <= prob <= 100):
            raise Refused()
        profile.colors[m[1]] = (low, high, prob)
        return
    raise Refused()


def class_line(state: CliState, klass: Os10PolicyClass, body: list[str], body_w: list[str], neg: bool) -> bool:
    """`random-detect …` in a queuing policy's class; False: not a random-detect line."""
    if body[:1] != ["random-detect"]:
        return False
    if neg and len(body) <= 2:
        klass.wred = None
        return True
    if len(body) != 2 or body[1] == "ecn":  # `random-detect ecn` belongs in the WRED profile
        raise Refused()
    if body_w[1] not in state.os10_wred:
        raise Refused(f"% Error: wred profile {body_w[1]} does not exist.")
    klass.wred = body_w[1]
    return True


def remove_profile(state: CliState, name: str) -> None:
    """`no wred NAME`: refused while a class still names it."""
    if any(k.wred == name for pol in state.os10_policies.values() for k in pol.classes.values()):
        raise Refused(f"% Error: wred profile {name} is in use.")
    state.os10_wred.pop(name, None)


def render(state: CliState) -> list[str]:
    """The `wred` blocks of `show running-configuration`."""
    out: list[str] = []
    for name, profile in sorted(state.os10_wred.items()):
        out.append(f"wred {name}")
        if profile.ecn:
            out.append(" random-detect ecn")
        for color in COLORS:
            if color in profile.colors:
                low, high, prob = profile.colors[color]
                out.append(f" random-detect color {color} minimum-threshold {low} maximum-threshold {high} "
                           f"drop-probability {prob}")
        out.append("!")
    return out
