"""RW208 num-vfs-covers-max-vfs — firmware NUM_OF_VFS covers the VFs the driver is asked for

What it checks
    The RoCE card's firmware `NUM_OF_VFS` (mlxconfig, Next Boot) against this card's entries in the
    nmlx5_core `max_vfs` module parameter, by `policy.num_of_vfs_rule`:
    - `sum_plus_one` (default; seed 000's and the user's rule): NUM_OF_VFS > the SUM of the card's
      entries (seed 000: 16 > 8+7);
    - `per_port` (NVIDIA's semantics): NUM_OF_VFS ≥ EVERY entry (it is a per-PF ceiling).
    An entry above NUM_OF_VFS fails under both rules (that port gets fewer VFs than asked). Between
    the two (every entry covered, the sum not exceeded) `sum_plus_one` fails and the summary says
    that the firmware already covers every port and that the site rule asks for more. Every finding
    names the rule that judged (observed `rule`, `covers_every_port`).
    `max_vfs` is one positional list for every nmlx5 port on the host, in PCI address order of the
    nmlx5_core vmnics in `esxcli network nic list` (seed 000: ConnectX-4 Lx at 1a:00.0/.1 and
    ConnectX-5 at 3b:00.0/.1 -> `max_vfs=0,0,8,7`; the ConnectX-5's entries are 8 and 7). SRIOV_EN
    must be True whenever VFs are asked for (NUM_OF_VFS can be set while SRIOV_EN is False). With an
    inventory, the card's `max_vfs` entries must also equal roce.vfs (VFs wanted per RoCE vmnic).
    Without a nic list the card's positions are unknown: every entry is taken as the card's, and
    the summary says so.

Why it matters
    NUM_OF_VFS is "the total number of VFs that can be supported" (mlxconfig's parameter text), a
    ceiling per PF: a ConnectX-4 Lx with NUM_OF_VFS=8 shows `sriov_totalvfs` 8 on its second port
    (corpus sriov_numvfs/cx4lx-sriov-totalvfs-8.txt): a port asked for more VFs than that comes up with
    fewer or none
    and vSphere shows SR-IOV as not active. Seed 000 and the site's design card keep one VF's worth
    more than the sum — the default rule. A max_vfs entry on the wrong position (a card moved to
    another slot shifts the list) gives VFs to the service NIC instead of the RoCE ports.

How to fix by hand
    Raise the firmware ceiling (then reboot the host):
        /opt/mellanox/bin/mlxconfig -d <mst device> -y set SRIOV_EN=1 NUM_OF_VFS=<sum + 1, or the
        largest entry under per_port>
    never above the card's maximum: `mlxconfig query` does not print it and mlxconfig refuses a
    larger value (an expert reviewer reports "value is larger than maximum allowed N"; no capture of
    it was found); the tool does not know it
    and says so instead of inventing one. Or lower / correct max_vfs. `parameters set` REPLACES the
    whole parameter string, so read it first (`esxcli system module parameters list -m nmlx5_core`)
    and write every parameter back:
        esxcli system module parameters set -m nmlx5_core -p "<all current params, max_vfs corrected>"
    then reboot the host.
    Sources: `mlxconfig -d <dev> query` / `-y set` — seed 000 (`mlxconfig -d mt4119_pciconf1 -y set
    SRIOV_EN=1 NUM_OF_VFS=16`) and the real captures
    corpus mlxconfig_query/cx4lx-mcx4121a-full-next-boot-trailing-pad.txt and
    mlxconfig_set/cx5-ocp3-next-boot-new-apply-prompt-reboot.txt (`set SRIOV_EN=1 NUM_OF_VFS=8`);
    `esxcli system module parameters list|set -m nmlx5_core` and `esxcli network nic list` — seed 000
    (`parameters set -m nmlx5_core -p "pfctx=0x08 …"`) and corpus esxi_nic_list/*;
    NUM_OF_VFS per PF — mlxconfig's parameter text ("The total number of VFs that can be supported",
    also in mstflint's tools layouts) and corpus sriov_numvfs/cx4lx-sriov-totalvfs-8.txt.

Fix safety
    disruptive: firmware configuration and driver parameters; both take effect at the next host
    reboot. A params string written without the other keys silently drops PFC, trust and ECN.
    The tool raises NUM_OF_VFS to what the rule needs (Σ+1 under sum_plus_one, the largest entry
    under per_port; and sets SRIOV_EN=1 when off) in ONE `mlxconfig -y set`, and puts the
    inventory's VF counts into max_vfs by writing the one desired nmlx5_core string (every other key
    kept); it never lowers max_vfs. Needs RW201 and RW202. Without a nic list the max_vfs positions
    are unknown and only the firmware part is planned.
"""

