"""RW610's run line (a 2-rank mpirun of all_reduce_perf with the NCCL environment) through the real `mpirun`'s
option parser, as tests/oracle/test_generated_lines.py does for RW603's: the argv the lab node's shell received
(after `if …; then timeout …`), replayed to the real binary (tests/oracle/real.py: app contexts run `true` on
localhost)."""

from __future__ import annotations

import pytest

from roce_wizard.lab import guest as lab_guest
from tests.oracle import real
from tests.unit.checks.test_nccl_checks import _measure, _world


def test_the_nccl_mpirun_line_passes_the_real_parser():
    seen: list[list[str]] = []
    original = lab_guest.programs

    def programs(world, name):
        table = original(world, name)

        def wrap(fn):
            def recording(ctx, argv):
                seen.append(list(argv))
                return fn(ctx, argv)
            return recording
        return {k: wrap(v) if k.rsplit("/", 1)[-1] == "mpirun" else v for k, v in table.items()}

    mp = pytest.MonkeyPatch()
    mp.setattr(lab_guest, "programs", programs)
    try:
        facts = _measure(_world(True))
    finally:
        mp.undo()
    assert facts["nccl_log"]["net"] == "IB"
    assert seen and seen[0][-9:] == ["all_reduce_perf", "-b", "8", "-e", "128M", "-f", "2", "-g", "1"], seen
    answer = real.run(seen[0], [])
    assert answer.accepted, answer.why()
