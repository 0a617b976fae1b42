"""RW001 target-reachable — the wizard can connect to the target

What it checks
    The connection the engine opened to the target: SSH for ESXi hosts, Linux guests and bare-metal
    hosts, the vSphere API for vCenter, netmiko (SSH) for switches, Redfish (HTTPS) for BMCs.
    Connected is a pass. Otherwise the finding says which of the distinct causes it was: the name
    does not resolve (DNS), the connection was refused, it timed out, there is no route, the
    credentials were rejected, the password reference did not resolve (env variable unset, keyring
    empty: said by name), the SSH host key is unknown, the SSH host key CHANGED, an HTTPS
    peer's (BMC, vCenter) TLS certificate does not verify, or the far end does not speak the expected
    protocol. A connection that closes in the middle of the run is an error that names the command
    that was running; what the target had answered before is still judged.

Why it matters
    Every other check on the target reads what this connection returns. An unreachable target
    makes them unjudgeable (status error, exit code 3), never "failed": the cause is here.

How to fix by hand
    DNS:               getent hosts <address>   (fix the inventory address, or DNS / /etc/hosts)
    VM powered off by roce-wizard (a `fix --reboot` that did not finish): `roce-wizard fix --reboot`
                       powers it back on (or power it on in vCenter); the finding says when it went off
    refused:           ESXi: start the SSH service (vSphere Client > host > Configure > Services >
                       SSH > Start, or DCUI > Troubleshooting Options > Enable SSH);
                       Linux: systemctl enable --now sshd; check the port in the inventory
    timeout / no route: ping <address>; nc -vz <address> <port>; check firewall, VLAN, power
    auth failed:       ssh -v <user>@<address>; check the inventory user and its password / key
                       reference (env variable, keyring entry, key_file)
    no password:       the inventory's reference did not resolve on this machine (nothing was sent):
                       read -rs NAME && export NAME  (password: {env: NAME}), or
                       keyring set <service> <user>  (password: {keyring: service/user})
    host key unknown:  compare the fingerprint with the one the console shows, then
                       ssh-keyscan -p <port> <address> >> ~/.ssh/known_hosts
    host key CHANGED:  find out why first (reinstalled host? another machine on that address? an
                       interception?); only when it is explained:
                       ssh-keygen -R <address>; ssh-keyscan -p <port> <address> >> ~/.ssh/known_hosts
    TLS (BMC/vCenter): give the CA that signed the certificate as `options: {ca_file: ca.pem}` on the
                       target (openssl s_client -connect <address>:<port> -showcerts shows the
                       chain); `options: {insecure: true}` turns verification off, with a warning
    Sources: every command is a real binary's documented syntax, checked on this Debian 12 machine:
        `getent hosts` — getent(1) (libc-bin); `ping` — iputils-ping 20221126; `nc -vz` — netcat-openbsd
        1.219 (`-v` verbose, `-z` zero-I/O mode); `ssh -v`, `ssh-keyscan -p`, `ssh-keygen -R` — OpenSSH's
        ssh(1), ssh-keyscan(1), ssh-keygen(1) (openssh-client); `systemctl enable --now` — systemctl(1); `read
        -rs` / `export` — bash(1) builtins; `keyring set <service> <user>` — the keyring CLI of Python's
        keyring package (the project's dependency); `openssl s_client -connect … -showcerts` — openssl-s_client(1);
        `curl --cacert … -u …` (the BMC hint) and `ip route get` — curl(1), ip-route(8) (iproute2). The ESXi
        client path (Configure > Services > SSH, DCUI Troubleshooting Options) is VMware's; it is words, not a
        command.

Fix safety
    manual: the wizard never accepts or replaces a host key by itself and never turns host key
    checking off; credentials are referenced, not stored.
"""

import shlex

from roce_wizard.model import (
    Check,
    Evidence,
    Facts,
    Finding,
    Policy,
    SecretSource,
    Severity,
    Stage,
    Status,
    TargetKind,
)