import re

from roce_wizard.checklib.esxi import (
    MLXCONFIG,
    desired_params,
    format_options_string,
    merged_params_fix,
    mlx_device_name,
    mlx_value,
    mlxconfig_devices,
    mlxconfig_set_step,
    module_params,
    nmlx5_vmnics,
    params_fix_plan,
    params_set_command,
    parse_int_list,
    shown_mlx_device,
)
from roce_wizard.checklib.findings import bad, excerpt, good, skip
from roce_wizard.commands.handfix import MST_DEVICE, NMLX5_PARAMS, pasteable
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
    TargetKind,
)

CHECK = Check(
    code="RW208",
    slug="num-vfs-covers-max-vfs",
    title="NUM_OF_VFS covers max_vfs",
    stage=Stage.ESXI,
    target=TargetKind.ESXI,
    severity=Severity.FAIL,
    probes=("mlxconfig_query", "esxi_module_params"),
    optional_probes=("esxi_nic_list", "esxi_esxcfg_nics", "mst_status"),
    depends_on=("RW201", "RW202", "RW206"),  # SRIOV_EN off is RW206's to report
    reboot=RebootKind.HOST,
    fix_hint="mlxconfig set NUM_OF_VFS=<sum of max_vfs + 1> (or lower max_vfs, full params string), reboot",
)


def _card(pci: str | None) -> str | None:
    """'0000:3b:00.1' / '3b:00.0' -> '3b:00' (the adapter: bus and device, any function)."""
    if not pci:
        return None
    m = re.search(r"([0-9a-fA-F]{2,3}):([0-9a-fA-F]{2})\.[0-9a-fA-F]$", pci.strip())
    return f"{int(m.group(1), 16):02x}:{m.group(2).lower()}" if m else None


def _norm(text: str | None) -> str:
    return re.sub(r"[^a-z0-9]", "", (text or "").lower())


