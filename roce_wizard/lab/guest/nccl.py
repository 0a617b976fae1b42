"""NCCL and nccl-tests on a lab node (when the scenario installs them): `all_reduce_perf` under the lab's mpirun,
`ldconfig -p` listing libnccl, and the NCCL_DEBUG=INFO log in the real line shapes of tests/data/corpus/nccl_log/
(NVIDIA/nccl-tests issues #150, #185, #294, NVIDIA/nccl #428, a vendor manual with NCCL_IB_DISABLE=1):

    host:pid:tid [0] NCCL INFO Bootstrap : Using ens256:192.168.100.11<0>
    host:pid:tid [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB ens256:192.168.100.11<0>
    host:pid:tid [0] NCCL INFO Using network IB            (or NET/Socket : Using [0]ens256:…<0> / Socket)
    host:pid:tid [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0
    #       size         count      type   redop    root     time   algbw   busbw #wrong     time …

NCCL picks NET/Socket for the reasons the lab's UCX falls back to TCP (lab/guest/mpi.py): no active RDMA device
(none, or none NCCL_IB_HCA names), or NCCL_IB_DISABLE=1 (environment, or /etc/nccl.conf, which NCCL loads into
its environment; the environment wins). A NCCL_IB_GID_INDEX that is not a RoCE v2 IPv4 GID keeps NET/IB and
fails connecting (`Call to ibv_modify_qp failed with error Network is unreachable`, nccl-tests #185).
"""

from __future__ import annotations

import time

from roce_wizard.lab.faults import Fault
from roce_wizard.lab.guest.ofed import _next_pid
from roce_wizard.lab.guest.rdma import gid_table, rdma_ports, visible_interfaces
from roce_wizard.lab.guest.state import _err, _gs, _guest, _ok, _rng
from roce_wizard.lab.proto import Ctx, Reply
from roce_wizard.lab.world import Guest, World

NCCL_CONF = "/etc/nccl.conf"
NCCL_VERSION = "2.19.3"
GPU = "NVIDIA A100-SXM4-80GB"


def installed(world: World, guest: Guest) -> str | None:
    """The NCCL version on the node (None: not installed); set by the scenario (`nccl: true`) or a fault."""
    return _gs(world, guest).get("nccl")


def install(world: World, guest: Guest, version: str = NCCL_VERSION) -> None:
    _gs(world, guest)["nccl"] = version


def prog_ldconfig(ctx: Ctx, argv: list[str]) -> Reply:
    """`ldconfig -p` (glibc): the cache listing, libnccl among it when NCCL is installed."""
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    if argv[1:] != ["-p"]:
        return _ok()
    libs = ["libc.so.6", "libm.so.6", "libpthread.so.0"]
    if guest.rdma_core or guest.ofed_version:
        libs += ["libibverbs.so.1", "librdmacm.so.1", "libmlx5.so.1"]
    if installed(world, guest):
        libs += ["libnccl.so.2"]
    rows = [f"\t{lib} (libc6,x86-64) => /lib/x86_64-linux-gnu/{lib}" for lib in sorted(libs, reverse=True)]
    return _ok(f"{len(rows)} libs found in cache `/etc/ld.so.cache'\n" + "\n".join(rows) + "\n")


def _conf(world: World, g: Guest) -> dict[str, str]:
    text = _gs(world, g)["etc"].get(NCCL_CONF) or ""
    out = {}
    for ln in text.splitlines():
        k, eq, v = ln.strip().partition("=")
        if eq and k and not k.startswith("#"):
            out[k.strip()] = v.strip()
    return out


def _hca_match(spec: str, dev: str, port: int) -> bool:
    if not spec:
        return True
    exact = spec.startswith("=")
    for item in spec.lstrip("=^").split(","):
        name, _, p = item.partition(":")
        if (name == dev if exact else dev.startswith(name)) and (not p or p == str(port)):
            return True
    return False


