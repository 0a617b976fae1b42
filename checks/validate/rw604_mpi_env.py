"""RW604 mpi-env — a ready mpirun line and hostfile whose UCX variables match the verified cluster

What it checks
    From what the earlier stages verified on each node of a pair it builds the UCX environment a
    job needs: `UCX_NET_DEVICES=<dev>:1` (RW402's device), `UCX_IB_TRAFFIC_CLASS = roce_dscp << 2 | 2`
    (DSCP with ECT(0), 106 for DSCP 26; a configured class with the same DSCP is no contradiction)
    and `UCX_IB_SL = pfc_priority`; it prints a ready `mpirun` line and hostfile (details "mpirun",
    "hostfile"). `UCX_IB_GID_INDEX` is left to UCX (its default `auto` picks the RoCE v2 IPv4 GID of
    each node itself) unless something pins it — a node's `ucx_info -c` (ucx.conf, environment)
    or the site's `policy.mpi_env`: then the line carries each node's index (RW407), per node when
    they differ (MPMD `:`), and that difference warns. Without a pin a differing index is said,
    not warned (UCX's `auto` and NCCL ≥ 2.21.5 pick each node's GID themselves). It also prints the
    NCCL environment (details "nccl_env"):
    `NCCL_IB_HCA==<dev>:<port>`, `NCCL_IB_TC` = the same class and `NCCL_SOCKET_IFNAME==<netdev>` (the RoCE
    netdev for NCCL's bootstrap and out-of-band traffic); `NCCL_IB_GID_INDEX` only for
    NCCL older than 2.21.5 (details "nccl_env_before_2_21_5"), where its default 0 is the
    link-local RoCE v1 GID; from 2.21.5 the default -1 selects the RoCE v2 GID automatically.
    It fails when what a job gets on a node without these variables (`ucx_info -c`) sets one of
    them to something else — a device the node lacks, another GID index, another class.

Why it matters
    The wrong GID index (a link-local or RoCE v1 GID) or device sends MPI over TCP without a word
    (RW603); a traffic class that does not map to the lossless priority puts RDMA in a lossy queue,
    where incast drops packets (RW605). Seed 004: UCX_IB_TRAFFIC_CLASS=124 → DSCP 31 → priority 3.
    The class carries ECT(0) in its two ECN bits (DSCP 26 → 106):
    UCX's own RoCE v2 default is 106 (UCX 1.6+, `UCX_IB_TRAFFIC_CLASS` auto; UCX's source,
    src/uct/ib/base/ib_device.h `UCT_IB_DEFAULT_ROCEV2_DSCP 106`, https://github.com/openucx/ucx), and a
    not-ECT class
    (104) may keep switches from ECN-marking RoCE; a configured class with the same DSCP (104 for 106) is no
    contradiction. `UCX_IB_TRAFFIC_CLASS` / `UCX_IB_SL` are UCX's variables (`ucx_info -c` on ucx-utils
    1.13.1 lists them).

How to fix by hand
    Use the printed line (or put the variables into the site's module file / ucx.conf); remove or
    correct contradicting lines in /etc/ucx/ucx.conf, e.g.
        sed -i '/^UCX_IB_GID_INDEX=/d' /etc/ucx/ucx.conf
    When jobs pin the GID index and it differs between nodes, set it per node (MPMD `:` contexts,
    or a per-host environment file), or make the GID tables agree (RW407) — or stop pinning it.
    Sources: `UCX_IB_GID_INDEX=auto` as UCX's default — the real binary (Debian ucx-utils 1.13.1,
    `ucx_info -c`); `mpirun -x NAME=value`, `--hostfile`, MPMD `:` — Open MPI's mpirun(1) (Debian
    openmpi-bin); NCCL_IB_HCA (`=` for an exact match, `:<port>`), NCCL_IB_TC, NCCL_IB_GID_INDEX and
    its -1 default from 2.21.5 — NVIDIA NCCL User Guide, "Environment Variables",
    https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html (NCCL's source:
    `NCCL_PARAM(IbGidIndex, "IB_GID_INDEX", -1)`); `sed -i '/^…/d'` — GNU
    sed(1), the real binary (Debian sed).

Fix safety
    manual: the environment of users' jobs is the site's decision; the wizard prints it.
"""