def _device_card(facts: Facts, device: dict, nics: list[dict] | None) -> tuple[str | None, str]:
    """The PCI bus:device of the card this mlxconfig device is, and how it was found."""
    target = facts.target
    if target is not None:  # doctor queries only the RoCE card
        if target.roce.pf_pci:
            return _card(target.roce.pf_pci), "inventory roce.pf_pci"
        by_name = {n.get("name"): n for n in nics or []}
        for vmnic in target.roce.vmnics:
            if _card((by_name.get(vmnic) or {}).get("pci")):
                return _card(by_name[vmnic]["pci"]), "inventory roce.vmnics"
    dev = (device.get("device") or "").rsplit("/", 1)[-1]
    for m in (facts.get("mst_status") or {}).get("devices", []):
        if dev and (m.get("mst") or "").rsplit("/", 1)[-1] == dev and _card(m.get("pci")):
            return _card(m["pci"]), "mst status"
    if nics:
        cards = {_card(n.get("pci")) for n in nics} - {None}
        dtype = _norm(device.get("device_type"))
        if dtype:
            same = {_card(n.get("pci")) for n in nics
                    if _norm((re.findall(r"\[([^\]]+)\]", n.get("description") or "") or [""])[-1]) == dtype}
            same.discard(None)
            if len(same) == 1:
                return same.pop(), "device type in nic list"
        if len(cards) == 1:
            return next(iter(cards)), "the only nmlx5 card"
    return None, ""


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    options = module_params(facts)
    max_vfs_raw = options.get("max_vfs")
    max_vfs = parse_int_list(max_vfs_raw) or []
    nics = nmlx5_vmnics(facts)
    raw_mlx = facts.raw.get("mlxconfig_query")
    raw_mp = facts.raw.get("esxi_module_params")

    def evidence() -> list[Evidence]:
        ev = [facts.evidence("mlxconfig_query", excerpt(raw_mlx, r"NUM_OF_VFS|SRIOV_EN")),
              facts.evidence("esxi_module_params", excerpt(raw_mp, r"max_vfs"))]
        for kind in ("esxi_nic_list", "esxi_esxcfg_nics"):
            if facts.has(kind):
                ev.append(facts.evidence(kind, excerpt(facts.raw.get(kind), r"nmlx5")))
        return ev

    findings: list[Finding] = []
    for device in mlxconfig_devices(facts):
        num = mlx_value(device, "NUM_OF_VFS", "next_boot")
        sriov = mlx_value(device, "SRIOV_EN", "next_boot")
        if num is None and sriov is None:
            continue  # an egrep'd query without the VF keys
        name = mlx_device_name(facts, device)
        label = device.get("device") or device.get("device_type") or name
        card, how = _device_card(facts, device, nics)
        positions = [i for i, n in enumerate(nics or []) if card and _card(n.get("pci")) == card]
        if positions:
            entries = {nics[i]["name"]: (max_vfs[i] if i < len(max_vfs) else 0) for i in positions}
            total = sum(entries.values())
            scope = f"this card's max_vfs entries ({', '.join(f'{k}={v}' for k, v in entries.items())})"
        else:
            entries = {}
            total = sum(max_vfs)
            why = "no nic list" if nics is None else "cannot tell which entries are this card's"
            scope = f"the sum of ALL max_vfs entries ({max_vfs_raw or 'unset'}; {why})"

        # what the inventory wants on this host's RoCE vmnics
        wanted: dict[str, int] = {}
        target = facts.target
        if target is not None and target.roce.vfs and target.roce.vmnics and nics is not None:
            wanted = dict(zip(target.roce.vmnics, target.roce.vfs))
        order = [n.get("name") for n in nics or []]
        unknown = [v for v in wanted if v not in order]
        new_list = list(max_vfs) + [0] * max(0, len(order) - len(max_vfs))
        for vmnic, want in wanted.items():
            if vmnic in order:
                new_list[order.index(vmnic)] = want
        have = {v: (max_vfs[order.index(v)] if order.index(v) < len(max_vfs) else None)
                for v in wanted if v in order}
        differ = {v: (have[v], wanted[v]) for v in have if (have[v] or 0) != wanted[v]}
        total_wanted = sum(new_list[i] for i in positions) if positions else total
        # the inventory wants VFs but there is no nic list: positions unknown, the sum is still known
        blind: dict[str, int] = {}
        if target is not None and target.roce.vfs and nics is None:
            total_wanted = max(total_wanted, sum(target.roce.vfs))
            if not max_vfs and sum(target.roce.vfs):
                blind = dict(zip(target.roce.vmnics, target.roce.vfs)) or {"RoCE ports": sum(target.roce.vfs)}

        rule = policy.num_of_vfs_rule
        card_values = list(entries.values()) if positions else list(max_vfs)
        largest = max(card_values, default=0)
        wanted_values = [new_list[i] for i in positions] if positions else card_values
        port_wanted = max([largest, *wanted_values,
                           *((target.roce.vfs or ()) if target is not None and nics is None else ())], default=0)
        over = {k: v for k, v in (entries or {"the largest max_vfs entry": largest}).items()
                if isinstance(num, int) and v > num}
        covers = isinstance(num, int) and num >= port_wanted
        observed = {"NUM_OF_VFS": num, "SRIOV_EN": sriov, "max_vfs": max_vfs_raw, "card": card,
                    "card_entries": entries or None, "sum": total, "largest_entry": largest, "rule": rule,
                    "covers_every_port": covers if isinstance(num, int) else None,
                    # mlxconfig query does not print the card's maximum: never guessed
                    "card_max": None}
        if rule == "per_port":
            expected = f"NUM_OF_VFS >= {largest} (each port's entry; policy.num_of_vfs_rule per_port)"
        else:
            expected = f"NUM_OF_VFS > {total} (the card's entries summed; policy.num_of_vfs_rule sum_plus_one)"
        if total or total_wanted:
            expected += " and SRIOV_EN True"
        sets = {}
        problems = []
        if sriov is False and (total or total_wanted):
            problems.append(f"SRIOV_EN is False although NUM_OF_VFS={num}: the card exposes no VFs")
            sets["SRIOV_EN"] = 1
        if over:
            problems.append(f"NUM_OF_VFS={num} is below " + ", ".join(f"{k}={v}" for k, v in over.items())
                            + f" ({scope}): NUM_OF_VFS is a per-PF ceiling, so that port gets fewer VFs than asked"
                            + f" (judged by {rule})")
        elif rule != "per_port" and isinstance(num, int) and total and num <= total:
            problems.append(f"NUM_OF_VFS={num} does not exceed {total}, {scope}: the firmware already covers every "
                            f"port (NVIDIA's per-PF ceiling, >= {largest}), but policy.num_of_vfs_rule sum_plus_one "
                            "(the site's rule) asks for more than the sum")
        need = max(total, total_wanted) + 1 if rule != "per_port" else port_wanted
        if isinstance(num, int) and need and num < need:
            sets["NUM_OF_VFS"] = need
        elif num is None and need:
            problems.append(f"NUM_OF_VFS is not set in firmware while {scope} ask for {total}")
            sets["NUM_OF_VFS"] = need
        if "NUM_OF_VFS" in sets and problems:
            problems.append(f"planned NUM_OF_VFS={sets['NUM_OF_VFS']}; the card's maximum was not read "
                            "(mlxconfig query does not print it: mlxconfig refuses a larger value)")
        # what plan_fix sets on this device (read back from the failing findings' details)
        plan = {"mlxconfig_device": name, "mlxconfig_set": dict(sets),
                "mlxconfig_before": {"NUM_OF_VFS": num, "SRIOV_EN": sriov}} if sets else {}
        mlx_fix = pasteable(lambda: f"{MLXCONFIG} -d {shown_mlx_device(facts, device)} -y set "
                            + " ".join(f"{k}={v}" for k, v in sets.items()) + "  # then reboot the host",
                            MST_DEVICE) if sets else None

        if problems:
            fix = mlx_fix
            if "NUM_OF_VFS" in sets and total:
                lowered = dict(options)
                limit = (f"no entry exceeds {num}" if rule == "per_port"
                         else f"the card's entries sum to less than {num}")

                def note() -> str:
                    params_set_command(lowered)  # validated although it follows a `#`: a newline ends that
                    return f"# or lower max_vfs so that {limit}; current string: {format_options_string(lowered)}"
                fix += "\n" + pasteable(note, NMLX5_PARAMS)
            findings.append(bad(CHECK, facts, f"{label}: " + "; ".join(problems), observed=observed,
                                expected=expected, evidence=evidence(), fix=fix, subject=label, details=plan))
        if differ or unknown:
            parts = [f"{v} has {'no entry' if h is None else h} (max_vfs position {order.index(v) + 1}), "
                     f"inventory wants {w}" for v, (h, w) in differ.items()]
            parts += [f"{v} is not an nmlx5_core vmnic in the nic list" for v in unknown]
            fix = merged_params_fix(facts, policy, {"max_vfs": ",".join(str(x) for x in new_list)})
            if mlx_fix and not problems:
                fix += "\n" + mlx_fix
            if unknown and not differ:
                fix = "check roce.vmnics in the inventory against `esxcli network nic list`"
            findings.append(bad(CHECK, facts, "max_vfs does not match the inventory: " + "; ".join(parts),
                                observed={v: h for v, (h, _) in differ.items()} or {v: None for v in unknown},
                                expected=wanted, evidence=evidence(), fix=fix,
                                subject=",".join(wanted) or label, details=plan))
        if blind:
            fix = ("esxcli network nic list  # find the positions of " + ", ".join(blind) + "\n"
                   + merged_params_fix(facts, policy, {"max_vfs": "<one-entry-per-nmlx5_core-vmnic-in-PCI-order>"}))
            if mlx_fix and not problems:
                fix += "\n" + mlx_fix
            findings.append(bad(CHECK, facts, "max_vfs is not set (the driver creates no VFs); the inventory wants "
                                + ", ".join(f"{k}={v}" for k, v in blind.items()), observed=None,
                                expected=blind, evidence=evidence(), fix=fix, subject=",".join(blind),
                                details=plan))
        if not problems and not (differ or unknown or blind):
            if not total and not total_wanted:
                summary = f"{label}: no VFs asked for on this card ({scope})"
            elif rule == "per_port":
                summary = (f"{label}: NUM_OF_VFS={num} >= {largest}, every port's entry ({scope}); SRIOV_EN {sriov}; "
                           "judged by per_port: the firmware covers every port")
            else:
                summary = (f"{label}: NUM_OF_VFS={num} > {total}, {scope}; SRIOV_EN {sriov}; judged by "
                           "sum_plus_one; the firmware covers every port")
            findings.append(good(CHECK, facts, summary, observed=observed, expected=expected,
                                 evidence=evidence(), subject=label))
    return findings or [skip(CHECK, facts, "the mlxconfig query printed neither NUM_OF_VFS nor SRIOV_EN")]