CHECK = Check(
    code="RW001",
    slug="target-reachable",
    title="Target reachable",
    stage=Stage.PREFLIGHT,
    target=tuple(TargetKind),
    severity=Severity.FAIL,
    probes=("connection",),
    fix_hint="check address, port, credentials and known_hosts (ssh-keyscan after verifying the fingerprint)",
)

_DEFAULT_PORT = {"ssh": 22, "netmiko": 22, "vsphere": 443, "vsphere-api": 443, "redfish": 443, "https": 443}


def _host_port(conn: dict, facts: Facts) -> tuple[str, int]:
    target = facts.target
    address = conn.get("address") or (target.address if target else "") or "<address>"
    transport = (conn.get("transport") or "ssh").lower()
    port = (target.port if target and target.port else None) or _DEFAULT_PORT.get(transport, 22)
    if ":" in address and address.count(":") == 1:  # "host:port" as the engine may report it
        address, _, p = address.partition(":")
        port = int(p) if p.isdigit() else port
    return address, port


def _known_hosts_name(address: str, port: int) -> str:
    return address if port == 22 else f"[{address}]:{port}"


def _diagnosis(kind: str | None, conn: dict, facts: Facts) -> tuple[str, str]:
    """(summary, fix) for one error kind."""
    address, port = _host_port(conn, facts)
    target = facts.target
    user = target.credentials.username if target else "<user>"
    transport = conn.get("transport") or "ssh"
    known_hosts = (target.options.get("known_hosts") if target else None) or "~/.ssh/known_hosts"
    keyscan = f"ssh-keyscan -p {port} {address} >> {known_hosts}"
    if kind == "credential":
        return (f"no password for {user}@{address}: {conn.get('message') or 'its reference did not resolve'}",
                _credential_fix(facts, user, address))
    if kind == "dns":
        return (f"cannot resolve {address} (DNS)",
                f"getent hosts {address}  # fix the inventory address, or DNS / /etc/hosts")
    if kind == "refused" and transport == "redfish":
        return (f"connection to {address}:{port} refused",
                f"nc -vz {address} {port}  # is the BMC's HTTPS (Redfish) service on, and the port right?")
    if kind == "auth" and transport == "redfish":
        return (f"authentication failed for {user}@{address}",
                (f"curl -s --cacert <ca_file> -u {user} https://{address}:{port}/redfish/v1/Systems  "
                 "# check the inventory user and its password reference"))
    if kind == "refused" and transport == "vsphere-api":
        return (f"connection to {address}:{port} refused",
                f"nc -vz {address} {port}  # is vCenter's HTTPS (vSphere API, /sdk) on this port? The default is 443")
    if kind == "auth" and transport == "vsphere-api":
        return (f"authentication failed for {user}@{address}",
                (f"log in to https://{address}/ui as {user} to check; then the inventory user and its password "
                 "reference (the vSphere API needs a vCenter SSO user, e.g. administrator@vsphere.local)"))
    if kind == "tls":
        return (f"TLS certificate of {address}:{port} does not verify",
                (f"openssl s_client -connect {address}:{port} -showcerts  # then give its CA as options.ca_file on "
                 "this target (options.insecure: true turns verification off, with a warning)"))
    if kind == "refused":
        svc = ("start SSH on the ESXi host (vSphere Client > Configure > Services > SSH > Start, or DCUI)"
               if target and target.kind is TargetKind.ESXI else "systemctl enable --now sshd on the target")
        return (f"connection to {address}:{port} refused",
                f"{svc}; check the port in the inventory (nc -vz {address} {port})")
    if kind == "timeout":
        return (f"connection to {address}:{port} timed out",
                f"ping {address}; nc -vz {address} {port}  # firewall, VLAN/route, host powered on?")
    if kind == "unreachable":
        return (f"no route to {address}", f"ip route get {address}  # check routing / the management network")
    if kind == "auth":
        return (f"authentication failed for {user}@{address}",
                f"ssh -v {user}@{address} -p {port}  # check the inventory user and its password/key reference")
    if kind == "hostkey_unknown":
        return (f"SSH host key of {address} is unknown (not in {known_hosts})",
                f"compare the fingerprint with the host console, then: {keyscan}")
    if kind == "hostkey_changed":
        return (f"SSH host key of {address} CHANGED since it was recorded: refusing to connect",
                ("find out why (reinstall? another machine on that address? interception?) before trusting it; "
                 f"then: ssh-keygen -R '{_known_hosts_name(address, port)}' -f {known_hosts}; {keyscan}"))
    if kind == "protocol":
        return (f"{address}:{port} does not speak {transport} as expected",
                f"check the port and the target kind in the inventory (nc -v {address} {port})")
    return (f"cannot connect to {address}:{port}" + (f" ({kind})" if kind else ""),
            f"ssh -v {user}@{address} -p {port}  # see the message for the cause")