def _choose(world: World, g: Guest, env: dict[str, str]) -> dict:
    """What one rank's NCCL sees: its bootstrap interface, NET/IB devices or the Socket fallback."""
    env = {**_conf(world, g), **env}
    nets = [i for i in visible_interfaces(world, g) if i.ipv4]
    want = env.get("NCCL_SOCKET_IFNAME", "").lstrip("=")
    boot = next((i for i in nets if i.name == want), None) if want else (nets[0] if nets else None)
    ip = boot.ipv4[0].split("/")[0] if boot and boot.ipv4 else "0.0.0.0"
    out = {"env": env, "boot": f"{boot.name if boot else 'lo'}:{ip}<0>", "net": "Socket", "devs": [], "gid_ok": True}
    if env.get("NCCL_IB_DISABLE", "0") == "1":
        return out
    ports = [p for p in rdma_ports(world, g) if p.active and _hca_match(env.get("NCCL_IB_HCA", ""), p.dev, p.port)]
    if not ports:
        out["no_device"] = True
        return out
    out["net"], out["devs"] = "IB", ports
    idx = env.get("NCCL_IB_GID_INDEX")
    if idx is not None and idx.strip().lstrip("-").isdigit() and int(idx) >= 0:
        row = next((r for r in gid_table(world, g, ports[0]) if r[0] == int(idx)), None)
        out["gid_ok"] = row is not None and row[2] is not None and row[3] == "v2"
    return out


def nccl_run(world: World, members: list[tuple[Guest, dict[str, str]]], argv: list[str]) -> Reply:
    """`all_reduce_perf -b 8 -e 128M -f 2 -g 1` over the ranks mpirun started (one GPU each)."""
    missing = [g.name for g, _ in members if not installed(world, g)]
    if missing:
        return _err("--------------------------------------------------------------------------\nmpirun was unable to "
                    "launch the specified application as it could not access\nor execute an executable:\n\n"
                    f"Executable: all_reduce_perf\nNode: {missing[0]}\n\nwhile attempting to start process rank 0.\n"
                    "--------------------------------------------------------------------------", 1)
    n = len(members)
    rng = _rng(*(g.name for g, _ in members), time.monotonic())
    pids = {g.name: _next_pid(world) for g, _ in members}
    seen = {g.name: _choose(world, g, env) for g, env in members}
    lines = [("# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 "
              "agg iters: 1 validation: 1 graph: 0"), "#", "# Using devices"]
    lines += [f"#  Rank {r:2d} Group  0 Pid {pids[g.name]:6d} on {g.name:>10} device  0 [0x17] {GPU}"
              for r, (g, _) in enumerate(members)]
    for g, _ in members:
        s, pre = seen[g.name], f"{g.name}:{pids[g.name]}:{pids[g.name]} [0] NCCL INFO"
        lines.append(f"{pre} Bootstrap : Using {s['boot']}")
        lines.append(f"{pre} NET/Plugin : No plugin found (libnccl-net.so), using internal implementation")
        for k in ("NCCL_IB_DISABLE", "NCCL_IB_HCA", "NCCL_IB_GID_INDEX", "NCCL_IB_TC", "NCCL_SOCKET_IFNAME"):
            if k in s["env"]:
                lines.append(f"{pre} {k} set by environment to {s['env'][k]}.")
    lines.append(f"NCCL version {installed(world, members[0][0])}+cuda12.2")
    for g, _ in members:
        s, tid = seen[g.name], pids[g.name] + 72
        pre = f"{g.name}:{pids[g.name]}:{tid} [0] NCCL INFO"
        if s["net"] == "IB":
            devs = " ".join(f"[{i}]{p.dev}:{p.port}/RoCE" for i, p in enumerate(s["devs"]))
            lines.append(f"{pre} NET/IB : Using {devs} [RO]; OOB {s['boot']}")
        else:
            if s.get("no_device"):
                lines.append(f"{pre} NET/IB : No device found.")
            lines.append(f"{pre} NET/Socket : Using [0]{s['boot']}")
        lines.append(f"{pre} Using network {s['net']}")
    nets = {s["net"] for s in seen.values()}
    if len(nets) > 1 or not all(s["gid_ok"] for s in seen.values()):
        bad = next((g for g, _ in members if not seen[g.name]["gid_ok"]), members[0][0])
        lines.append(f"{bad.name}:{pids[bad.name]}:{pids[bad.name] + 72} [0] misc/ibvwrap.cc:187 NCCL WARN Call to "
                     "ibv_modify_qp failed with error Network is unreachable")
        lines.append(f"{bad.name}: Test NCCL failure common.cu:1005 'unhandled system error (run with NCCL_DEBUG=INFO "
                     "for details) / '")
        return Reply(stdout="\n".join(lines) + "\n", exit=3)
    net = nets.pop()
    for r, (g, _) in enumerate(members):
        pre = f"{g.name}:{pids[g.name]}:{pids[g.name] + 72} [0] NCCL INFO"
        for ch in range(2):
            lines.append(f"{pre} Channel {ch:02d}/0 : {(r - 1) % n}[0] -> {r}[0] [receive] via NET/{net}/0")
            lines.append(f"{pre} Channel {ch:02d}/0 : {r}[0] -> {(r + 1) % n}[0] [send] via NET/{net}/0")
        lines.append(f"{pre} comm 0x{rng.randrange(1 << 40, 1 << 44):x} rank {r} nranks {n} cudaDev 0 busId 17000 - "
                     "Init COMPLETE")
    ports = [p for s in seen.values() for p in s["devs"]]
    link_gbs = min((p.speed_mbps for p in ports), default=25000) / 8000  # GB/s of the slowest port
    peak = link_gbs * 0.92 if net == "IB" else min(link_gbs, 3.0) / 4.5  # Socket: a quarter of the speed or less
    lines += ["#", ("#                                                              out-of-place                       "
                   "in-place          "),
              ("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   "
               "busbw #wrong"),
              ("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  "
               "(GB/s)       ")]
    busbws = []
    size = 8
    while size <= 134217728:
        lat = 18.0 if net == "IB" else 55.0
        t = lat + size / (peak * 1e3) * 2 * (n - 1) / n
        algbw = size / t / 1e3
        busbw = algbw * 2 * (n - 1) / n
        busbws.append(busbw)
        t2 = t * rng.uniform(0.98, 1.02)
        lines.append(f"{size:>12} {size // 4:>13}     float     sum      -1 {t:8.2f} {algbw:7.2f} {busbw:7.2f}"
                     f"      0 {t2:8.2f} {size / t2 / 1e3:7.2f} {size / t2 / 1e3 * 2 * (n - 1) / n:7.2f}      0")
        size *= 2
    lines += ["# Out of bounds values : 0 OK", f"# Avg bus bandwidth    : {sum(busbws) / len(busbws):.4f}", "#"]
    return _ok("\n".join(lines) + "\n")


