"""The NCCL environment that matches a verified pair (pure; RW604 prints it, RW610 runs all_reduce_perf with it).

Per node: `NCCL_IB_HCA==<dev>:<port>` (`=`: an exact device name, `:<port>` the port), `NCCL_IB_TC` = the
class perftest and UCX get (DSCP << 2 with ECT(0)), `NCCL_SOCKET_IFNAME==<netdev>` (bootstrap and the
out-of-band connection over the RoCE netdev; `=`: that exact interface, not every name it prefixes), and,
for NCCL older than 2.21.5 (its default index 0 is the link-local RoCE v1 GID), `NCCL_IB_GID_INDEX` = the
node's RoCE v2 IPv4 GID index. Source: NVIDIA NCCL User Guide, "Environment Variables"
(https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html: NCCL_IB_HCA, NCCL_IB_TC,
NCCL_IB_GID_INDEX, NCCL_SOCKET_IFNAME and their `=` exact-match prefix, NCCL_IB_GID_INDEX's default).
"""

from __future__ import annotations

from typing import Any


def nccl_environment(names: list[str], nodes: list[dict[str, Any]],
                     ucx_envs: dict[str, dict[str, str]]) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    """(variables for NCCL >= 2.21.5, the same plus NCCL_IB_GID_INDEX for older NCCL) per node name; `nodes`
    are Node.summary() dicts, `ucx_envs` checklib.pairs.mpi_environment's (the device and class come from it)."""
    by_name = {n["node"]: n for n in nodes}
    nccl, old = {}, {}
    for n in names:
        hca = ucx_envs[n]["UCX_NET_DEVICES"]  # <dev>:<port>, verified by RW402
        env = {"NCCL_IB_HCA": f"={hca}", "NCCL_IB_TC": ucx_envs[n]["UCX_IB_TRAFFIC_CLASS"]}
        netdev = (by_name.get(n) or {}).get("netdev")
        if netdev:
            env["NCCL_SOCKET_IFNAME"] = f"={netdev}"
        nccl[n] = env
        idx = ucx_envs[n].get("UCX_IB_GID_INDEX") or (by_name.get(n) or {}).get("gid_index")
        old[n] = {**env, **({"NCCL_IB_GID_INDEX": str(idx)} if idx is not None else {})}
    return nccl, old
