"""mpirun (Open MPI + UCX + OSU) and ucx_info of the simulated guest."""

from __future__ import annotations

import ipaddress
import time
from typing import Any

from roce_wizard.lab.guest.nccl import nccl_run
from roce_wizard.lab.guest.ofed import _next_pid
from roce_wizard.lab.guest.perftest import _count_rdma, _link_eff, _usable_gid
from roce_wizard.lab.guest.rdma import _resolve, gid_table, rdma_ports, visible_interfaces
from roce_wizard.lab.guest.state import OSU_VERSION, UCX_VERSION, _err, _gs, _guest, _ok, _rng
from roce_wizard.lab.proto import Ctx, Reply
from roce_wizard.lab.world import Guest, World

# ---------------------------------------------------------------------------- MPI (Open MPI + UCX) and OSU


def _rdma_tls(env: dict[str, str]) -> bool:
    tls = [t.strip() for t in env.get("UCX_TLS", "all").split(",")]
    if tls and tls[0].startswith("^"):  # an exclusion list
        excluded = {tls[0][1:], *tls[1:]}
        return "ib" not in excluded and not {"rc", "ud", "dc"} <= excluded
    return "all" in tls or any(t in tls for t in ("rc", "rc_x", "rc_mlx5", "rc_v", "rc_verbs", "ib", "ud", "dc", "dc_x"))


def _ucx_rdma(world: World, a: Guest, b: Guest, env: dict[str, str],
              env_b: dict[str, str] | None = None) -> tuple[bool, dict[str, list[str]]]:
    """Can UCX's rc_mlx5 carry a<->b (each rank with its own UCX settings)? Also, per node, the
    UCX_NET_DEVICES names UCX warns are unavailable there."""
    envs = {a.name: env, b.name: env if env_b is None else env_b}
    ok = all(_rdma_tls(e) for e in envs.values())
    unavailable: dict[str, list[str]] = {}
    for g in (a, b):
        env = envs[g.name]
        devices = [d.strip() for d in env.get("UCX_NET_DEVICES", "all").split(",") if d.strip()]
        ports = [p for p in rdma_ports(world, g) if p.active]
        names = {f"{p.dev}:{p.port}" for p in ports}
        nets = {i.name for i in visible_interfaces(world, g)}
        unavailable[g.name] = [d for d in devices if d != "all" and d not in names | nets]
        allowed = [p for p in ports if "all" in devices or f"{p.dev}:{p.port}" in devices]
        if not allowed:
            ok = False
            continue
        rows = gid_table(world, g, allowed[0])
        idx = env.get("UCX_IB_GID_INDEX")
        row = (next((r for r in rows if str(r[0]) == idx.strip()), None) if idx is not None
               else next((r for r in rows if r[2] and r[3] == "v2"), None))
        ok = ok and _usable_gid(row)
    return ok, unavailable


def _ucx_tcp_dev(world: World, g: Guest, env: dict[str, str]) -> str | None:
    devices = [d.strip() for d in env.get("UCX_NET_DEVICES", "all").split(",") if d.strip()]
    tls = [t.strip() for t in env.get("UCX_TLS", "all").split(",")]
    if tls and tls[0].startswith("^"):
        if "tcp" in {tls[0][1:], *tls[1:]}:
            return None
    elif "all" not in tls and "tcp" not in tls:
        return None
    usable = [i for i in visible_interfaces(world, g) if i.name != "lo" and i.ipv4
              and ("all" in devices or i.name in devices)]
    usable.sort(key=lambda i: i.name != g.roce_netdev)
    return usable[0].name if usable else None


def _shared_netdev(world: World, a: Guest, b: Guest) -> str | None:
    """The netdev both guests have an IPv4 subnet on, the RoCE netdev first (Open MPI's btl tcp)."""
    def nets(g: Guest) -> dict[str, set[Any]]:
        return {i.name: {ipaddress.IPv4Interface(x).network for x in i.ipv4}
                for i in visible_interfaces(world, g) if i.name != "lo" and i.ipv4}

    na, nb = nets(a), nets(b)
    names = sorted(na, key=lambda n: n != a.roce_netdev)
    return next((n for n in names if n in nb and na[n] & nb[n]), None)


_MPI_WITH_ARG = {"-np", "-n", "--np", "-c", "--host", "-host", "-H", "--hosts", "--hostfile", "-hostfile", "--machinefile",
                 "-machinefile", "-x", "--map-by", "--bind-to", "--rank-by", "-npernode", "--npernode"}


