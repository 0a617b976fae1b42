"""Parsers for the validate-stage tools: perftest, OSU micro-benchmarks, UCX logs of an MPI run.

Kinds (docs/facts.md):

- ``perftest``        ib_send_bw / ib_write_bw / ib_read_bw / ib_atomic_bw and the ``_lat`` twins.
- ``osu``             OSU micro-benchmarks (``# OSU MPI Latency Test v5.8`` + ``# Size ...`` table).
- ``openmpi_ucx_log`` an MPI run with UCX log lines (``... UCX  INFO  ep_cfg[0]: tag(...)``).
- ``ucx_config``      ``ucx_info -c``: the UCX configuration a process gets.

One module per tool: perftest.py, osu.py, ucx.py (the UCX log of an MPI run and ``ucx_info -c``);
common.py holds the small helpers. Format rules were read from the tools' sources (see each module).
"""

from __future__ import annotations

from roce_wizard.parsers.base import ParseError, Parser
from roce_wizard.parsers.perf.nccl import parse_nccl_log, sniff_nccl_log
from roce_wizard.parsers.perf.osu import parse_osu, sniff_osu
from roce_wizard.parsers.perf.perftest import bw_to_gbps, parse_perftest, sniff_perftest
from roce_wizard.parsers.perf.ucx import (
    parse_openmpi_ucx_log,
    parse_ucx_config,
    sniff_openmpi_ucx_log,
    sniff_ucx_config,
)

__all__ = ["PARSERS", "ParseError", "bw_to_gbps", "parse_openmpi_ucx_log", "parse_osu", "parse_perftest"]

PARSERS: dict[str, Parser] = {
    "ucx_config": Parser("ucx_config", parse_ucx_config, sniff_ucx_config,
                         "ucx_info -c: UCX's effective configuration (UCX_NAME=value lines)"),
    "perftest": Parser(
        "perftest", parse_perftest, sniff_perftest,
        "perftest ib_{send,write,read,atomic}_{bw,lat} output (client or server side)",
    ),
    "osu": Parser("osu", parse_osu, sniff_osu, "OSU micro-benchmarks output"),
    "openmpi_ucx_log": Parser(
        "openmpi_ucx_log", parse_openmpi_ucx_log, sniff_openmpi_ucx_log,
        "MPI run output with UCX log lines (UCX_LOG_LEVEL=info)",
    ),
    "nccl_log": Parser("nccl_log", parse_nccl_log, sniff_nccl_log,
                       "NCCL_DEBUG=INFO log / nccl-tests table: NET/IB vs NET/Socket, devices, busbw"),
}
