"""The real binaries as oracles (issue 12, item 3): Debian's perftest, ibverbs-utils, iproute2, ethtool,
ucx-utils and openmpi-bin (.ci/run installs them). On a machine without an RDMA device their option parsers
still run first: a line they accept ends at "no device" (or, for ip/ethtool, acts inside a network namespace
of its own), a line they refuse prints the parser's own error. Nothing here changes this machine: ip and
ethtool run in a fresh network namespace (`unshare -n`) holding a veth pair named like the netdevs the line
names; mpirun runs `true` on localhost.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = {"ib_send_bw": "perftest", "ib_send_lat": "perftest", "ib_write_bw": "perftest", "ib_write_lat": "perftest",
           "ib_read_bw": "perftest", "ib_read_lat": "perftest", "ibv_devinfo": "ibverbs-utils", "rdma": "iproute2",
           "ip": "iproute2", "ethtool": "ethtool", "ucx_info": "ucx-utils", "mpirun": "openmpi-bin",
           "systemctl": "systemd", "lspci": "pciutils", "ulimit": "bash"}  # ulimit: bash's builtin
PERFTEST = {k for k, v in PACKAGE.items() if v == "perftest"}
TIMEOUT_S = 30


@dataclass
class Answer:
    argv: list[str]
    exit: int | None
    stdout: str
    stderr: str
    accepted: bool

    def why(self) -> str:
        return f"{' '.join(self.argv)} -> exit {self.exit}: {(self.stderr or self.stdout).strip()[:300]}"


def need(tool: str) -> str:
    """The binary's path, or skip the test saying which package is missing."""
    path = shutil.which(tool)
    if path is None:
        pytest.skip(f"`{tool}` is not installed (Debian package {PACKAGE.get(tool, '?')}; .ci/run installs it)")
    return path


def _rdma_usable() -> str | None:
    """`rdma` opens its netlink socket before it parses: without the kernel's RDMA netlink it cannot judge."""
    out = subprocess.run(["rdma", "link", "no-such-subcommand"], capture_output=True, text=True, timeout=10)
    if "Failed to open NETLINK_RDMA socket" in out.stderr:
        return "this kernel has no RDMA netlink (ib_core not loaded): `rdma` fails before parsing its options"
    return None


def _netns_prefix(netdevs: list[str]) -> list[str]:
    setup = "; ".join(f"ip link add {n} type veth peer name rwpeer{i}" for i, n in enumerate(netdevs))
    return ["unshare", "-n", "sh", "-c", f'{setup + "; " if setup else ""}exec "$@"', "sh"]


def _mpirun_argv(argv: list[str]) -> list[str]:
    """The generated mpirun line with what only a cluster has replaced: every app context runs `true` as one
    rank on localhost, a hostfile names localhost (the options the tool generates — -x, --host, --hostfile, -np,
    --allow-run-as-root — are kept)."""
    out = [argv[0], "--allow-run-as-root", "--oversubscribe"]
    hostfile = Path(tempfile.gettempdir()) / "roce-wizard-oracle-hostfile"
    hostfile.write_text("localhost slots=8\n")
    with_arg = {"-np", "-n", "--host", "-H", "-x", "--hostfile", "--map-by", "--bind-to"}
    i, in_program = 1, False
    while i < len(argv):
        a = argv[i]
        if a == ":":
            out.append(a)
            in_program = False
        elif in_program or a == "--allow-run-as-root":
            pass
        elif a in with_arg and i + 1 < len(argv):
            value = argv[i + 1]
            out += [a, "1" if a in ("-np", "-n") and value.isdigit() else "localhost" if a in ("--host", "-H")
                    else str(hostfile) if a == "--hostfile" else value]
            i += 1
        elif a.startswith("-"):
            out.append(a)
        else:
            out.append("true")
            in_program = True
        i += 1
    return out


def run(argv: list[str], netdevs: list[str] = ()) -> Answer:  # type: ignore[assignment]
    """Run one generated command (argv as the shell would pass it) through the real binary and judge it."""
    tool = argv[0].rsplit("/", 1)[-1]
    need("bash" if tool == "ulimit" else tool)
    cmd = [tool, *argv[1:]]
    if tool == "ulimit":  # a shell builtin: bash parses its options
        cmd = ["bash", "-c", shlex.join(cmd)]
    if tool == "rdma":
        reason = _rdma_usable()
        if reason:
            pytest.skip(reason)
    if tool in ("ip", "ethtool"):
        cmd = _netns_prefix([n for n in netdevs if n in argv]) + cmd
    elif tool == "mpirun":
        cmd = _mpirun_argv(cmd)
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        return Answer(argv, None, str(exc.stdout or ""), f"timed out after {TIMEOUT_S}s", False)
    if tool in ("ip", "ethtool") and "unshare failed" in done.stderr:
        pytest.skip(f"cannot make a network namespace here: {done.stderr.strip()}")
    rc, out, err = done.returncode, done.stdout, done.stderr
    if tool in PERFTEST:
        ok = "Did not detect devices" in err  # its parser accepted the line, then found no device
    elif tool == "ibv_devinfo":
        ok = "Failed to get IB devices list" in err or "No IB devices found" in err
    elif tool == "ip":
        ok = rc in (0, 2)  # 2: the kernel answered (RTNETLINK / extack); 1 and 255 are ip's own parser
    elif tool == "ethtool":
        ok = rc == 0 or bool(re.search(r"Operation not supported|netlink error", err))
    elif tool == "systemctl":  # parsed, then it may need a running systemd (a container has none) or the unit
        ok = rc == 0 or not re.search(r"unrecognized option|invalid option|Unknown (command verb|operation)|"
                                      r"requires an argument|Too (few|many) arguments", err)
    else:  # ucx_info, rdma, mpirun (on localhost, running `true`), lspci (no such device: nothing), ulimit
        ok = rc == 0
    return Answer(argv, rc, out, err, ok)
