"""RW002 tools-present — the tools this stage's checks run are installed

What it checks
    `command -v` for every tool the target's checks run (the `tool_presence` probe):
    ESXi: /opt/mellanox/bin/{mst,mlxconfig,mlxfwmanager,flint} (MFT + NMST VIBs);
    Linux guest: ibv_devinfo, rdma / ibdev2netdev, ip, ethtool, show_gids, cma_roce_mode, ofed_info;
    bare-metal Linux: the same plus mlnx_qos and mlxconfig.
    Fail when a tool without which a check cannot judge at all is missing (mlxconfig and mst on
    ESXi; ibv_devinfo, ip, ethtool, both of rdma/ibdev2netdev; on bare metal also mlnx_qos and
    mlxconfig); warn when only helpers are missing (mlxfwmanager/flint: RW203 cannot judge). Missing
    ofed_info, show_gids or cma_roce_mode (all MLNX_OFED's) is no finding: inbox rdma-core is accepted
    (RW401 says which stack is there) and RW407/RW408 then read the same facts from the kernel's files
    (sysfs gid_attrs, rdma_cm's configfs default_roce_mode; probes.py, parsers/rdma/sysfs.py).

Why it matters
    A missing tool is a finding, never a crash: the checks that need it report "could not run"
    and this check names what provides the tool.

How to fix by hand
    ESXi (MFT + NMST, from the shared datastore; seed 000), then reboot the host:
        esxcli software vib install -v /vmfs/volumes/<datastore>/mft-<version>.vib -f
        esxcli software vib install -v /vmfs/volumes/<datastore>/nmst-<version>.vib -f
    Linux, MLNX_OFED (provides every tool listed, incl. show_gids, ibdev2netdev, cma_roce_mode, mlnx_qos):
        ./mlnxofedinstall --force --add-kernel-support; /etc/init.d/openibd force-restart
    Linux, inbox stack (Debian / Ubuntu; on RHEL the same tools from its own packages with dnf):
        apt install rdma-core ibverbs-utils infiniband-diags perftest iproute2 ethtool
    show_gids, ibdev2netdev, cma_roce_mode and mlnx_qos are not in Debian: MLNX_OFED, or NVIDIA's
    mlnx-tools. mlxconfig on bare metal: NVIDIA MFT, or mstflint's mstconfig (Debian package mstflint).
    Sources: `esxcli software vib install -v … -f` — seed 000 (`esxcli software vib install -v mft-xxx.x86_64.vib
        -f`, the same for nmst) and corpus esxi_vib_install/nmst-4-18-install-result-reboot-required.txt;
        `./mlnxofedinstall --force --add-kernel-support` — "NVIDIA MLNX_OFED Documentation v24.07-0.6.1.0",
        "Installing MLNX_OFED", https://docs.nvidia.com/networking/display/mlnxofedv24070610/installing+mlnx_ofed;
        `/etc/init.d/openibd force-restart` — seed 000 (`[guest OS]$ /etc/init.d/openibd force-restart`);
        `apt install …` — the Debian 12 package names, checked with `apt-cache policy` (rdma-core, ibverbs-utils,
        infiniband-diags, perftest, iproute2, ethtool; Debian has no mlnx-tools package: show_gids and friends
        come from MLNX_OFED or NVIDIA's mlnx-tools, https://raw.githubusercontent.com/Mellanox/mlnx-tools/master/
        sbin/show_gids); the RHEL package names were not checked against a RHEL repository, so no dnf line is
        given; the probe's `command -v` — the POSIX shell builtin (Debian dash/bash).

Fix safety
    manual: installs software; the MFT/NMST VIBs need an ESXi host reboot, MLNX_OFED a driver
    restart or reboot (RW201 / RW401 plan those).
"""

from roce_wizard.checklib.findings import bad, excerpt, good
from roce_wizard.model import Check, Facts, Finding, Policy, Severity, Stage, Status, TargetKind

