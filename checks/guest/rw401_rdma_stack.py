"""RW401 rdma-stack — an RDMA user/kernel stack is installed (MLNX_OFED or inbox rdma-core)

What it checks
    `ofed_info -s` prints the MLNX_OFED version (e.g. `MLNX_OFED_LINUX-5.4-3.0.3.0:`, or
    `OFED-internal-23.07-0.5.0:` on DOCA-era installs) → pass. Without ofed_info, the distribution's
    inbox rdma-core is accepted when `ibv_devinfo` exists (tool presence, or its output was read)
    → pass with a note. Neither → fail.

Why it matters
    Without the verbs stack there is no RDMA device in the guest at all: no ibv_devinfo, no GID
    table, and MPI/UCX silently fall back to TCP. Inbox rdma-core works for RoCE v2 but lacks the
    MLNX_OFED helpers (show_gids, ibdev2netdev, cma_roce_mode, mlnx_qos) unless mlnx-tools is
    installed; the seed 000 procedure installs MLNX_OFED.

How to fix by hand
        tar xf MLNX_OFED_LINUX-<version>-<distro>.tgz && cd MLNX_OFED_LINUX-<version>-<distro>
        ./mlnxofedinstall --force --add-kernel-support
        /etc/init.d/openibd force-restart        # then reboot the VM
    Inbox alternative (Debian / Ubuntu; on RHEL the distribution's rdma-core, verbs utilities and
    perftest packages):
        apt install rdma-core ibverbs-utils infiniband-diags perftest
    Sources: `./mlnxofedinstall --force --add-kernel-support` — "NVIDIA MLNX_OFED Documentation v24.07-0.6.1.0",
        "Installing MLNX_OFED", https://docs.nvidia.com/networking/display/mlnxofedv24070610/installing+mlnx_ofed;
        `/etc/init.d/openibd force-restart` — seed 000 (`[guest OS]$ /etc/init.d/openibd force-restart`);
        `tar xf` — tar(1), the real binary (Debian tar); `apt install …` — the Debian 12 package names, checked
        with `apt-cache policy` (Debian has no mlnx-tools package); the reads `ofed_info -s` — corpus ofed_info/*,
        `ibv_devinfo` — the real binary (Debian ibverbs-utils). No source was found for the RHEL
        kernel-modules-extra line this check used to print and run first: it is gone (mlnxofedinstall names the
        packages it misses).

Fix safety
    disruptive: installs kernel modules and restarts the RDMA driver; reboot the VM afterwards (a
    bare-metal host: reboot the host). `roce-wizard fix` installs MLNX_OFED from the bundle the
    inventory names (`options: {ofed_bundle: /path/MLNX_OFED_LINUX-<ver>-<distro>.tgz}` on the
    target, or the unpacked directory): kernel-modules-extra on RHEL-family guests, unpack,
    `mlnxofedinstall --force --add-kernel-support`, `/etc/init.d/openibd force-restart`. Without
    `ofed_bundle` the plan is manual (shown, not run).
"""

import re

from roce_wizard.checklib.findings import bad, excerpt, good
from roce_wizard.model import (
    Check,
    Evidence,
    Facts,
    Finding,
    FixPlan,
    Policy,
    RebootKind,
    Safety,
    Severity,
    Stage,
    Status,
    Step,
    TargetKind,
)
from roce_wizard.probes import safe

