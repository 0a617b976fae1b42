"""Pseudonyms for an anonymized support bundle (`roce-wizard export --anonymize`).

Hostnames, IPv4/IPv6 addresses, MACs, GUIDs, UUIDs and serial numbers become pseudonyms that are consistent across
every file of one bundle (same input, same pseudonym; the MAC, GUID and EUI-64 link-local spellings of one address map
alike), keep their syntax (so `analyze` still parses the outputs) and keep structure readable: esxi-01, guest-02,
10.0.1.11 in the same pseudo subnet as its neighbours. perftest's decimal GIDs (`GID: 00:…:255:255:192:168:06:116`,
each byte printed `%02d`) carry the same pseudonym as the address they encode, and home directories (/home/<user>,
/Users/<user>) and site names from the inventory are replaced in paths too.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from roce_wizard.records.bundle.spellings import (
    _DEC_GID,
    _FQDN,
    _GENERIC_DIRS,
    _GUID0X,
    _GUID4,
    _HOME,
    _HOST_RE,
    _HOSTNAME_LABEL,
    _HWADDR,
    _IPV6,
    _KIND_PREFIX,
    _LABELED_HEX,
    _NOT_USERS,
    _QUAD,
    _SENTINEL,
    _SERIAL,
    _SITE_OPTION,
    _UUID,
    _dec_gid,
    _eui64_link_local,
    _eui64_mac,
    _hex_key,
    _is_version,
    _keep_v4,
    _like,
    _serial_like,
    _v4,
    _v6,
)


@dataclass
class Anonymizer:
    """Consistent pseudonyms for one bundle. `seed()` the inventory's names, `collect()` every text,
    `freeze()`, then `apply()` to every text and member name."""

    names: dict[str, str] = field(default_factory=dict)  # hostname / FQDN / domain -> kind
    ipv4: dict[str, None] = field(default_factory=dict)  # addresses to replace (frozen: the chosen ones)
    # a dotted quad is an address or a version (4.21.71.101): [seen where only an address fits, seen as a version]
    quads: dict[str, list[int]] = field(default_factory=dict)
    ipv6: dict[str, None] = field(default_factory=dict)
    hw: dict[str, None] = field(default_factory=dict)  # normalized hex of MACs and GUIDs
    uuids: dict[str, None] = field(default_factory=dict)
    serials: dict[str, None] = field(default_factory=dict)
    users: dict[str, None] = field(default_factory=dict)  # account names seen in home directory paths
    site_dirs: dict[str, None] = field(default_factory=dict)  # directory names that name a site
    mapping: dict[str, str] = field(default_factory=dict)  # category:original -> pseudonym
    _names_re: re.Pattern[str] | None = None
    _serials_re: re.Pattern[str] | None = None
    _known_v4_re: re.Pattern[str] | None = None
    _site_dirs_re: re.Pattern[str] | None = None
    frozen: bool = False

    # -- pass 1
    def seed_name(self, name: str | None, kind: str) -> None:
        if not name or name in ("localhost",) or not _HOST_RE.match(name):  # "all targets" is no host
            return
        try:
            ipaddress.ip_address(name.split("%")[0])
        except ValueError:
            pass
        else:
            (self.ipv6 if ":" in name else self.ipv4).setdefault(str(ipaddress.ip_address(name.split("%")[0])), None)
            return
        self.names.setdefault(name, kind)
        if "." in name:
            label, _, domain = name.partition(".")
            self.names.setdefault(label, kind)
            if "." in domain:  # a site domain (hpc.example), not a bare TLD or a word like "local"
                self.names.setdefault(domain, "domain")

    def seed_inventory(self, inventory: Any) -> None:
        for t in inventory.targets:
            self.seed_name(t.name, t.kind.value)
        for t in inventory.targets:
            self.seed_name(t.address, t.kind.value)
            self.seed_name(t.host, "esxi")
            self.seed_name(t.vm, "vm")
            if t.roce.ip:
                self.ipv4.setdefault(t.roce.ip.split("/")[0], None)
            for port in t.roce.switch_ports:
                self.seed_name(port.partition(":")[0], "switch")
            for key, value in (t.options or {}).items():
                if isinstance(value, str) and _SITE_OPTION.match(str(key)):
                    self.seed_name(value, "site")

    def seed_site_dir(self, directory: str) -> None:
        """The directory an inventory lives in (`…/paris-dc1/inventory.yaml`) names a site unless it is generic:
        replaced where it is a path component (elsewhere the word may be ordinary text)."""
        if directory and directory.lower() not in _GENERIC_DIRS and re.search(r"[A-Za-z]", directory) \
                and not directory.startswith(".") and _HOST_RE.match(directory):
            self.site_dirs.setdefault(directory, None)

    def collect(self, text: str) -> None:
        for m in _SERIAL.finditer(text):
            if _serial_like(m.group(3)):
                self.serials.setdefault(m.group(3), None)
        for m in _HOSTNAME_LABEL.finditer(text):
            self.seed_name(m.group(3), "host")
        for m in _FQDN.finditer(text):  # esx-01.hpc.example where esx-01 is known: its domain goes too
            label = m.group(0).split(".", 1)[0]
            if label in self.names and not _v4(m.group(0)):
                self.seed_name(m.group(0), self.names[label])
        for m in _UUID.finditer(text):
            self.uuids.setdefault(m.group(0).lower(), None)
        for m in _HOME.finditer(text):
            if m.group(2).lower() not in _NOT_USERS:
                self.users.setdefault(m.group(2), None)
        for m in _DEC_GID.finditer(text):
            if (gid := _dec_gid(m.group(0))) is not None:
                self._collect_v6(str(gid))
        for rx in (_HWADDR, _GUID4, _GUID0X):
            for m in rx.finditer(text):
                self.hw.setdefault(_hex_key(m.group(0)), None)
        for m in _LABELED_HEX.finditer(text):
            self.hw.setdefault(_hex_key(m.group(2)), None)
        for m in _IPV6.finditer(text):
            if (addr := _v6(m.group(0))) is not None:
                self._collect_v6(addr)
        for m in _QUAD.finditer(text):
            if _v4(m.group(0)):
                self.quads.setdefault(m.group(0), [0, 0])[1 if _is_version(text, m.start(), m.end()) else 0] += 1

    def _collect_v6(self, addr: str) -> None:
        ip = ipaddress.IPv6Address(addr)
        if ip.ipv4_mapped is not None:
            self.quads.setdefault(str(ip.ipv4_mapped), [0, 0])[0] += 1
            return
        self.ipv6.setdefault(str(ip), None)
        if (mac := _eui64_mac(ip)) is not None:  # fe80::0e42:a1ff:fed3:9846 carries MAC 0c:42:a1:d3:98:46
            self.hw.setdefault(mac, None)

    # -- mappings
    def freeze(self) -> None:
        # an address: the inventory's, or seen where only an address fits and never where a version does
        for quad, (as_address, as_version) in self.quads.items():
            if as_address and not as_version:
                self.ipv4.setdefault(quad, None)
        taken = set(self.names) | set(self.ipv4)
        counters: dict[str, int] = {}

        def fresh(prefix: str, fmt: Callable[[int], str]) -> str:
            while True:
                counters[prefix] = counters.get(prefix, 0) + 1
                candidate = fmt(counters[prefix])
                if candidate not in taken:
                    taken.add(candidate)
                    return candidate

        # FQDNs map label by label so that esx-01 and esx-01.hpc.example stay recognisably one host
        for name, kind in self.names.items():
            if "." not in name:
                prefix = _KIND_PREFIX.get(kind, "host")
                if kind == "domain":
                    continue
                self.mapping[f"name:{name}"] = fresh(prefix, lambda n, p=prefix: f"{p}-{n:02d}")
        for name, kind in self.names.items():
            if kind == "domain":
                self.mapping[f"name:{name}"] = fresh("domain", lambda n: f"site{n}.example.invalid")
        for name in self.names:
            if "." in name and f"name:{name}" not in self.mapping:
                label, _, domain = name.partition(".")
                head = self.mapping.get(f"name:{label}") or fresh("host", lambda n: f"host-{n:02d}")
                tail = self.mapping.get(f"name:{domain}") or "example.invalid"
                self.mapping[f"name:{name}"] = f"{head}.{tail}"
        nets: dict[str, str] = {}
        original_nets = {a.rsplit(".", 1)[0] for a in self.ipv4}
        for addr in self.ipv4:
            if _keep_v4(addr):
                continue
            net, host = addr.rsplit(".", 1)
            if net not in nets:
                nets[net] = fresh("net", lambda n: f"10.{(n - 1) // 256}.{(n - 1) % 256}")
                while nets[net] in original_nets:
                    nets[net] = fresh("net", lambda n: f"10.{(n - 1) // 256}.{(n - 1) % 256}")
            self.mapping[f"v4:{addr}"] = f"{nets[net]}.{host}"
        for key in self.hw:
            if set(key) <= {"0"} or set(key) <= {"f"}:
                continue
            n = int(fresh(f"hw{len(key)}", lambda n: str(n)))
            # locally administered, unicast: 02:00:…:nn
            self.mapping[f"hw:{key}"] = ("02" + f"{n:0{len(key) - 2}x}")[-len(key):] if len(key) > 2 else key
        prefixes: dict[int, str] = {}
        for addr in self.ipv6:
            ip = ipaddress.IPv6Address(addr)
            if ip.ipv4_mapped is not None or ip.is_unspecified or ip.is_loopback:
                continue
            mac = _eui64_mac(ip)
            if mac is not None and f"hw:{mac}" in self.mapping:
                self.mapping[f"v6:{addr}"] = str(_eui64_link_local(self.mapping[f"hw:{mac}"], ip))
                continue
            iid = fresh("iid", lambda n: str(n))
            if ip.is_link_local:
                self.mapping[f"v6:{addr}"] = str(ipaddress.IPv6Address(f"fe80::2ff:fe00:{int(iid):x}"))
                continue
            net = int(ip) >> 64
            prefixes.setdefault(net, fresh("v6net", lambda n: f"fd00:0:0:{n:x}"))
            self.mapping[f"v6:{addr}"] = str(ipaddress.IPv6Address(f"{prefixes[net]}::{int(iid):x}"))
        for value in self.uuids:
            if set(value) <= {"0", "-"}:
                continue
            n = int(fresh("uuid", lambda n: str(n)))
            self.mapping[f"uuid:{value}"] = f"00000000-0000-4000-8000-{n:012x}"
        for value in self.serials:
            self.mapping[f"serial:{value}"] = fresh("serial", lambda n: f"SERIAL{n:04d}")
        for user in self.users:
            self.mapping[f"user:{user}"] = fresh("user", lambda n: f"user-{n:02d}")
        for site in self.site_dirs:
            self.mapping[f"sitedir:{site}"] = (self.mapping.get(f"name:{site}")
                                               or fresh("site", lambda n: f"site-{n:02d}"))
        sites = "|".join(map(re.escape, self.site_dirs))  # a path component only: elsewhere it may be a word
        self._site_dirs_re = re.compile(r"(?<=[/\\])(" + sites + r")(?=[/\\]|$|[\s\"'])") if sites else None
        names = sorted((n for n in self.names if f"name:{n}" in self.mapping), key=len, reverse=True)
        self._names_re = (re.compile(r"(?<![A-Za-z0-9_-])(" + "|".join(map(re.escape, names)) + r")(?![A-Za-z0-9_-])")
                          if names else None)
        # replaced wherever they occur only when unmistakable (letters and digits, 5+); else where labelled
        serials = sorted((s for s in self.serials if len(s) >= 5 and re.search(r"[A-Za-z]", s)), key=len, reverse=True)
        self._serials_re = (re.compile(r"(?<![A-Za-z0-9_-])(" + "|".join(map(re.escape, serials)) + r")(?![A-Za-z0-9_-])")
                            if serials else None)
        known_v4 = sorted((a for a in self.ipv4 if f"v4:{a}" in self.mapping), key=len, reverse=True)
        self._known_v4_re = (re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, known_v4)) + r")(?!\.?\d)")
                             if known_v4 else None)
        self.frozen = True

    # -- pass 2
    def apply(self, text: str) -> str:
        assert self.frozen
        out: list[str] = []

        def hold(pseudo: str) -> str:  # placeholders keep later patterns off what earlier ones wrote
            out.append(pseudo)
            return f"\x00{len(out) - 1}\x00"

        def name(m: re.Match[str]) -> str:
            return hold(self.mapping[f"name:{m.group(1)}"])

        def serial_labeled(m: re.Match[str]) -> str:
            pseudo = self.mapping.get(f"serial:{m.group(3)}")
            return m.group(1) + m.group(2) + hold(pseudo) if pseudo else m.group(0)

        def uuid(m: re.Match[str]) -> str:
            pseudo = self.mapping.get(f"uuid:{m.group(0).lower()}")
            if pseudo is None:
                return m.group(0)
            return hold(pseudo.upper() if m.group(0).isupper() else pseudo)

        def hw(m: re.Match[str], group: int = 0) -> str:
            original = m.group(group)
            pseudo = self.mapping.get(f"hw:{_hex_key(original)}")
            if pseudo is None:
                return original
            rendered = _like(original, pseudo)
            if group:
                return m.group(0)[: m.start(group) - m.start(0)] + hold(rendered)
            return hold(rendered)

        def v6(m: re.Match[str]) -> str:
            original = m.group(0)
            addr = _v6(original)
            if addr is None:
                return original
            ip = ipaddress.IPv6Address(addr)
            if ip.ipv4_mapped is not None:
                inner = self.mapping.get(f"v4:{ip.ipv4_mapped}")
                if inner is None:
                    return original
                pseudo = ipaddress.IPv6Address(f"::ffff:{inner}")
                if "." in original:
                    return hold(original[: original.rfind(":") + 1] + inner)
                return hold(pseudo.exploded if original.count(":") == 7 and "::" not in original else str(pseudo))
            pseudo_text = self.mapping.get(f"v6:{addr}")
            if pseudo_text is None:
                return original
            pseudo6 = ipaddress.IPv6Address(pseudo_text)
            rendered = pseudo6.exploded if "::" not in original and original.count(":") == 7 else str(pseudo6)
            return hold(rendered.upper() if original.isupper() else rendered)

        def dec_gid(m: re.Match[str]) -> str:
            gid = _dec_gid(m.group(0))
            if gid is None:
                return m.group(0)
            if gid.ipv4_mapped is not None:
                inner = self.mapping.get(f"v4:{gid.ipv4_mapped}")
                pseudo = ipaddress.IPv6Address(f"::ffff:{inner}") if inner else None
            else:
                found = self.mapping.get(f"v6:{gid}")
                pseudo = ipaddress.IPv6Address(found) if found else None
            return m.group(0) if pseudo is None else hold(":".join(f"{b:02d}" for b in pseudo.packed))

        def home(m: re.Match[str]) -> str:
            pseudo = self.mapping.get(f"user:{m.group(2)}")
            return m.group(1) + hold(pseudo) if pseudo else m.group(0)

        text_now = _DEC_GID.sub(dec_gid, text)
        text_now = _HOME.sub(home, text_now)
        if self._site_dirs_re is not None:
            text_now = self._site_dirs_re.sub(lambda m: hold(self.mapping[f"sitedir:{m.group(1)}"]), text_now)
        if self._names_re is not None:
            text_now = self._names_re.sub(name, text_now)
        text_now = _SERIAL.sub(serial_labeled, text_now)
        if self._serials_re is not None:
            text_now = self._serials_re.sub(lambda m: hold(self.mapping[f"serial:{m.group(1)}"]), text_now)
        text_now = _UUID.sub(uuid, text_now)
        text_now = _HWADDR.sub(hw, text_now)
        text_now = _GUID4.sub(hw, text_now)
        text_now = _GUID0X.sub(hw, text_now)
        text_now = _LABELED_HEX.sub(lambda m: hw(m, 2), text_now)
        text_now = _IPV6.sub(v6, text_now)
        if self._known_v4_re is not None:
            text_now = self._known_v4_re.sub(lambda m: hold(self.mapping[f"v4:{m.group(1)}"]), text_now)
        return _SENTINEL.sub(lambda m: out[int(m.group(1))], text_now)

    def originals(self) -> list[str]:
        """Hostnames and IPs that must not be left in an anonymized bundle (for the final check)."""
        return ([n for n in self.names if f"name:{n}" in self.mapping]
                + [a for a in self.ipv4 if f"v4:{a}" in self.mapping])
