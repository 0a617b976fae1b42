"""RW414 memlock — the RDMA user (and slurmd, when present) may lock enough memory

What it checks
    `ulimit -l` in the SSH session of the inventory's user — the limit pam_limits gives a login, which is
    what `mpirun` over SSH hands its ranks: `unlimited` passes, a number (KiB) fails. When slurmd is
    installed (`systemctl show -p LimitMEMLOCK -p LoadState slurmd.service` says LoadState=loaded), its
    unit's LimitMEMLOCK must be `infinity` as well: Slurm's tasks inherit slurmd's limit, not the login's.

Why it matters
    Verbs pin every registered buffer. Under a 64 KiB (or 8 MiB) limit `ibv_reg_mr` fails with ENOMEM
    ("Cannot allocate memory"); UCX reports a transport failure and MPI falls back to TCP, or the job
    aborts — RW603 then sees TCP without saying why.

How to fix by hand
    /etc/security/limits.d/99-roce-wizard-memlock.conf:
        * soft memlock unlimited
        * hard memlock unlimited
    (a new login gets it); for slurmd a drop-in /etc/systemd/system/slurmd.service.d/99-roce-wizard-memlock.conf:
        [Service]
        LimitMEMLOCK=infinity
    then `systemctl daemon-reload` and restart slurmd when no job runs (`systemctl restart slurmd`).
    Sources: the limits line `<domain> <type> <item> <value>`, item `memlock` ("maximum locked-in-memory
    address space (KB)"), value `unlimited`, the limits.d directory — limits.conf(5) (Linux-PAM, pam_limits);
    `LimitMEMLOCK=` "= ulimit -l", `infinity` for no limit, drop-ins in `<unit>.d/*.conf` — systemd.exec(5)
    "Process Properties" and systemd.unit(5); `systemctl daemon-reload` / `systemctl restart` — systemctl(1);
    `ulimit -l` outputs — corpus ulimit_memlock/* (clearlinux #2372:
    64; docker/for-linux #1099: unlimited).

Fix safety
    safe: `roce-wizard fix` writes the limits.d file (new sessions get it; running jobs keep their limit) and,
    when slurmd is installed with a limit, the drop-in and `systemctl daemon-reload`; slurmd itself is not
    restarted (the finding says to restart it when the node is idle).
"""

import re
import shlex

from roce_wizard.checklib.findings import bad, excerpt, failing, good, skip
from roce_wizard.model import (
    Check,
    Facts,
    Finding,
    FixPlan,
    Policy,
    RebootKind,
    Safety,
    Severity,
    Stage,
    Step,
    TargetKind,
)

CHECK = Check(
    code="RW414",
    slug="memlock",
    title="Locked-memory limit (ulimit -l)",
    stage=Stage.GUEST,
    target=(TargetKind.GUEST, TargetKind.LINUX),
    severity=Severity.FAIL,
    probes=("ulimit_memlock",),
    optional_probes=("systemd_limit_memlock",),
    fix_hint="/etc/security/limits.d/99-roce-wizard-memlock.conf: '* soft memlock unlimited' + '* hard memlock "
             "unlimited'; slurmd: LimitMEMLOCK=infinity drop-in",
)

LIMITS_FILE = "/etc/security/limits.d/99-roce-wizard-memlock.conf"
LIMITS_LINES = ("* soft memlock unlimited", "* hard memlock unlimited")
SLURMD = "slurmd.service"
DROPIN = f"/etc/systemd/system/{SLURMD}.d/99-roce-wizard-memlock.conf"
DROPIN_LINES = ("[Service]", "LimitMEMLOCK=infinity")


def _write(path: str, lines: tuple[str, ...]) -> str:
    return f"printf '%s\\n' {' '.join(shlex.quote(x) for x in lines)} > {path}"


def _login(facts: Facts) -> Finding:
    lim = facts.need("ulimit_memlock")
    ev = excerpt(facts.raw.get("ulimit_memlock"), r"\S")
    if lim.get("unlimited") is True:
        return good(CHECK, facts, "ulimit -l: unlimited", observed="unlimited", expected="unlimited", excerpt=ev)
    kib = lim.get("memlock_kib")
    if kib is None and lim.get("memlock_bytes") is not None:
        kib = lim["memlock_bytes"] // 1024
    if kib is None:
        return skip(CHECK, facts, "ulimit -l printed no readable limit", observed=lim.get("values"),
                    expected="unlimited", excerpt=ev)
    return bad(CHECK, facts, f"ulimit -l is {kib} KiB: verbs cannot pin more (ibv_reg_mr fails with ENOMEM, UCX falls "
               "back to TCP)", observed=f"{kib} KiB", expected="unlimited", excerpt=ev, subject="login",
               fix=f"{_write(LIMITS_FILE, LIMITS_LINES)}  # limits.conf(5); a new login gets it")


def _slurmd(facts: Facts) -> Finding | None:
    unit = facts.get("systemd_limit_memlock")
    raw = facts.raw.get("systemd_limit_memlock") or ""
    if not unit or not re.search(r"^\s*LoadState=loaded\s*$", raw, re.MULTILINE):
        return None  # no slurmd on this host (LoadState=not-found), or not read
    ev = excerpt(raw, r"LimitMEMLOCK=", r"LoadState=")
    if unit.get("unlimited") is True:
        return good(CHECK, facts, f"{SLURMD}: LimitMEMLOCK=infinity", observed="infinity", expected="infinity",
                    excerpt=ev, subject=SLURMD, probes=("systemd_limit_memlock",))
    value = unit.get("limit_bytes")
    return bad(CHECK, facts, f"{SLURMD}: LimitMEMLOCK={value} bytes: Slurm's tasks inherit it, whatever the login "
               "allows", observed=value, expected="infinity", excerpt=ev, subject=SLURMD, probes=("systemd_limit_memlock",),
               fix=f"mkdir -p {DROPIN.rsplit('/', 1)[0]} && {_write(DROPIN, DROPIN_LINES)} && systemctl daemon-reload"
                   "  # then restart slurmd when the node is idle")


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    findings = [_login(facts)]
    slurm = _slurmd(facts)
    return findings + ([slurm] if slurm else [])


def plan_fix(facts: Facts, policy: Policy) -> FixPlan | None:
    """The limits.d file (login) and the slurmd drop-in + daemon-reload, for what fails."""
    bad_ones = failing(evaluate(facts, policy))
    if not bad_ones:
        return None
    steps = []
    if any(f.subject == "login" for f in bad_ones):
        steps.append(Step(f"write {LIMITS_FILE} (pam_limits: memlock unlimited for every login)",
                          _write(LIMITS_FILE, LIMITS_LINES), before=str(bad_ones[0].observed), after="unlimited"))
    if any(f.subject == SLURMD for f in bad_ones):
        steps.append(Step(f"write the drop-in {DROPIN} (LimitMEMLOCK=infinity)",
                          f"mkdir -p {DROPIN.rsplit('/', 1)[0]} && {_write(DROPIN, DROPIN_LINES)}",
                          before=None, after="LimitMEMLOCK=infinity"))
        steps.append(Step("reload systemd's unit files (slurmd gets the limit at its next restart)",
                          "systemctl daemon-reload", before=None, after="reloaded"))
    return FixPlan(CHECK.code, facts.target_name, "memlock unlimited for logins (and slurmd)", steps=tuple(steps),
                   safety=Safety.SAFE, reboot=RebootKind.NONE)