def _credential_fix(facts: Facts, user: str, address: str) -> str:
    """How to give the password the inventory refers to (names validated at load; quoted anyway)."""
    ref = facts.target.credentials.password if facts.target else None
    whose = f"the password of {user}@{address}"
    if ref is not None and ref.source is SecretSource.ENV:
        name = shlex.quote(ref.name)
        return f"read -rs {name} && export {name}  # type {whose}, then run roce-wizard again from this shell"
    if ref is not None and ref.source is SecretSource.KEYRING:
        service, _, keyring_user = ref.name.rpartition("/")
        return f"keyring set {shlex.quote(service)} {shlex.quote(keyring_user)}  # store {whose}"
    if ref is not None and ref.source is SecretSource.PROMPT:
        return f"run roce-wizard from a terminal: it asks for {whose} (or give password: {{env: NAME}})"
    return f"give {whose} in the inventory: password: {{env: NAME}}, {{keyring: service/user}} or prompt"


def evaluate(facts: Facts, policy: Policy) -> list[Finding]:
    conn = facts.need("connection") or {}
    message = conn.get("message") or None
    ev = [Evidence(probe="connection", excerpt=message)]
    address, port = _host_port(conn, facts)
    if conn.get("ok"):
        return [Finding(check=CHECK.code, status=Status.PASS, target=facts.target_name,
                        summary=f"connected to {address}:{port} over {conn.get('transport') or 'ssh'}",
                        observed="connected", expected="connected", evidence=ev)]
    kind = conn.get("error_kind")
    if conn.get("dropped"):  # connected, then lost mid-run: what it answered before is judged
        command = conn.get("command")
        summary = (f"the connection to {address}:{port} closed while `{command}` was running" if command
                   else f"the connection to {address}:{port} was lost during the run")
        fix = (f"ping {address}; once it answers, uptime on it (did it reboot?), then check again — the checks "
               "whose commands had answered are judged, the others could not run")
        return [Finding(check=CHECK.code, status=Status.ERROR, target=facts.target_name, summary=summary,
                        observed={"error_kind": kind, "message": message, "command": command},
                        expected="connected", evidence=ev, fix=fix, details={"error_kind": kind})]
    summary, fix = _diagnosis(kind, conn, facts)
    off = facts.get("tool_vm_power") or {}
    if off.get("state") == "off":
        # the tool itself powered this guest's VM off (the reboot ledger, handed in as a fact): that is why
        vm = str(off.get("vm") or "")
        summary = (f"{summary}: its VM {vm} is powered off (by roce-wizard at {off.get('since') or '?'}"
                   f"{', for the reboot of ' + str(off['host']) if off.get('host') else ''})")
        fix = f"roce-wizard fix --reboot  # powers it back on (or power on VM {vm} in vCenter)"
    return [Finding(check=CHECK.code, status=Status.ERROR, target=facts.target_name, summary=summary,
                    observed={"error_kind": kind, "message": message}, expected="connected",
                    evidence=ev, fix=fix, details={"error_kind": kind})]
