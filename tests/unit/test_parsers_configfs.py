"""rdma_cm configfs reads (roce_wizard/parsers/rdma/configfs.py).

Format: Linux Documentation/ABI/testing/configfs-rdma_cm (default_roce_tos, 0-255) printed by
drivers/infiniband/core/cma_configfs.c as "%u\\n"; without `mkdir /sys/kernel/config/rdma_cm/<dev>`
the file does not exist and cat says so (coreutils' message). HAND-WRITTEN in those formats.
"""

from __future__ import annotations

import pytest

from roce_wizard.parsers import PARSERS
from roce_wizard.parsers.base import ParseError
from roce_wizard.parsers.detect import detect

PATH = "/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos"


def test_reads_the_decimal_tos_and_the_device_and_port():
    facts = PARSERS["rdma_cm_tos"].parse(f"[root@compute-01 ~]# cat {PATH}\n106\n")
    assert facts == {"tos": 106, "device": "mlx5_0", "port": 1}


def test_a_missing_configfs_directory_is_an_error_value_not_a_tos():
    facts = PARSERS["rdma_cm_tos"].parse(f"# cat {PATH}\ncat: {PATH}: No such file or directory\n")
    assert facts["tos"] is None and facts["error"] == "No such file or directory"


@pytest.mark.parametrize("text", ["", "hello\n", f"# cat {PATH}\n", "Global tclass=106\n"])
def test_other_text_is_refused(text):
    with pytest.raises(ParseError):
        PARSERS["rdma_cm_tos"].parse(text)


def test_a_bare_number_is_not_claimed_but_a_named_read_is():
    assert PARSERS["rdma_cm_tos"].sniff("106\n") == 0  # could be any sysfs file (sriov_numvfs, …)
    assert detect(f"# cat {PATH}\n106\n").kind == "rdma_cm_tos"