def plan_fix(facts: Facts, policy: Policy, *, failed: list) -> FixPlan | None:
    """ONE mlxconfig set per device (NUM_OF_VFS=Σ+1, SRIOV_EN=1) and, when max_vfs differs from the
    inventory, the one desired nmlx5_core parameter string."""
    bad_findings = failed  # the engine's guard: this check's failing findings, never empty
    steps, seen = [], set()
    for finding in bad_findings:
        d = finding.details or {}
        device = d.get("mlxconfig_device")
        if device and device not in seen and d.get("mlxconfig_set"):
            seen.add(device)
            steps.append(mlxconfig_set_step(device, d["mlxconfig_set"], d.get("mlxconfig_before") or {},
                                            "cover max_vfs in firmware"))
    current = module_params(facts).get("max_vfs")
    wanted = desired_params(facts, policy).get("max_vfs")
    params = None
    if wanted is not None and wanted != current:
        params = params_fix_plan(CHECK, facts, policy, "")
    if params is not None:
        steps.extend(params.steps)
    if not steps:
        return None  # e.g. no nic list: the max_vfs positions are not known (see the finding)
    parts = [s.after for s in steps if s.command.startswith(MLXCONFIG)]
    if params is not None:
        parts.append(f"max_vfs={wanted}")
    return FixPlan(check=CHECK.code, target=facts.target_name, summary="VF counts: " + "; ".join(parts),
                   steps=tuple(steps), safety=Safety.DISRUPTIVE, reboot=RebootKind.HOST,
                   reboot_reason="firmware configuration and nmlx5_core parameters are read at boot",
                   needs=("RW201", "RW202"))