def _mpirun_args(st: dict[str, Any], env: dict[str, str], args: list[str]) -> dict[str, Any] | Reply:
    parsed: dict[str, Any] = {"np": None, "hosts": [], "program": None, "env": dict(env)}
    i = 0
    while i < len(args):
        a = args[i]
        nxt = args[i + 1] if i + 1 < len(args) else None
        if parsed["program"] is not None:
            pass  # the program's own arguments
        elif a in _MPI_WITH_ARG and nxt is None:  # Open MPI 4.1.4's messages (Debian openmpi-bin)
            return _err(f'mpirun: Error: option "{a}" did not have enough parameters (1)\n'
                        "Type 'mpirun --help' for usage.", 1)
        elif a in ("-np", "-n", "--np", "-c") and not nxt.isdigit():
            bar = "-" * 76
            return _err(f"{bar}\nOpen MPI has detected that a parameter given to a command line\noption does not match "
                        f"the expected format:\n\n  Option: {a.lstrip('-')}\n  Param:  {nxt}\n\nThis is frequently "
                        "caused by omitting to provide the parameter\nto an option that requires one. Please check the "
                        f"command line and try again.\n{bar}", 1)
        elif a in ("-np", "-n", "--np", "-c") and nxt:
            parsed["np"], i = nxt, i + 1
        elif a in ("--host", "-host", "-H", "--hosts") and nxt:
            parsed["hosts"] += [h.split(":")[0] for h in nxt.split(",") if h]
            i += 1
        elif a in ("--hostfile", "-hostfile", "--machinefile", "-machinefile") and nxt:
            text = st["etc"].get(nxt)
            if text is None:
                return _err("--------------------------------------------------------------------------\n"
                            f"Open RTE was unable to open the hostfile:\n    {nxt}\nCheck to make sure the path and "
                            "filename are correct.\n"
                            "--------------------------------------------------------------------------", 1)
            parsed["hosts"] += [ln.split()[0] for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
            i += 1
        elif a == "-x" and nxt:
            k, eq, v = nxt.partition("=")
            parsed["env"][k] = v if eq else env.get(k, "")
            i += 1
        elif a in ("--mca", "-mca") and i + 2 < len(args):
            i += 2
        elif a in ("--map-by", "--bind-to", "--rank-by", "-npernode", "--npernode") and nxt:
            i += 1
        elif a.startswith("-") and a not in ("--allow-run-as-root", "--oversubscribe", "-v", "--report-bindings",
                                             "--tag-output"):
            return _err(f'mpirun: Error: unknown option "{a}"\nType \'mpirun --help\' for usage.', 1)
        elif not a.startswith("-"):
            parsed["program"] = a
        i += 1
    return parsed


UCX_CONF = "/etc/ucx/ucx.conf"  # UCX reads $prefix/etc/ucx/ucx.conf; the environment wins over it
# what `ucx_info -c` prints for the variables that matter here when nothing sets them
_UCX_DEFAULTS = {"UCX_LOG_LEVEL": "warn", "UCX_NET_DEVICES": "all", "UCX_SHM_DEVICES": "all",
                 "UCX_ACC_DEVICES": "all", "UCX_SELF_DEVICES": "all", "UCX_TLS": "all", "UCX_SOCKADDR_TLS_PRIORITY":
                 "rdmacm,tcp,sockcm", "UCX_WARN_UNUSED_ENV_VARS": "y", "UCX_RNDV_THRESH": "auto",
                 "UCX_IB_SEG_SIZE": "8256", "UCX_IB_GID_INDEX": "auto", "UCX_IB_SL": "auto",
                 "UCX_IB_TRAFFIC_CLASS": "auto", "UCX_IB_ROCE_LOCAL_SUBNET": "n", "UCX_IB_ROCE_SUBNET_PREFIX_LEN":
                 "auto", "UCX_IB_ADDR_TYPE": "auto", "UCX_TCP_PORT_RANGE": "0"}


def _ucx_conf(world: World, g: Guest) -> dict[str, str]:
    """KEY=VALUE lines of the node's UCX config file (comments and [sections] ignored)."""
    text = _gs(world, g)["etc"].get(UCX_CONF, "")
    out = {}
    for line in text.splitlines():
        k, eq, v = line.strip().partition("=")
        if eq and k.startswith("UCX_"):
            out[k.strip()] = v.strip()
    return out


def _ucx_env(world: World, g: Guest, env: dict[str, str]) -> dict[str, str]:
    """The UCX settings a process on g runs with: the config file, then its environment on top."""
    return {**_ucx_conf(world, g), **{k: v for k, v in env.items() if k.startswith("UCX_")}}


def prog_mpirun(ctx: Ctx, argv: list[str]) -> Reply:
    """Open MPI 4.1 with UCX 1.12 running an OSU benchmark between two lab guests.

    MPMD (`mpirun -np 1 --host a -x K=V prog : -np 1 --host b -x K=W prog`) gives each app context its
    own environment: how a per-node UCX_IB_GID_INDEX reaches its rank."""
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    contexts, current = [], []
    for a in argv[1:]:
        if a == ":":
            contexts.append(current)
            current = []
        else:
            current.append(a)
    contexts.append(current)
    members: list[tuple[Guest, dict[str, str]]] = []
    programs_seen: list[str] = []
    for args in contexts:
        parsed = _mpirun_args(_gs(world, guest), ctx.env, args)
        if isinstance(parsed, Reply):
            return parsed
        env, program = parsed["env"], parsed["program"]
        if program is None:
            bar = "-" * 74
            return _err(f"{bar}\nNo executable was specified on the mpirun command line.\n\nAborting.\n{bar}", 1)
        programs_seen.append(program)
        np = parsed["np"]
        hosts = parsed["hosts"] or [guest.name]
        nprocs = int(np) if np and np.isdigit() else len(hosts)
        for r in range(nprocs):
            h = hosts[r % len(hosts)]
            found = (guest, "") if h in ("localhost", guest.name) else _resolve(world, h)
            if found is None:
                return _err(f"ssh: Could not resolve hostname {h}: Name or service not known\n"
                            "--------------------------------------------------------------------------\n"
                            "ORTE was unable to reliably start one or more daemons.", 1)
            members.append((found[0], env))
    program = programs_seen[0]
    bench = program.rsplit("/", 1)[-1]
    if bench == "all_reduce_perf" and all(p.rsplit("/", 1)[-1] == bench for p in programs_seen):
        return nccl_run(world, members, [])  # NCCL's own transports (lab/guest/nccl.py)
    if bench not in ("osu_latency", "osu_bw", "osu_bibw") or any(p.rsplit("/", 1)[-1] != bench for p in programs_seen):
        return _err("--------------------------------------------------------------------------\nmpirun was unable to "
                    "launch the specified application as it could not access\nor execute an executable:\n\n"
                    f"Executable: {program}\nNode: {guest.name}\n\nwhile attempting to start process rank 0.\n"
                    "--------------------------------------------------------------------------", 1)
    if len(members) != 2:
        return Reply(stdout="This test requires exactly two processes\n", exit=1)
    (a, env_a), (b, env_b) = members
    return _ok(_mpi_run(world, a, b, _ucx_env(world, a, env_a), bench, _ucx_env(world, b, env_b)))


def _mpi_run(world: World, a: Guest, b: Guest, env: dict[str, str], bench: str,
             env_b: dict[str, str] | None = None) -> str:
    """UCX picks rc_mlx5 when both ends' RDMA device is up, named in UCX_NET_DEVICES and its GID is a
    RoCE v2 IPv4 one; else UCX's tcp when UCX may use a netdev, else Open MPI's own TCP (ob1): silently."""
    env_b = env if env_b is None else env_b
    envs = {a.name: env, b.name: env_b}
    info = env.get("UCX_LOG_LEVEL", "warn").lower() in ("info", "debug", "trace", "diag")
    ranks = (a, b) if a is not b else (a,)
    rdma, unavailable = _ucx_rdma(world, a, b, env, env_b) if a is not b else (False, {})
    tcp_a, tcp_b = _ucx_tcp_dev(world, a, env), _ucx_tcp_dev(world, b, env_b)
    transport = "shm" if a is b else "rdma" if rdma else "ucx-tcp" if (tcp_a and tcp_b) else "ob1-tcp"
    rng = _rng(a.name, b.name, bench, transport, time.monotonic())
    t0 = time.time()
    pids = {g.name: _next_pid(world) for g in ranks}
    clock = {g.name: t0 + rng.uniform(0.01, 0.05) for g in ranks}
    stamped: list[tuple[float, str]] = []

    def ucx(g: Guest, src: str, level: str, msg: str, later: float = 0.0) -> None:
        clock[g.name] += later + rng.uniform(0.0005, 0.09)
        text = f"[{clock[g.name]:.6f}] [{g.name}:{pids[g.name]}:0] {src:>22} UCX  {level:<4}  {msg}"
        stamped.append((clock[g.name], text))

    for g in ranks:
        # the environment's variables (the config file's are not "env variables")
        envline = " ".join(f"{k}={v}" for k, v in sorted(envs[g.name].items())
                           if k.startswith("UCX_") and _ucx_conf(world, g).get(k) != v)
        if info:
            ucx(g, "ucp_context.c:1550", "INFO", f"UCP version is {UCX_VERSION} (release 0)")
            if envline:
                ucx(g, "parser.c:1885", "INFO", f"UCX_* env variables: {envline}")
        for d in unavailable.get(g.name, []):
            avail = ", ".join([f"'{i.name}'(tcp)" for i in visible_interfaces(world, g)]
                              + [f"'{p.dev}:{p.port}'(ib)" for p in rdma_ports(world, g)])
            ucx(g, "ucp_context.c:859", "WARN", f"network device '{d}' is not available, please use one or more "
                f"of: {avail}")
        if info:
            local = [p for p in rdma_ports(world, g) if p.active]
            tl = f" rc_mlx5/{local[0].dev}:{local[0].port}" if (rdma and local) else ""
            ucx(g, "ucp_worker.c:1783", "INFO", f"ep_cfg[0]: tag(self/memory cma/memory{tl})")
    setup = [text for _, text in sorted(stamped)]
    stamped.clear()
    if info and transport in ("rdma", "ucx-tcp"):  # the remote endpoints connect at the first message
        for g in (a, b):
            if transport == "rdma":
                p = next(p for p in rdma_ports(world, g) if p.active)
                tl = f"rc_mlx5/{p.dev}:{p.port}"
            else:
                tl = f"tcp/{tcp_a if g is a else tcp_b}"
            ucx(g, "ucp_worker.c:1783", "INFO", f"ep_cfg[1]: tag({tl})", later=0.4)
    remote = [text for _, text in sorted(stamped)]

    active = [p.active_mtu for g in (a, b) for p in rdma_ports(world, g) if p.active]
    mtu = min(active or [1024])
    ports_a = [p for p in rdma_ports(world, a) if p.active]
    link = (ports_a[0].speed_mbps if ports_a else 100000) / 1000
    pcie = min(_gs(world, g).get("pcie_gbps") or 1e9 for g in (a, b))
    extra_lat = sum(_gs(world, g).get("lat_extra_us", 0.0) for g in ranks)
    titles = {"osu_latency": ("Latency", "# Size          Latency (us)"),
              "osu_bw": ("Bandwidth", "# Size      Bandwidth (MB/s)"),
              "osu_bibw": ("Bi-Directional Bandwidth", "# Size      Bandwidth (MB/s)")}
    body = []
    moved = 0
    for size in ([0] if bench == "osu_latency" else []) + [2 ** k for k in range(23)]:
        if bench == "osu_latency":
            moved += size * (10000 if size <= 8192 else 1000)
            if transport == "rdma":
                v = ((1.75 if a.vm else 1.32) + extra_lat + size / (link * _link_eff(mtu) * 125) * 1.08
                     + 0.6 * min(size, 8192) / 8192)
            elif transport == "shm":
                v = 0.22 + size / 9000
            else:
                v = 12.9 + size / 1400 + (3.0 if size >= 1024 else 0)
        else:
            moved += size * 64 * (100 if size <= 8192 else 20)
            if transport == "rdma":
                peak = min(link * _link_eff(mtu), pcie * 0.97) * 125 * 0.985
                v = ((size * 2.6) ** -2 + peak ** -2) ** -0.5
            elif transport == "shm":
                v = min(size * 3.8, 11500)
            else:
                v = ((size * 0.42) ** -2 + 2750.0 ** -2) ** -0.5
            v *= 1.9 if bench == "osu_bibw" else 1.0
        body.append(f"{size:<10}{v * rng.uniform(0.985, 1.02):>18.2f}")
    if transport == "rdma":
        _count_rdma(world, a, b, moved, mtu, both_ways=True)
    elif transport != "shm":
        if transport == "ob1-tcp":  # Open MPI's own TCP: the fastest network both ends share
            tcp_a = tcp_b = _shared_netdev(world, a, b)
        _count_tcp(world, a, b, moved, tcp_a, tcp_b)
    _count_tcp(world, a, b, 24_000, None, None)  # the launcher's wireup over the management network
    head = [f"# OSU MPI {titles[bench][0]} Test v{OSU_VERSION}", titles[bench][1]]
    return "\n".join(setup + head + remote + body) + "\n"


def _count_tcp(world: World, a: Guest, b: Guest, nbytes: int, dev_a: str | None, dev_b: str | None) -> None:
    for g, dev in ((a, dev_a), (b, dev_b)):
        st = _gs(world, g)
        name = dev or next((i.name for i in g.interfaces if i.name not in ("lo", g.roce_netdev)), g.roce_netdev)
        c = st["counters"].setdefault(name, {"rx_bytes": 0, "tx_bytes": 0, "rx_packets": 0, "tx_packets": 0})
        pkts = max(1, nbytes // 1448)
        for k in ("rx", "tx"):
            c[f"{k}_bytes"] += nbytes + 66 * pkts
            c[f"{k}_packets"] += pkts


_UCX_USAGE = "Usage: ucx_info [options]\nAt least one of the following options has to be set:\n"


def prog_ucx_info(ctx: Ctx, argv: list[str]) -> Reply:
    """ucx_info's getopt string and messages are the real one's (Debian ucx-utils 1.13.1 `ucx_info -h`)."""
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    args = argv[1:]
    for i, a in enumerate(args):
        if not a.startswith("-") or a == "-":
            continue
        for j, c in enumerate(a[1:]):
            if c not in "vdbyscCafpwemutnNDPA6TMh":
                return Reply(stdout=_UCX_USAGE, stderr=f"ucx_info: invalid option -- '{c}'\n", exit=255)
            if c in "mutnNDPA":
                if j + 2 == len(a) and i + 1 == len(args):
                    return Reply(stdout=_UCX_USAGE, stderr=f"ucx_info: option requires an argument -- '{c}'\n",
                                 exit=255)
                break
    if not args:
        return Reply(stdout=_UCX_USAGE, exit=254)
    version = f"# UCT version={UCX_VERSION}.0 revision 6a24c6b\n"
    if "-v" in argv[1:]:
        return _ok(version + "# configured with: --disable-logging --disable-debug --disable-assertions "
                   "--disable-params-check --enable-mt --with-verbs --with-rdmacm --with-knem\n")
    if "-c" in argv[1:]:  # the configuration a process started here gets: defaults < ucx.conf < environment
        conf = {**_UCX_DEFAULTS, **_ucx_env(world, guest, ctx.env)}
        return _ok("".join(f"{k}={v}\n" for k, v in conf.items()))
    if "-d" not in argv[1:]:
        return _ok(version)
    out = []
    for p in rdma_ports(world, guest):
        if not p.active:
            continue
        bw = p.speed_mbps / 8 * _link_eff(p.active_mtu) * 0.95
        align = {4096: "4K", 2048: "2K", 1024: "1K", 512: "512", 256: "256"}[p.active_mtu]
        out += ["#", f"# Memory domain: {p.dev}", "#     Component: ib", "#             register: unlimited, cost: 180 nsec",
                "#           remote key: 8 bytes", "#           local memory handle is required for zcopy", "#"]
        for tl in ("rc_verbs", "rc_mlx5", "ud_verbs", "ud_mlx5"):
            out += [f"#      Transport: {tl}", f"#         Device: {p.dev}:{p.port}", f"#  System device: {p.pci} (0)",
                    "#", "#      capabilities:", f"#            bandwidth: {bw:.2f}/ppn + 0.00 MB/sec",
                    "#              latency: 800 + 1.000 * N nsec", f"#        put_align_mtu: <= {align}",
                    f"#         am_align_mtu: <= {align}", "#       device address: 18 bytes", "#"]
    out += ["#", "# Memory domain: tcp", "#     Component: tcp", "#"]
    for i in visible_interfaces(world, guest):
        out += ["#      Transport: tcp", f"#         Device: {i.name}", "#  System device: <unknown>", "#"]
    return _ok("\n".join(out) + "\n")
