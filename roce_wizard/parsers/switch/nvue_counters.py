"""Cumulus NVUE `nv show interface <swp> qos roce counters`: the counts RW609 judges, as integers.

The table (Cumulus Linux 5.x, real capture in tests/data/corpus/cumulus_nv_show_qos_roce/) nests
`rx-stats`/`tx-stats` groups; `nvue.parse_nvue_qos_roce` flattens it to `counters{"tx-stats.tx-pfc-stats.
pause-packets": "0", …}` (strings, units kept). `roce_counters` picks the packet/event counts out of that:
a value that is not a bare integer (`92824.38 GB`, `0 Bytes`, `-`) is a size or unknown, never a count.
"""

from __future__ import annotations

import re

_PICK = {
    "rx_pause_packets": "rx-stats.rx-pfc-stats.pause-packets",
    "rx_pause_duration": "rx-stats.rx-pfc-stats.pause-duration",
    "tx_pause_packets": "tx-stats.tx-pfc-stats.pause-packets",
    "tx_pause_duration": "tx-stats.tx-pfc-stats.pause-duration",
    "rx_roce_packets": "rx-stats.rx-roce-stats.roce-packets",
    "rx_roce_no_buffer_discard": "rx-stats.rx-roce-stats.no-buffer-discard",
    "rx_non_roce_no_buffer_discard": "rx-stats.rx-non-roce-stats.no-buffer-discard",
    "tx_roce_packets": "tx-stats.tx-roce-stats.roce-packets",
    "tx_roce_unicast_no_buffer_discard": "tx-stats.tx-roce-stats.unicast-no-buffer-discard",
    "tx_cnp_packets": "tx-stats.tx-cnp-stats.cnp-packets",
    "tx_cnp_unicast_no_buffer_discard": "tx-stats.tx-cnp-stats.unicast-no-buffer-discard",
    "ecn_marked_packets": "tx-stats.tx-ecn-stats.ecn-marked-packets",
}


def roce_counters(counters: dict[str, str]) -> dict[str, int | None]:
    """The counts of a flattened `qos roce counters` table; absent when the table does not print them."""
    out: dict[str, int | None] = {}
    for key, path in _PICK.items():
        if path in counters:
            value = (counters[path] or "").strip()
            out[key] = int(value) if re.fullmatch(r"[0-9]+", value) else None
    return out