CHECK = Check(
    code="RW401",
    slug="rdma-stack",
    title="RDMA stack installed",
    stage=Stage.GUEST,
    target=(TargetKind.GUEST, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=(),
    optional_probes=("ofed_info", "tool_presence", "ibv_devinfo"),
    reboot=RebootKind.VM_REBOOT,
    fix_hint="./mlnxofedinstall --force --add-kernel-support; /etc/init.d/openibd force-restart; reboot",
)

FIX = ("tar xf MLNX_OFED_LINUX-<version>-<distro>.tgz && cd MLNX_OFED_LINUX-<version>-<distro> && "
       "./mlnxofedinstall --force --add-kernel-support  # then /etc/init.d/openibd force-restart and reboot the VM "
       "(inbox alternative: the distribution's rdma-core, its verbs utilities and perftest, e.g. Debian: "
       "apt install rdma-core ibverbs-utils infiniband-diags perftest)")


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    ofed = facts.get("ofed_info") or {}
    tools = facts.get("tool_presence")
    present = set((tools or {}).get("present") or {})
    missing = set((tools or {}).get("missing") or [])
    if ofed.get("version"):
        flavor = ofed.get("flavor") or "MLNX_OFED"
        return [good(CHECK, facts, f"{flavor} {ofed['version']} installed", observed=ofed.get("raw") or ofed["version"],
                     expected="MLNX_OFED or rdma-core", probes=("ofed_info",),
                     excerpt=excerpt(facts.raw.get("ofed_info"), r"OFED"), details={"stack": "mlnx_ofed", **ofed})]
    has_devinfo = "ibv_devinfo" in present or facts.has("ibv_devinfo")
    if has_devinfo:
        probe = "tool_presence" if "ibv_devinfo" in present else "ibv_devinfo"
        ofed_absent = "ofed_info" in missing or (
            facts.failures.get("ofed_info") is not None and facts.failures["ofed_info"].tool_missing)
        if not ofed_absent:  # analyze of an ibv_devinfo paste: a stack is there, which one is unknown
            return [good(CHECK, facts, "an RDMA stack is installed (ibv_devinfo ran); MLNX_OFED or inbox rdma-core "
                         "is unknown without `ofed_info -s`", observed="ibv_devinfo", expected="MLNX_OFED or rdma-core",
                         probes=(probe,), excerpt=excerpt(facts.raw.get(probe), r"hca_id"), details={"stack": None})]
        return [good(CHECK, facts, "inbox rdma-core (ibv_devinfo present, no MLNX_OFED): accepted; "
                     "show_gids / cma_roce_mode / mlnx_qos need MLNX_OFED or mlnx-tools",
                     observed="rdma-core", expected="MLNX_OFED or rdma-core", probes=(probe,),
                     excerpt=excerpt(facts.raw.get(probe), r"ibv_devinfo|hca_id"), details={"stack": "rdma-core"})]
    known_missing = "ibv_devinfo" in missing or (
        facts.failures.get("ibv_devinfo") is not None and facts.failures["ibv_devinfo"].tool_missing
    )
    if known_missing:
        return [bad(CHECK, facts, "no RDMA stack: neither ofed_info (MLNX_OFED) nor ibv_devinfo (rdma-core) is installed",
                    observed={"ofed_info": "missing", "ibv_devinfo": "missing"}, expected="MLNX_OFED or rdma-core",
                    probes=("tool_presence",), excerpt=excerpt(facts.raw.get("tool_presence"), r"ofed_info|ibv_devinfo"),
                    fix=FIX)]
    reasons = "; ".join(f"{p}: {f.reason}" for p, f in facts.failures.items() if p in CHECK.optional_probes)
    return [Finding(check=CHECK.code, status=Status.ERROR, target=facts.target_name,
                    summary="cannot tell which RDMA stack is installed" + (f" ({reasons})" if reasons else ""),
                    expected="MLNX_OFED or rdma-core", evidence=[Evidence(probe="ofed_info")],
                    fix="run `ofed_info -s` and `command -v ibv_devinfo` on the target")]


_DIR = re.compile(r"^/[A-Za-z0-9_.+/-]*$")
_BUNDLE = re.compile(r"^/[A-Za-z0-9_.+/-]*MLNX_OFED_LINUX-[A-Za-z0-9_.+-]+?(?:\.tgz|\.tar\.gz)?/?$")


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """Install MLNX_OFED from the inventory's bundle, restart openibd; reboot the VM (host). None when a
    stack is there (or which one cannot be told)."""
    t = facts.target
    bare = t is not None and t.kind is TargetKind.LINUX
    reboot = RebootKind.HOST if bare else RebootKind.VM_REBOOT
    why = ("the new kernel modules replace the running RDMA stack: reboot so every service starts on it")
    bundle = str((t.options or {}).get("ofed_bundle") or "") if t is not None else ""
    if not bundle:
        return FixPlan(CHECK.code, facts.target_name, "install MLNX_OFED (the inventory names no bundle: "
                       "set options.ofed_bundle on the target to run this)",
                       steps=(Step("unpack the bundle", "tar xzf MLNX_OFED_LINUX-<version>-<distro>.tgz"),
                              Step("install it", "cd MLNX_OFED_LINUX-<version>-<distro> && "
                                   "./mlnxofedinstall --force --add-kernel-support"),
                              Step("load the new stack", "/etc/init.d/openibd force-restart")),
                       safety=Safety.MANUAL, reboot=reboot, reboot_reason=why)
    path = bundle.rstrip("/")
    is_tgz = path.endswith((".tgz", ".tar.gz"))
    directory = re.sub(r"\.(tgz|tar\.gz)$", "", path)
    parent = directory.rsplit("/", 1)[0] or "/"
    quoted = safe(path, _BUNDLE)
    # no step installs distribution packages first: no source was found for the RHEL kernel-modules-extra
    # line this plan used to run (issue 12 item 2); mlnxofedinstall names what it misses and stops
    steps: list[Step] = []
    if is_tgz:
        steps.append(Step(f"unpack {path}", f"tar -xzf {quoted} -C {safe(parent, _DIR)}", after=directory))
    steps += [Step(f"install MLNX_OFED from {directory}",
                   f"cd {safe(directory, _BUNDLE)} && ./mlnxofedinstall --force --add-kernel-support",
                   before="no RDMA stack", after=directory.rsplit("/", 1)[-1]),
              Step("load the new RDMA stack now", "/etc/init.d/openibd force-restart")]
    return FixPlan(CHECK.code, facts.target_name, f"install MLNX_OFED from {path} and load it",
                   steps=tuple(steps), safety=Safety.DISRUPTIVE, reboot=reboot, reboot_reason=why)