CHECK = Check(
    code="RW002",
    slug="tools-present",
    title="Tools present",
    stage=Stage.PREFLIGHT,
    target=(TargetKind.ESXI, TargetKind.GUEST, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=("tool_presence",),
    # the engine ignores a dependency that is not selected/applicable on the target's kind
    depends_on=("RW201", "RW401"),
    fix_hint="install MFT+NMST VIBs (ESXi) or MLNX_OFED / rdma-core + mlnx-tools (Linux)",
)

_OFED = "MLNX_OFED or the mlnx-tools package"
# tool -> (what provides it, which checks need it)
PROVIDERS: dict[str, tuple[str, str]] = {
    "mst": ("MFT + NMST VIBs (mft, nmst)", "RW202"),
    "mlxconfig": ("MFT + NMST VIBs (mft, nmst)", "RW205-RW208, RW214"),
    "mlxfwmanager": ("MFT VIB (mft)", "RW203"),
    "flint": ("MFT VIB (mft)", "RW203"),
    "ibv_devinfo": ("rdma-core (libibverbs-utils / ibverbs-utils) or MLNX_OFED", "RW401-RW404"),
    "rdma": ("iproute2", "RW402"),
    "ibdev2netdev": (_OFED, "RW402"),
    "ip": ("iproute2", "RW405, RW406"),
    "ethtool": ("ethtool", "RW410"),
    "show_gids": (_OFED, "RW407"),
    "cma_roce_mode": (_OFED, "RW408"),
    "ofed_info": ("MLNX_OFED", "RW401"),
    "mlnx_qos": (_OFED, "RW409"),
    "ib_send_bw": ("perftest", "RW601"),
    "ib_send_lat": ("perftest", "RW602"),
    "ib_write_bw": ("perftest", "RW605"),
    "ibstat": ("infiniband-diags", "-"),
}
_MLX_PKG_TOOLS = {"ibdev2netdev", "show_gids", "cma_roce_mode", "mlnx_qos", "ofed_info"}


def _provider(tool: str, kind: TargetKind) -> str:
    if kind is not TargetKind.ESXI and tool in ("mlxconfig", "mst", "mlxfwmanager", "flint"):
        return "NVIDIA MFT (mstflint's mstconfig/mstflint are the open-source equivalents)"
    return PROVIDERS.get(tool, ("?", "?"))[0]


def _base(tool: str) -> str:
    return tool.rstrip("/").rsplit("/", 1)[-1]


def _kind(facts: Facts, names: list[str]) -> TargetKind:
    if facts.target is not None:
        return facts.target.kind
    if any(n.startswith("/opt/mellanox/") for n in names):
        return TargetKind.ESXI
    return TargetKind.LINUX if any(_base(n) in ("mlnx_qos", "mlxconfig") for n in names) else TargetKind.GUEST


def _essential(kind: TargetKind, missing: set[str]) -> set[str]:
    if kind is TargetKind.ESXI:
        return missing & {"mst", "mlxconfig"}
    need = {"ibv_devinfo", "ip", "ethtool"} | ({"mlnx_qos", "mlxconfig"} if kind is TargetKind.LINUX else set())
    out = missing & need
    if {"rdma", "ibdev2netdev"} <= missing:
        out |= {"rdma", "ibdev2netdev"}
    return out


def _fix(kind: TargetKind, missing: set[str], policy: Policy) -> str:
    if kind is TargetKind.ESXI:
        ds = policy.vib_datastore.rstrip("/")
        return (f"esxcli software vib install -v {ds}/mft-<version>.vib -f && "
                f"esxcli software vib install -v {ds}/nmst-<version>.vib -f  # then reboot the host")
    steps = []
    if missing & (_MLX_PKG_TOOLS | {"ibv_devinfo"}):
        steps.append("MLNX_OFED: ./mlnxofedinstall --force --add-kernel-support && /etc/init.d/openibd force-restart"
                     "  (inbox alternative: dnf install rdma-core libibverbs-utils infiniband-diags perftest mlnx-tools"
                     " | apt install rdma-core ibverbs-utils infiniband-diags perftest mlnx-tools)")
    pkgs = sorted({"iproute2" if t in ("ip", "rdma") else "ethtool" for t in missing & {"ip", "rdma", "ethtool"}})
    if pkgs:
        steps.append("install " + " ".join(pkgs) + " (RHEL: iproute)")
    if "mlxconfig" in missing or "mst" in missing:
        steps.append("install NVIDIA MFT (./install.sh from the mft tarball) or use mstflint's mstconfig")
    return "; ".join(steps) or "install the missing tools"


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    tp = facts.need("tool_presence") or {}
    present = dict(tp.get("present") or {})
    missing_names = list(tp.get("missing") or [])
    kind = _kind(facts, [*present, *missing_names])
    missing = {_base(t) for t in missing_names}
    raw = facts.raw.get("tool_presence")
    observed = {"present": sorted(_base(t) for t in present), "missing": sorted(missing)}
    essential = _essential(kind, missing)
    # MLNX_OFED's ofed_info / show_gids / cma_roce_mode missing is the inbox stack: RW401 reports it, and
    # RW407/RW408 read sysfs/configfs instead (probes.py), nothing to fix here
    ofed_only = {"ofed_info", "show_gids", "cma_roce_mode"}
    helpers = missing - essential - (ofed_only if kind is not TargetKind.ESXI else set())
    if kind is TargetKind.LINUX:
        helpers -= {"mst"}  # bare-metal mlxconfig takes the PCI address; mst is optional there
    if not essential and not helpers:
        inbox = sorted(missing & ofed_only) if kind is not TargetKind.ESXI else []
        note = (f" (no {', '.join(inbox)}: inbox rdma-core, see RW401; GIDs and the rdma_cm mode are read from "
                "sysfs/configfs)") if inbox else ""
        return [good(CHECK, facts, f"all {len(present)} tools present{note}", observed=observed,
                     expected="every tool the stage needs", excerpt=excerpt(raw, r"^missing"))]

    def describe(tools: set[str]) -> str:
        return ", ".join(f"{t} ({_provider(t, kind)}; needed by {PROVIDERS.get(t, ('?', '?'))[1]})" for t in sorted(tools))

    ev = excerpt(raw, r"^missing")
    fix = _fix(kind, essential | helpers, policy)
    if essential:
        summary = f"missing tools: {describe(essential)}"
        if helpers:
            summary += f"; also missing: {', '.join(sorted(helpers))}"
        return [bad(CHECK, facts, summary, observed=observed, expected="every tool the stage needs",
                    excerpt=ev, fix=fix, details={"missing": sorted(missing)})]
    finding = bad(CHECK, facts, f"helper tools missing, some checks cannot judge: {describe(helpers)}",
                  observed=observed, expected="every tool the stage needs", excerpt=ev, fix=fix,
                  details={"missing": sorted(missing)})
    finding.status = Status.WARN
    return [finding]