def prog_all_reduce_perf(ctx: Ctx, argv: list[str]) -> Reply:
    """Started without mpirun: one rank on this node (nothing crosses the network)."""
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    return nccl_run(world, [(guest, dict(ctx.env))], argv)


PATHS = {"all_reduce_perf": "/usr/local/bin/all_reduce_perf", "ldconfig": "/usr/sbin/ldconfig"}


def programs(world: World, guest: Guest) -> dict:
    """The NCCL programs of this node: ldconfig always, all_reduce_perf when NCCL and nccl-tests are installed."""
    table = {"ldconfig": prog_ldconfig}
    if installed(world, guest):
        table["all_reduce_perf"] = prog_all_reduce_perf
    return table


# ---------------------------------------------------------------------------- fault


def _rw610(world: World, target: str) -> None:
    # the site's image installs NCCL and nccl-tests on every node, with an /etc/nccl.conf left over from a
    # TCP-only cluster: NCCL_IB_DISABLE=1 makes NCCL run over sockets, silently
    for g in world.guests.values():
        if (g.vm is None) == (world.guests[target].vm is None):
            install(world, g)
            _gs(world, g)["etc"][NCCL_CONF] = "NCCL_IB_DISABLE=1\n"


VALIDATE_FAULTS: dict[str, Fault] = {f.code: f for f in (
    Fault("RW610", "guest", "NCCL and nccl-tests installed with /etc/nccl.conf NCCL_IB_DISABLE=1: NCCL runs over "
                            "NET/Socket, silently", _rw610),
)}