import re

from roce_wizard.checklib.findings import bad, good
from roce_wizard.checklib.nccl import nccl_environment
from roce_wizard.checklib.pairs import at_fault, lacking, mpi_environment, mpirun_line, perftest_tclass
from roce_wizard.model import Check, Facts, Finding, Policy, Severity, Stage, Status, TargetKind

CHECK = Check(
    code="RW604",
    slug="mpi-env",
    title="MPI/UCX environment for jobs",
    stage=Stage.VALIDATE,
    target=(TargetKind.GUEST, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=("ucx_config",),
    pair_probes=("mpi_env",),
    depends_on=("RW402", "RW407"),
    fix_hint="run jobs with the printed UCX variables; remove contradicting lines from /etc/ucx/ucx.conf",
)

UNSET = ("", "auto", "all")


def _same_dscp(have: str, want: str) -> bool:
    """Two traffic classes with the same DSCP (they differ in the ECN bits only: 104 and 106)."""
    try:
        return int(have, 0) >> 2 == int(want, 0) >> 2
    except ValueError:
        return False


def _contradictions(config: dict | None, env: dict[str, str]) -> list[str]:
    out = []
    for key, want in env.items():
        have = (config or {}).get(key)
        if have is None or have.strip().lower() in UNSET or have == want:
            continue
        if key == "UCX_IB_TRAFFIC_CLASS" and _same_dscp(have.strip(), want):
            continue
        out.append(f"{key}={have} (the cluster needs {want})")
    return out


def _policy_only(facts: Facts, policy: Policy) -> list[Finding]:
    """analyze: a pasted `ucx_info -c` judged against the policy's traffic class and service level."""
    config = facts.need("ucx_config").get("config", {})
    want = {"UCX_IB_TRAFFIC_CLASS": str(perftest_tclass(policy)), "UCX_IB_SL": str(policy.pfc_priority)}
    wrong = _contradictions(config, want)
    expected = ", ".join(f"{k}={v} (or unset)" for k, v in want.items())
    if wrong:
        return [bad(CHECK, facts, "UCX config contradicts the policy: " + "; ".join(wrong), observed=wrong,
                    expected=expected, fix="remove or correct these lines in /etc/ucx/ucx.conf or the job environment")]
    return [good(CHECK, facts, "UCX config sets no traffic class or service level against the policy "
                 "(device and GID index need the cluster: run doctor)", observed=config.get("UCX_IB_TRAFFIC_CLASS"),
                 expected=expected)]


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    pair = facts.get("validate_pair")
    if not pair:
        return _policy_only(facts, policy)
    nodes = pair.get("nodes", [])
    problems = [f"{n['node']}: {p}" for n in nodes for p in n.get("problems", [])]
    envs = facts.get("mpi_env") or mpi_environment(nodes, policy)
    names = [n["node"] for n in nodes]
    hostfile = "".join(f"{n} slots=1\n" for n in names)
    line = mpirun_line(names, [envs[n] for n in names], "./your_app")
    same = all(envs[n] == envs[names[0]] for n in names)
    if same:  # the everyday form: the hostfile, one -x set
        line = line.replace(f"--host {','.join(names)}", "--hostfile hostfile")
    details = {"mpirun": line, "hostfile": hostfile, "env": envs,
               "table": {"columns": ["node", *envs[names[0]].keys()],
                         "rows": [[n, *envs[n].values()] for n in names]}}
    if problems:
        return [at_fault(bad(CHECK, facts, "cannot give jobs a working UCX environment: " + "; ".join(problems),
                             observed=problems, expected="an RDMA device and a RoCE v2 IPv4 GID on every node",
                             details=details, fix="fix the node first: RW402 (device), RW406/RW407 (RoCE v2 IPv4 GID)"),
                         lacking(pair))]
    configs = facts.get("ucx_config") or {}
    findings = []
    for n in names:
        wrong = _contradictions(configs.get(n), envs[n])
        if wrong:
            f = bad(CHECK, facts, f"a job on {n} without the wizard's variables gets " + "; ".join(wrong),
                    observed=wrong, expected=envs[n], details=details,
                    fix=(f"on {n}: remove or correct these lines in /etc/ucx/ucx.conf (or the module "
                         f"file / profile that sets them); jobs should carry: {line}"))
            findings.append(at_fault(f, n))  # the node whose configuration contradicts
    if findings:
        return findings
    gids = {n: envs[n].get("UCX_IB_GID_INDEX") for n in names}
    pins = _pins(configs, names, policy)
    printed = envs if pins else {n: {k: v for k, v in envs[n].items() if k != "UCX_IB_GID_INDEX"} for n in names}
    line = mpirun_line(names, [printed[n] for n in names], "./your_app")
    same = all(printed[n] == printed[names[0]] for n in names)
    if same:
        line = line.replace(f"--host {','.join(names)}", "--hostfile hostfile")
    nccl, nccl_old = _nccl(names, nodes, envs)
    details.update(mpirun=line, env=printed, nccl_env=nccl, nccl_env_before_2_21_5=nccl_old,
                   table={"columns": ["node", *printed[names[0]].keys()],
                          "rows": [[n, *printed[n].values()] for n in names]})
    unread = [n for n in names if configs.get(n) is None]
    note = f" (ucx_info -c not read on {', '.join(unread)})" if unread else ""
    nccl_note = ("; NCCL: " + " ".join(f"{k}={v}" for k, v in nccl[names[0]].items())
                 + " (NCCL < 2.21.5: also NCCL_IB_GID_INDEX=" + ",".join(f"{n}:{gids[n]}" for n in names) + ")")
    differ = len(set(gids.values())) > 1
    listing = ", ".join(f"{k}={v}" for k, v in gids.items())
    if differ and pins:
        f = good(CHECK, facts, f"jobs pin the GID index ({'; '.join(pins)}) and it differs per node ({listing}): "
                 f"use the MPMD line in the details, or stop pinning it (UCX_IB_GID_INDEX=auto){note}",
                 observed=printed, expected="one environment per node", details=details)
        f.status = Status.WARN
        f.fix = line + "  # or make the GID tables agree (RW407), or leave UCX_IB_GID_INDEX unset (auto)"
        return [f]
    auto = ("" if pins else "; the RoCE v2 GID index is left to UCX (auto)"
            + (f" — it differs per node ({listing}), which matters only to a job that pins it" if differ else ""))
    return [good(CHECK, facts, f"jobs get RDMA with: {line}{auto}{nccl_note}{note}", observed=printed,
                 expected="the variables shown", details=details)]


def _pins(configs: dict, names: list[str], policy: Policy) -> list[str]:
    """Where jobs get a fixed GID index: a node's ucx_info -c, or the site's policy.mpi_env."""
    pins = []
    for n in names:
        value = ((configs.get(n) or {}).get("UCX_IB_GID_INDEX") or "").strip()
        if value.isdigit():
            pins.append(f"{n}: UCX_IB_GID_INDEX={value}")
    for key in ("UCX_IB_GID_INDEX", "NCCL_IB_GID_INDEX"):
        m = re.search(rf"(?:^|\s){key}=(\d+)", policy.mpi_env or "")
        if m:
            pins.append(f"policy.mpi_env {key}={m.group(1)}")
    return pins


def _nccl(names: list[str], nodes: list[dict], envs: dict) -> tuple[dict, dict]:
    """NCCL's variables per node; NCCL_IB_GID_INDEX only in the set for NCCL < 2.21.5 (NCCL User Guide)."""
    return nccl_environment(names, nodes, envs)
