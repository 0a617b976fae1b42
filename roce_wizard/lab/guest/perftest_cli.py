"""perftest's command line, parsed the way the real binaries parse it.

Source: the real perftest of Debian 12 (package `perftest` 4.5+0.17-1, `ib_write_bw -V`: "Version: 6.06"),
run on a machine without an RDMA device: its option parser runs before it looks for a device, so a line it
accepts ends in " Did not detect devices" and a line it rejects prints the parser's own message. Every
option below and every message is what those binaries printed (`ib_write_bw --help`, `ib_send_bw --help`,
`ib_send_lat --help`, and each option tried alone); tests/oracle/test_perftest_oracle.py feeds a table of
lines to the real binary and to this parser and requires the same answer.

What the real parser does, and this one too:
- one getopt string for every test (GNU getopt_long: flags may be bundled, `-x3`, `--gid-index=3` or
  `--gid-index 3`, operands anywhere, `--` ends the options);
- values are checked as each option is read (the first bad one is the message);
- after the options: more than one operand, then `-D` with `-a`, then `-T/--tos` without `-R/--rdma_cm`
  (" TOS only valid for rdma_cm based QP and RawEth QP ", on stdout): on a GID-based QP the traffic class is
  `--tclass`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from roce_wizard.lab.proto import Reply

VERSION = "6.06"
PERFTEST_PORT = 18515
SHORT_WITH_ARG = set("cdfijklmnopqrstuwxyABDEIJKLMQSTWX")
SHORT_FLAGS = set("abeghvzCFHNOPRUVZ")
LONG_WITH_ARG = {
    "--MGID", "--aes_block_size", "--burst_size", "--connection", "--cq-mod", "--credentials_path",
    "--data_enc_key_app_path", "--data_enc_keys_number", "--dlid", "--duration", "--force-link", "--gid-index",
    "--hop_limit", "--ib-dev", "--ib-port", "--inline_recv", "--inline_size", "--iters", "--kek_path",
    "--latency_gap", "--limit_bw", "--limit_msgrate", "--log_active_dci_streams", "--log_dci_streams", "--margin",
    "--mmap", "--mmap-offset", "--mtu", "--out_json_file", "--output", "--pkey_index", "--port", "--post_list",
    "--qp", "--qp-timeout", "--rate_limit", "--rate_limit_type", "--rate_units", "--recv_post_list",
    "--report-counters", "--retry_count", "--rx-depth", "--size", "--sl", "--source_ip", "--tclass", "--tos",
    "--tx-depth", "--typical_pkt_size", "--vector", "--wait_destroy"}
LONG_FLAGS = {
    "--CPU-freq", "--aes_xts", "--all", "--bidirectional", "--cpu_util", "--disable_pcie_relaxed",
    "--dont_xchg_versions", "--dualport", "--encrypt_on_tx", "--events", "--help", "--ipv6", "--mcg",
    "--mr_per_qp", "--noPeak", "--odp", "--out_json", "--perform_warm_up", "--rdma_cm", "--report-both",
    "--report-cycles", "--report-per-port", "--report-unsorted", "--report_gbits", "--reversed",
    "--run_infinitely", "--sig_before", "--use-srq", "--use_hugepages", "--use_old_post_send", "--version"}
LONG_TO_SHORT = {
    "--all": "a", "--bidirectional": "b", "--connection": "c", "--ib-dev": "d", "--duration": "D", "--events": "e",
    "--margin": "f", "--CPU-freq": "F", "--mcg": "g", "--help": "h", "--ib-port": "i", "--inline_size": "I",
    "--post_list": "l", "--hop_limit": "L", "--mtu": "m", "--MGID": "M", "--iters": "n", "--noPeak": "N",
    "--dualport": "O", "--port": "p", "--qp": "q", "--cq-mod": "Q", "--rx-depth": "r", "--rdma_cm": "R",
    "--size": "s", "--sl": "S", "--tx-depth": "t", "--tos": "T", "--qp-timeout": "u", "--report-unsorted": "U",
    "--version": "V", "--limit_bw": "w", "--report-counters": "W", "--gid-index": "x", "--vector": "X",
    "--limit_msgrate": "y", "--report-cycles": "C"}
_INT = re.compile(r"^[+-]?\d+$")
_DASHES = "-" * 87


@dataclass
class PtOpts:
    all_sizes: bool = False
    gbits: bool = False
    device: str | None = None
    gid_index: int | None = None
    duration: int | None = None
    size: int | None = None
    iters: int | None = None
    port: int = PERFTEST_PORT
    tclass: int | None = None  # --tclass: the GRH traffic class of a GID-based QP
    tos: int | None = None  # -T/--tos: the ToS of an rdma_cm QP (only with -R)
    rdma_cm: bool = False
    bidir: bool = False
    force_link: str | None = None
    peer: str | None = None


def _value_error(message: str) -> Reply:
    return Reply(stderr=f"{message}\n Parser function exited with Error\n", exit=1)


def _getopt_error(test: str, message: str) -> Reply:
    return Reply(stdout=f"Usage:\n  {test}            start a server and wait for connection\n"
                        f"  {test} <host>     connect to server at <host>\n\n",
                 stderr=f"{test}: {message}\n Invalid Command or flag.\n Please check command line and run again.\n\n"
                        " Parser function exited with Error\n", exit=1)


def _size(text: str) -> int:
    """perftest reads a size with a K/M/G suffix; what does not start with digits is 0."""
    m = re.match(r"^\s*(\d+)([KkMmGg]?)", text)
    if not m:
        return 0
    return int(m.group(1)) * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[m.group(2).lower()]


def _tokens(test: str, args: list[str]) -> list[tuple[str, str | None]] | Reply:
    """getopt_long: [(option letter or long name, value)], operands as ("", operand)."""
    out: list[tuple[str, str | None]] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            out += [("", x) for x in args[i + 1:]]
            break
        if a.startswith("--"):
            name, eq, val = a.partition("=")
            if name in LONG_WITH_ARG:
                if not eq:
                    if i + 1 >= len(args):
                        return _getopt_error(test, f"option '{name}' requires an argument")
                    val, i = args[i + 1], i + 1
                out.append((LONG_TO_SHORT.get(name, name), val))
            elif name in LONG_FLAGS:
                if eq:
                    return _getopt_error(test, f"option '{name}' doesn't allow an argument")
                out.append((LONG_TO_SHORT.get(name, name), None))
            else:
                return _getopt_error(test, f"unrecognized option '{a}'")
        elif a.startswith("-") and len(a) > 1:
            j = 1
            while j < len(a):
                c = a[j]
                if c in SHORT_WITH_ARG:
                    val = a[j + 1:]
                    if not val:
                        if i + 1 >= len(args):
                            return _getopt_error(test, f"option requires an argument -- '{c}'")
                        val, i = args[i + 1], i + 1
                    out.append((c, val))
                    break
                if c not in SHORT_FLAGS:
                    return _getopt_error(test, f"invalid option -- '{c}'")
                out.append((c, None))
                j += 1
        else:
            out.append(("", a))
        i += 1
    return out


def parse(test: str, args: list[str]) -> PtOpts | Reply:
    """The options of one perftest run, or the Reply the real binary gives (exit 1) when it refuses them."""
    kind = "lat" if test.endswith("_lat") else "bw"
    tokens = _tokens(test, args)
    if isinstance(tokens, Reply):
        return tokens
    o, operands = PtOpts(), []
    for key, val in tokens:
        v = val or ""
        if key == "":
            operands.append(v)
        elif key == "a":
            o.all_sizes = True
        elif key == "b":
            if kind != "bw":
                return _value_error(" Bidirectional is only available in BW test")
            o.bidir = True
        elif key == "e" and test.startswith("ib_write"):
            return _value_error(" Events feature not available on WRITE verb")
        elif key == "g" and not test.startswith("ib_send"):
            return _value_error(" MultiCast feature only available on SEND verb")
        elif key in ("C", "H") and kind == "bw":
            return _value_error(" Available only on Latency tests")
        elif key == "U" and kind == "bw":
            return _value_error(" is Available only on Latency tests")
        elif key == "N" and kind == "lat":
            return _value_error(" NoPeak only valid for BW tests")
        elif key == "O" and kind == "lat":
            return _value_error(" Dual-port mode only supports BW tests.")
        elif key == "V":
            return Reply(stdout=f"Version: {VERSION}\n", exit=1)
        elif key == "R":
            o.rdma_cm = True
        elif key == "d":
            o.device = v
        elif key == "x":
            if not _INT.match(v):
                return _value_error(f" Gid index argument {v} should be uint8_t")
            if int(v) % 256 > 64:  # read into a uint8_t, then checked
                return _value_error(" Gid index should be between 0 and 64")
            o.gid_index = int(v) % 256
        elif key == "s":
            size = _size(v)
            if not 1 <= size <= 2147483647:
                return _value_error(" Message Size should be between 1 and 2147483647")
            o.size = size
        elif key == "n":
            if not _INT.match(v):
                return _value_error(f" Iteration num argument {v} should be int")
            if not 5 <= int(v) <= 100000000:
                return _value_error(" Iteration num should be between 5 and 100000000")
            o.iters = int(v)
        elif key == "p":
            if not _INT.match(v):
                return _value_error(f" Port argument {v} should be int")
            o.port = int(v)
        elif key == "D":
            if not _INT.match(v):
                return _value_error(f" Duration period argument {v} should be int")
            if int(v) <= 0:
                return _value_error(" Duration period must be positive")
            o.duration = int(v)
        elif key == "T":
            if not _INT.match(v):
                return _value_error(f" TOS argument {v} should be int")
            if not 0 <= int(v) <= 255:
                return _value_error(" TOS should be between 0 and 255")
            o.tos = int(v)
        elif key == "--tclass":
            if not _INT.match(v):
                return _value_error(f" traffic class argument {v} should be uint16_t")
            o.tclass = int(v) % 65536
        elif key == "--report_gbits":
            o.gbits = True
        elif key == "--force-link":
            o.force_link = v
    if len(operands) > 1:
        return _value_error(" Invalid Command line. Please check command rerun ")
    o.peer = operands[0] if operands else None
    if o.duration is not None and o.all_sizes:
        return Reply(stdout=_DASHES + "\n", stderr="Duration mode currently doesn't support running on all sizes.\n",
                     exit=1)
    if o.tos is not None and not o.rdma_cm:
        return Reply(stdout=" TOS only valid for rdma_cm based QP and RawEth QP \n", exit=1)
    return o


def traffic_class(o: PtOpts, default: int | None) -> int:
    """The class the run's packets carry: `--tclass` on a GID-based QP, `-T` through rdma_cm, else the
    device's default (mlx5's tc/<port>/traffic_class when set), else 0 (DSCP 0: the lossy priority)."""
    if o.rdma_cm and o.tos is not None:
        return o.tos
    if o.tclass is not None:
        return o.tclass
    return default or 0


def no_device() -> Reply:
    """What the real binary prints when the host has no RDMA device at all."""
    return Reply(stderr=" Did not detect devices \n If device exists, check if driver is up\n"
                        " Unable to find the Infiniband/RoCE device\n", exit=1)
