"""The lab queues traffic in the class its own EOS says it would (`show qos maps`, as the lab renders it): the
fabric's classification (lab/fabric.py switch_tc, which cannot import the switch package) and the switch's
rendered DSCP → TC and CoS → TC maps agree, for every DSCP and CoS, also after a `qos map dscp … to traffic-class`
edit; a port that re-marks what it receives (RW607 on a VF guest) queues everything in DSCP 0's class."""

from __future__ import annotations

from roce_wizard.lab import scenarios
from roce_wizard.lab.fabric import REMARK_IN, switch_tc
from roce_wizard.lab.switch.render_eos import _eos_qos_maps
from roce_wizard.lab.switch.state import cli_state
from roce_wizard.parsers import PARSERS


def _pair(world):
    sw = next(iter(world.switches.values()))
    a, b = [p for p in sw.ports if p.peer][:2]
    return sw, a, b


def test_switch_tc_follows_the_rendered_eos_maps():
    world = scenarios.healthy(2)
    sw, a, b = _pair(world)
    cli_state(sw).dscp_map[26] = 5  # `qos map dscp 26 to traffic-class 5`
    maps = PARSERS["eos_qos_maps"].parse(_eos_qos_maps(sw))
    assert all(switch_tc(world, b.peer, a.peer, d, 0) == maps["dscp_tc"][d] for d in range(64))
    a.trust = "pcp"  # `no qos trust dscp`: the CoS decides
    assert all(switch_tc(world, b.peer, a.peer, 26, cos) == maps["cos_tc"][cos] for cos in range(8))


def test_a_port_that_remarks_what_it_receives_queues_it_in_dscp0s_class():
    world = scenarios.healthy(2)
    sw, a, b = _pair(world)
    assert switch_tc(world, b.peer, a.peer, 26, 3) == 3
    sw.__dict__.setdefault(REMARK_IN, set()).add(a.name)
    assert switch_tc(world, b.peer, a.peer, 26, 3) == 1  # EOS: DSCP 0 -> TC 1
    assert switch_tc(world, a.peer, b.peer, 26, 3) == 3  # the other way in is untouched
