"""The inventory's field vocabulary and the located checks every value passes.

Which fields each kind of target takes, the validators (text → None when fine, else what was expected)
for every value that may reach a remote shell (addresses, names, PCI addresses, interface names, IPs),
the YAML node helpers that turn nodes into values with file:line errors, and the site policy (docs/policy.md).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from roce_wizard.model import POLICY_KEYS, Policy, TargetKind
from roce_wizard.mpienv import EXPECTED as ENV_EXPECTED
from roce_wizard.mpienv import bad_words

# netmiko device types roce-wizard speaks (EOS, Onyx, OS10, NVUE, SONiC)
DEVICE_TYPES = ("arista_eos", "mellanox_mlnxos", "dell_os10", "cumulus_nvue", "sonic")


class InventoryError(ValueError):
    """An inventory problem, located: ``inventory.yaml:12: targets.esxi[0].roce.vfs: expected …``."""

    def __init__(
        self,
        problem: str,
        *,
        file: str | None = None,
        line: int | None = None,
        field: str | None = None,
        expected: str | None = None,
    ):
        self.problem = problem
        self.file = file
        self.line = line
        self.field = field
        self.expected = expected
        where = ""
        if file:
            where = f"{file}:{line}: " if line else f"{file}: "
        elif line:
            where = f"line {line}: "
        super().__init__(f"{where}{field + ': ' if field else ''}{problem}")


# --------------------------------------------------------------------------------------------
# Field vocabulary

_COMMON = ("name", "address", "port", "username", "password", "options")
_SSH = ("key_file", "use_agent")
KIND_FIELDS: dict[TargetKind, tuple[str, ...]] = {
    TargetKind.ESXI: _COMMON + _SSH + ("roce",),
    TargetKind.GUEST: _COMMON + _SSH + ("host", "vm", "roce"),
    TargetKind.LINUX: _COMMON + _SSH + ("roce",),
    TargetKind.SWITCH: _COMMON + _SSH + ("device_type",),
    TargetKind.VCENTER: _COMMON,
    TargetKind.BMC: _COMMON + ("host",),
}
ROCE_FIELDS: dict[TargetKind, tuple[str, ...]] = {
    TargetKind.ESXI: ("pf_pci", "vmnics", "vfs", "switch_ports"),
    TargetKind.GUEST: ("netdev", "rdma_dev", "ip"),
    TargetKind.LINUX: ("pf_pci", "netdev", "rdma_dev", "ip", "vfs", "switch_ports"),
}
TOP_KEYS = ("policy", "defaults", "targets")

# validators: text → None when fine, else what was expected
_NAME_RE = re.compile(r"^[A-Za-z0-9._-]+$")
_LABEL_RE = re.compile(r"^[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$")
_PCI_RE = re.compile(r"^(?:([0-9A-Fa-f]{4}):)?([0-9A-Fa-f]{2}):([01][0-9A-Fa-f])\.([0-7])$")
_VMNIC_RE = re.compile(r"^vmnic\d+$")
_NETDEV_RE = re.compile(r"^[A-Za-z0-9_.@+-]{1,15}$")
_RDMA_DEV_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_PORT_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:-]*$")
_ENV_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_USER_RE = re.compile(r"^[A-Za-z0-9._@\\-]+$")
_SCOPE_RE = re.compile(r"^[A-Za-z0-9._-]+$")
_VERSION_RE = re.compile(r"^\d+(?:\.\d+)*$")
_SHELL_META = set("`$;&|<>()'\"\\*?[]{}!#~\n\r\t\0")


def _check_name(v: str) -> str | None:
    if _NAME_RE.match(v) and not v.startswith("-"):
        return None
    return "a name of letters, digits, '.', '_' and '-' (not starting with '-')"


def _check_address(v: str) -> str | None:
    """A hostname or an IPv4/IPv6 literal; nothing a shell or ssh could read as more."""
    expected = "a hostname or an IPv4/IPv6 address (no spaces or shell metacharacters)"
    if not v or v.startswith("-") or any(ch.isspace() or ch in _SHELL_META for ch in v):
        return expected
    try:
        addr = ipaddress.ip_address(v)
    except ValueError:
        pass
    else:
        scope = getattr(addr, "scope_id", None)
        return None if scope is None or _SCOPE_RE.match(scope) else expected
    if ":" in v or len(v) > 253:
        return expected
    labels = v[:-1].split(".") if v.endswith(".") else v.split(".")
    if all(_LABEL_RE.match(label) for label in labels):
        return None
    return expected


def _check_pci(v: str) -> str | None:
    return None if _PCI_RE.match(v) else "a PCI address [dddd:]bb:dd.f in hex, e.g. 0000:3b:00.0"


def _norm_pci(v: str) -> str:
    m = _PCI_RE.match(v)
    assert m
    domain, bus, dev, fn = m.groups()
    return f"{(domain or '0000').lower()}:{bus.lower()}:{dev.lower()}.{fn}"


def _check_vmnic(v: str) -> str | None:
    return None if _VMNIC_RE.match(v) else "an ESXi uplink name vmnicN, e.g. vmnic2"


def _check_netdev(v: str) -> str | None:
    if _NETDEV_RE.match(v) and v not in (".", "..") and not v.startswith("-"):
        return None
    return "a Linux interface name: 1-15 characters, no '/', ':', whitespace or shell metacharacters"


def _check_rdma_dev(v: str) -> str | None:
    return None if _RDMA_DEV_RE.match(v) and not v.startswith("-") else "an RDMA device name, e.g. mlx5_1"


def _check_ip(v: str) -> str | None:
    expected = "an IP address with a prefix length, e.g. 192.168.100.11/24"
    if "/" not in v:
        return expected
    try:
        ipaddress.ip_interface(v)
    except ValueError:
        return expected
    return None


def _check_switch_port(v: str) -> str | None:
    expected = "'switch-name:port', e.g. s5232f-1:ethernet1/1/1"
    sw, sep, port = v.partition(":")
    if not sep or _check_name(sw) or not _PORT_NAME_RE.match(port):
        return expected
    return None


def _check_username(v: str) -> str | None:
    if _USER_RE.match(v) and not v.startswith("-"):
        return None
    return "a user name of letters, digits, '.', '_', '-', '@' or '\\'"


def _check_path(v: str) -> str | None:
    if v and not any(ch in "\n\r\0" for ch in v):
        return None
    return "a file path"


def _check_vm(v: str) -> str | None:
    if 0 < len(v) <= 80 and v.isprintable():
        return None
    return "a vCenter VM name (1-80 printable characters)"


def _check_env(v: str) -> str | None:
    return None if _ENV_RE.match(v) else "an environment variable name, e.g. ESXI_PASSWORD"


def _check_keyring(v: str) -> str | None:
    service, sep, user = v.rpartition("/")
    if sep and service and user and v.isprintable():
        return None
    return "a keyring reference 'service/user', e.g. roce-wizard/s5232f-1"


# --------------------------------------------------------------------------------------------
# YAML nodes → located values

_NULL = "tag:yaml.org,2002:null"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_STR = "tag:yaml.org,2002:str"


def _line(node: Node) -> int:
    return node.start_mark.line + 1


def _describe(node: Node) -> str:
    if isinstance(node, MappingNode):
        return "a mapping"
    if isinstance(node, SequenceNode):
        return "a list"
    if node.tag == _NULL:
        return "nothing (null)"
    return repr(node.value)


def _construct(node: Node) -> Any:
    return SafeConstructor().construct_object(node, deep=True)


@dataclass
class _Ctx:
    file: str
    warnings: list[str] = field(default_factory=list)

    def error(self, node: Node | None, fld: str, problem: str, expected: str | None = None) -> InventoryError:
        if expected and "expected" not in problem and "valid:" not in problem:
            problem = f"{problem}; expected {expected}"
        return InventoryError(
            problem, file=self.file, line=_line(node) if node is not None else None, field=fld, expected=expected
        )

    def expect(self, node: Node, fld: str, expected: str, got: str | None = None) -> InventoryError:
        return self.error(node, fld, f"expected {expected}, got {got or _describe(node)}", expected)

    def warn(self, node: Node, message: str) -> None:
        text = f"{self.file}:{_line(node)}: {message}"
        if text not in self.warnings:
            self.warnings.append(text)

    # -- shapes

    def mapping(self, node: Node, fld: str, expected: str = "a mapping") -> dict[str, tuple[Node, Node]]:
        """key → (key node, value node); YAML merge keys honoured, duplicate keys refused."""
        if not isinstance(node, MappingNode):
            raise self.expect(node, fld, expected)
        seen: dict[str, Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            if not isinstance(key_node, ScalarNode) or key_node.tag == _NULL:
                raise self.expect(key_node, fld, "string keys", _describe(key_node))
            if key_node.value in seen:
                raise self.error(
                    key_node,
                    _join(fld, key_node.value),
                    f"duplicate key (first at line {_line(seen[key_node.value])})",
                    "each key once",
                )
            seen[key_node.value] = key_node
        try:
            SafeConstructor().flatten_mapping(node)
        except yaml.YAMLError as exc:
            raise self.error(node, fld, f"bad merge key: {exc.problem}", "a mapping") from None
        out: dict[str, tuple[Node, Node]] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode) or key_node.tag == _NULL:
                raise self.expect(key_node, fld, "string keys", _describe(key_node))
            out[key_node.value] = (key_node, value_node)
        return out

    def known(self, items: Mapping[str, tuple[Node, Node]], valid: Iterable[str], fld: str, what: str) -> None:
        valid = tuple(valid)
        for key, (key_node, _) in items.items():
            if key not in valid:
                raise self.error(
                    key_node,
                    _join(fld, key),
                    f"unknown {what} {key!r}; valid: {', '.join(valid)}",
                    f"one of {', '.join(valid)}",
                )

    def sequence(self, node: Node, fld: str, expected: str = "a list") -> list[Node]:
        if isinstance(node, ScalarNode) and node.tag == _NULL:
            return []
        if not isinstance(node, SequenceNode):
            raise self.expect(node, fld, expected)
        return list(node.value)

    # -- scalars

    def text(self, node: Node, fld: str, expected: str = "a string") -> str:
        """A string as written (so `vm: 01` stays '01' and `pf_pci: 12:00.0` is not a float)."""
        if not isinstance(node, ScalarNode) or node.tag == _NULL:
            raise self.expect(node, fld, expected)
        if not node.value.strip():
            raise self.expect(node, fld, expected, "an empty string")
        return node.value.strip() if node.style is None else node.value

    def integer(self, node: Node, fld: str, lo: int | None = None, hi: int | None = None) -> int:
        expected = _int_expected(lo, hi)
        if not isinstance(node, ScalarNode) or node.tag != _INT:
            raise self.expect(node, fld, expected)
        value = _construct(node)
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise self.expect(node, fld, expected, str(value))
        return value

    def number(self, node: Node, fld: str, lo: float, hi: float | None, lo_open: bool = False) -> float:
        bounds = f" {'>' if lo_open else '≥'} {lo}" + (f" and ≤ {hi}" if hi is not None else "")
        expected = f"a number{bounds}"
        if not isinstance(node, ScalarNode) or node.tag not in (_INT, _FLOAT):
            raise self.expect(node, fld, expected)
        value = float(_construct(node))
        if value != value or (value <= lo if lo_open else value < lo) or (hi is not None and value > hi):
            raise self.expect(node, fld, expected, repr(node.value))
        return value

    def boolean(self, node: Node, fld: str) -> bool:
        if not isinstance(node, ScalarNode) or node.tag != _BOOL:
            raise self.expect(node, fld, "true or false")
        return bool(_construct(node))


def _int_expected(lo: int | None, hi: int | None) -> str:
    if lo is not None and hi is not None:
        return f"an integer {lo}..{hi}"
    if lo is not None:
        return f"an integer ≥ {lo}"
    return "an integer"


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


@dataclass
class _Field:
    """A field value with where it was written (an entry, or the kind's defaults)."""

    node: Node
    path: str


def _is_null(node: Node) -> bool:
    return isinstance(node, ScalarNode) and node.tag == _NULL


# -- policy (docs/policy.md)


def _load_policy(ctx: _Ctx, node: Node) -> Policy:
    if isinstance(node, ScalarNode) and node.tag == _NULL:
        return Policy()
    items = ctx.mapping(node, "policy")
    valid = sorted(POLICY_KEYS)
    merged: dict[str, Any] = {}
    for key, (key_node, value_node) in items.items():
        fld = f"policy.{key}"
        if key not in POLICY_KEYS:
            hint = "; VFs per port are set per target as roce.vfs" if key == "vfs_per_port" else ""
            raise ctx.error(
                key_node,
                fld,
                f"unknown policy key {key!r}{hint}; valid: {', '.join(valid)}",
                f"one of {', '.join(valid)}",
            )
        merged[key] = _policy_value(ctx, key, value_node, fld)
    return Policy(**merged)


NUM_OF_VFS_RULES = ("sum_plus_one", "per_port")  # RW208's judging rule (docs/policy.md)


def _policy_value(ctx: _Ctx, key: str, node: Node, fld: str) -> Any:
    if key == "pfc_priority":
        return ctx.integer(node, fld, 0, 7)
    if key in ("roce_dscp", "cnp_dscp"):
        return ctx.integer(node, fld, 0, 63)
    if key == "cnp_priority":
        return ctx.integer(node, fld, 0, 7)
    if key in ("eth_mtu", "switch_mtu"):
        return ctx.integer(node, fld, 68, 9216)
    if key == "roce_mtu":
        choices = (256, 512, 1024, 2048, 4096)
        value = ctx.integer(node, fld)
        if value not in choices:
            raise ctx.expect(node, fld, "one of 256, 512, 1024, 2048, 4096", str(value))
        return value
    if key == "min_bw_ratio":
        return ctx.number(node, fld, 0.0, 1.0, lo_open=True)
    if key == "max_small_msg_lat_us":
        return ctx.number(node, fld, 0.0, None, lo_open=True)
    if key == "trust":
        value = ctx.text(node, fld, "'dscp' or 'pcp'")
        if value not in ("dscp", "pcp"):
            raise ctx.expect(node, fld, "'dscp' or 'pcp'")
        return value
    if key == "num_of_vfs_rule":
        value = ctx.text(node, fld, "'sum_plus_one' or 'per_port'")
        if value not in NUM_OF_VFS_RULES:
            raise ctx.expect(node, fld, "'sum_plus_one' or 'per_port'")
        return value
    if key == "min_nmlx5_version":
        return _version(ctx, node, fld)
    if key == "min_firmware":
        table = dict(Policy().min_firmware)  # a site names only the cards it changes
        for dev, (_, value_node) in ctx.mapping(node, fld, "a mapping of mst device type to version").items():
            table[dev] = _version(ctx, value_node, f"{fld}.{dev}")
        return table
    if key == "vib_datastore":
        value = ctx.text(node, fld, "an absolute datastore path")
        bad = _SHELL_META - {"~"} | {"\t"}
        if not value.startswith("/") or any(ch in bad for ch in value):
            raise ctx.expect(
                node,
                fld,
                "an absolute datastore path without shell metacharacters, e.g. /vmfs/volumes/datastore1/mellanox",
            )
        return value
    if key == "mpi_env":  # words that reach a remote shell (mpirun -x): refused here, not mid-run
        value = _construct(node)
        if not isinstance(value, str) or bad_words(value):
            raise ctx.expect(node, fld, ENV_EXPECTED)
        return value
    # a key added to Policy without a rule here: take it as the YAML value of the default's type
    default = getattr(Policy(), key)
    value = _construct(node)
    if type(value) is not type(default):
        raise ctx.expect(node, fld, f"a {type(default).__name__}")
    return value


def _version(ctx: _Ctx, node: Node, fld: str) -> str:
    value = ctx.text(node, fld, "a dotted version, e.g. 16.29.1016")
    if not _VERSION_RE.match(value):
        raise ctx.expect(node, fld, "a dotted version, e.g. 16.29.1016")
    return value
