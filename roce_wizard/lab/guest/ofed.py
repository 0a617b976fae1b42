"""The MLNX_OFED installer, openibd and ofed_info of the simulated guest."""

from __future__ import annotations

import re

from roce_wizard.lab.guest.rdma import rdma_ports
from roce_wizard.lab.guest.state import OFED_BUNDLE, _driver_reload, _err, _gs, _guest, _lab, _ok
from roce_wizard.lab.proto import Ctx, Reply
from roce_wizard.lab.world import World


def _next_pid(world: World) -> int:
    lab = _lab(world)
    lab["pids"] += 37
    return lab["pids"]


_OFED_INSTALL_OPTS = {"--force", "-force", "--add-kernel-support", "--skip-repo", "--without-fw-update", "-q",
                      "--hpc", "--all", "--basic", "--dpdk", "--upstream-libs", "--without-depcheck"}


def prog_mlnxofedinstall(ctx: Ctx, argv: list[str]) -> Reply:
    """MLNX_OFED's installer: installs now; the new stack loads with openibd force-restart or a reboot."""
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    st = _gs(world, guest)
    m = re.search(r"(MLNX_OFED_LINUX-\d+\.\d+-[\d.]+?)-", argv[0])
    bundle = m.group(1) if m else OFED_BUNDLE
    bad = [a for a in argv[1:] if a.startswith("-") and a not in _OFED_INSTALL_OPTS]
    if bad:
        return _err(f"Unsupported parameter: {bad[0]}", 1)
    pid = _next_pid(world)
    logs = f"/tmp/MLNX_OFED_LINUX.{pid}.logs"
    kernel_dir = f"/tmp/{bundle}-{guest.kernel.rsplit('.', 1)[0]}"
    out = [f"Logs dir: {logs}", f"General log file: {logs}/general.log"]
    if "--add-kernel-support" in argv[1:]:
        out += [f"Note: This program will create MLNX_OFED_LINUX TGZ for rhel8.4 under {kernel_dir} directory.",
                f"See log file /tmp/mlnx_iso.{pid}_logs/mlnx_ofed_iso.{pid}.log", "",
                "Checking if all needed packages are installed...", "Building MLNX_OFED_LINUX RPMS . Please wait...",
                f"Created {kernel_dir}/{bundle}-rhel8.4-ext.tgz", ""]
    out += ["Below is the list of MLNX_OFED_LINUX packages that you have chosen",
            "(some may have been already installed by other means):", "",
            ("ofed-scripts mlnx-tools mlnx-ofa_kernel mlnx-ofa_kernel-modules rdma-core libibverbs libibverbs-utils "
             "ibacm librdmacm librdmacm-utils infiniband-diags perftest ucx openmpi mpitests_openmpi"), "",
            "Checking SW Requirements...", "Removing old packages...", "Installing new packages",
            "Installing ofed-scripts-5.4...", "Installing mlnx-tools-5.2.0...", "Installing mlnx-ofa_kernel-5.4...",
            "Installing rdma-core-54mlnx1...", "Installing perftest-4.5...", "Installing ucx-1.11.0...",
            "Installing openmpi-4.1.2a1...", "Installing mpitests_openmpi-3.2.20...",
            "Installation passed successfully", "To load the new driver, run:", "/etc/init.d/openibd restart"]
    guest.ofed_version = bundle
    guest.ofed_pending = True
    st["packages"].update({"mlnx-ofa_kernel", "rdma-core", "perftest", "ucx", "openmpi"})
    return _ok("\n".join(out) + "\n")


def prog_openibd(ctx: Ctx, argv: list[str]) -> Reply:
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    st = _gs(world, guest)
    verb = argv[1] if len(argv) > 1 else ""
    ok = "[  OK  ]"
    if verb in ("restart", "force-restart", "start", "force-start"):
        _driver_reload(world, guest, st)
        lines = [] if verb in ("start", "force-start") else [f"{'Unloading HCA driver:':<59}{ok}"]
        lines.append(f"{'Loading HCA driver and Access Layer:':<59}{ok}")
        return _ok("".join(line + "\n" for line in lines))
    if verb in ("stop", "force-stop"):
        return _ok(f"{'Unloading HCA driver:':<59}{ok}\n")
    if verb == "status":
        ports = rdma_ports(world, guest)
        if not ports:
            return _ok("\n  HCA driver is not loaded\n\n")
        return _ok("\n  HCA driver loaded\n\nConfigured Mellanox EN devices:\n"
                   + "".join(p.netdev.name + "\n" for p in ports) + "\nCurrently active Mellanox devices:\n"
                   + "".join(p.netdev.name + "\n" for p in ports if p.active) + "\n"
                   "The following OFED modules are loaded:\n\n  rdma_ucm\n  rdma_cm\n  ib_ipoib\n  mlx5_core\n"
                   "  mlx5_ib\n  ib_uverbs\n  ib_umad\n  ib_cm\n  ib_core\n  mlxfw\n\n")
    return _err("Usage: /etc/init.d/openibd {start|force-start|stop|force-stop|restart|force-restart|status}", 1)


# ---------------------------------------------------------------------------- RDMA tools


def prog_ofed_info(ctx: Ctx, argv: list[str]) -> Reply:
    guest = _guest(ctx.world, ctx.target)
    ver = guest.ofed_version or OFED_BUNDLE
    short = ver.replace("MLNX_OFED_LINUX-", "")
    if "-s" in argv[1:]:
        return _ok(f"{ver}:\n")
    if "-n" in argv[1:]:
        return _ok(short + "\n")
    base = short.rsplit(".", 1)[0]
    return _ok(f"{ver} (OFED-{base}):\n\nclusterkit:\nmlnx_ofed_clusterkit/clusterkit-1.3.1.tgz\n\n"
               "hcoll:\nmlnx_ofed_hcoll/hcoll-4.7.3199.tgz\n\nmlnx-ethtool:\nmlnx_ofed/ethtool.git mlnx_ofed_5_4\n\n"
               "mlnx-tools:\nmlnx_ofed/mlnx-tools.git mlnx_ofed_5_4\n\n"
               "perftest:\nmlnx_ofed_perftest/perftest-4.5-0.4.g4b12e2b.tar.gz\n\n"
               "rdma-core:\nmlnx_ofed/rdma-core.git mlnx_ofed_5_4\n\nucx:\nmlnx_ofed_ucx/ucx-1.11.0-1.54103.src.rpm\n\n"
               "Installed Packages:\n-------------------\n"
               "ofed-scripts\nmlnx-tools\nmlnx-ofa_kernel\nrdma-core\nlibibverbs\nlibibverbs-utils\nperftest\nucx\n"
               "openmpi\n")
