"""RW604's traffic class: DSCP << 2 with ECT(0) (106 for DSCP 26), the same class perftest's --tclass gets,
for UCX_IB_TRAFFIC_CLASS and NCCL_IB_TC; a configured class with the
same DSCP but not-ECT (104) is no contradiction, another DSCP (96) is."""

from __future__ import annotations

import pytest

from roce_wizard.checklib.pairs import mpi_environment, perftest_tclass
from roce_wizard.model import Policy, Status
from tests.checkcases import Case, run_case

PASS, FAIL = Status.PASS, Status.FAIL


def _ucx(tc: str) -> dict[str, str]:
    return {"ucx_config": f"UCX_TLS=all\nUCX_NET_DEVICES=all\nUCX_IB_TRAFFIC_CLASS={tc}\nUCX_IB_SL=auto\n"}


CASES = [
    Case("RW604", "analyze-class-106-ect0", PASS, outputs=_ucx("106")),
    Case("RW604", "analyze-class-104-same-dscp", PASS, outputs=_ucx("104")),
    Case("RW604", "analyze-class-98-dscp-24", FAIL, outputs=_ucx("98"), summary_has="the cluster needs 106"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_case(case: Case):
    run_case(case)


def test_the_job_class_is_perftests_class_with_ect0():
    policy = Policy()  # DSCP 26
    env = mpi_environment([{"node": "a", "device": "mlx5_0", "port": 1, "gid_index": 3}], policy)["a"]
    assert env["UCX_IB_TRAFFIC_CLASS"] == "106" == str(perftest_tclass(policy))
    assert int(env["UCX_IB_TRAFFIC_CLASS"]) >> 2 == 26 and int(env["UCX_IB_TRAFFIC_CLASS"]) & 3 == 2  # ECT(0)
