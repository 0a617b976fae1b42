"""inventory.yaml → an :class:`Inventory`: targets, site policy and warnings.

The YAML is composed through :mod:`roce_wizard.yamlguard` (depth, aliases and tags bounded), then each
section is walked node by node so every error names the file, the line, the field and what was expected.
"""

from __future__ import annotations

import copy
import fnmatch
import ipaddress
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import Node, ScalarNode

from roce_wizard import yamlguard
from roce_wizard.inventory.fields import (
    _INT,
    _NULL,
    DEVICE_TYPES,
    KIND_FIELDS,
    ROCE_FIELDS,
    TOP_KEYS,
    InventoryError,
    _check_address,
    _check_ip,
    _check_name,
    _check_netdev,
    _check_path,
    _check_pci,
    _check_rdma_dev,
    _check_switch_port,
    _check_username,
    _check_vm,
    _check_vmnic,
    _construct,
    _Ctx,
    _Field,
    _is_null,
    _join,
    _line,
    _load_policy,
    _norm_pci,
)
from roce_wizard.inventory.hostlist import HostlistError, expand_hostlist
from roce_wizard.inventory.options import OptionProblem, option_value
from roce_wizard.inventory.secrets import _passwords
from roce_wizard.model import Credentials, Policy, RoceSpec, Target, TargetKind

# --------------------------------------------------------------------------------------------
# The inventory


@dataclass
class Inventory:
    path: Path
    targets: list[Target]
    policy: Policy = field(default_factory=Policy)
    warnings: list[str] = field(default_factory=list)

    def by_kind(self, kind: TargetKind | str) -> list[Target]:
        kind = TargetKind(kind)
        return [t for t in self.targets if t.kind is kind]

    def get(self, name: str) -> Target | None:
        return next((t for t in self.targets if t.name == name), None)

    def __contains__(self, name: object) -> bool:
        return any(t.name == name for t in self.targets)

    def select(self, hosts: Iterable[str]) -> list[Target]:
        """Targets named by ``hosts`` (exact names, host ranges, or shell globs), in file order.

        An empty selection means every target. A pattern matching nothing raises
        :class:`InventoryError` (a typo in ``--host`` must not silently check nothing).
        """
        patterns = [h for h in hosts if h and h.strip()]
        if not patterns:
            return list(self.targets)
        names = [t.name for t in self.targets]
        wanted: set[str] = set()
        for pattern in patterns:
            matched = self._match(pattern.strip(), names)
            if not matched:
                shown = ", ".join(names[:20]) + (", …" if len(names) > 20 else "")
                raise InventoryError(
                    f"no target matches {pattern!r} (targets: {shown or 'none'})",
                    file=str(self.path),
                    field="hosts",
                    expected="a target name, a host range or a glob",
                )
            wanted.update(matched)
        return [t for t in self.targets if t.name in wanted]

    @staticmethod
    def _match(pattern: str, names: list[str]) -> list[str]:
        if pattern in names:
            return [pattern]
        # a host range (esx-[01-04], a,b) first: its brackets are ranges, not glob classes
        try:
            expanded = expand_hostlist(pattern)
        except HostlistError:
            expanded = []
        if expanded and (len(expanded) > 1 or expanded[0] != pattern):
            out: list[str] = []
            for one in expanded:
                out.extend(Inventory._match(one, names))
            return out
        if any(ch in pattern for ch in "*?["):
            return [n for n in names if fnmatch.fnmatchcase(n, pattern)]
        return []


# --------------------------------------------------------------------------------------------
# Loading


def load_inventory(path: str | os.PathLike[str]) -> Inventory:
    """Read and validate an inventory file. Raises :class:`InventoryError` with file:line."""
    file = os.fspath(path)
    ctx = _Ctx(file)
    try:
        text = Path(file).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InventoryError("no such file", file=file, expected="an inventory file") from None
    except IsADirectoryError:
        raise InventoryError("is a directory", file=file, expected="an inventory file") from None
    except UnicodeDecodeError as exc:
        raise InventoryError(
            f"not UTF-8 text (byte {exc.start})", file=file, expected="a UTF-8 YAML file"
        ) from None
    except OSError as exc:
        raise InventoryError(f"cannot read: {exc.strerror}", file=file, expected="a readable file") from None
    try:  # depth, aliases and tags bounded while composing (roce_wizard/yamlguard.py)
        root = yamlguard.compose(text)
    except yamlguard.YamlRefused as exc:
        raise InventoryError(
            f"refused: {exc.problem}", file=file, line=exc.line, expected="a plain YAML inventory"
        ) from None
    except yaml.MarkedYAMLError as exc:
        # context and problem only: the snippet yaml adds could show a plaintext password
        mark = exc.problem_mark or exc.context_mark
        what = "; ".join(p for p in (exc.context, exc.problem) if p)
        if mark and "flow" in what and _unquoted_range(text, mark.line):
            what += ' (a host range inside {…} or […] must be quoted: {name: "esx-[01-16]"})'
        raise InventoryError(
            f"YAML syntax error: {what}",
            file=file,
            line=mark.line + 1 if mark else None,
            expected="valid YAML",
        ) from None
    except yaml.YAMLError as exc:
        raise InventoryError(f"YAML error: {exc}", file=file, expected="valid YAML") from None
    if root is None or (isinstance(root, ScalarNode) and root.tag == _NULL):
        raise InventoryError("the file is empty", file=file, expected="a mapping with 'targets'")

    top = ctx.mapping(root, "", "a mapping with 'policy', 'defaults' and 'targets'")
    ctx.known(top, TOP_KEYS, "", "top-level key")
    if "targets" not in top:
        raise InventoryError(
            "no 'targets' section", file=file, line=_line(root), field="targets", expected="a 'targets' mapping"
        )

    policy = _load_policy(ctx, top["policy"][1]) if "policy" in top else Policy()
    defaults = _load_defaults(ctx, top["defaults"][1]) if "defaults" in top else {}
    targets, refs = _load_targets(ctx, top["targets"][1], defaults)
    _check_references(ctx, targets, refs)
    if "policy" in top and policy.switch_mtu <= policy.eth_mtu:
        ctx.warn(
            top["policy"][1],
            f"policy: switch_mtu {policy.switch_mtu} does not exceed eth_mtu {policy.eth_mtu}; "
            "the switch must carry every host frame",
        )
    return Inventory(path=Path(file), targets=targets, policy=policy, warnings=ctx.warnings)


def _unquoted_range(text: str, line: int) -> bool:
    """Whether a line holds a host range like esx-[01-16]: YAML reads '[' in {…} as a list."""
    lines = text.splitlines()
    return line < len(lines) and re.search(r"[\w.-]\[\d", lines[line]) is not None


# -- defaults


def _load_defaults(ctx: _Ctx, node: Node) -> dict[TargetKind, dict[str, _Field]]:
    if isinstance(node, ScalarNode) and node.tag == _NULL:
        return {}
    kinds = [k.value for k in TargetKind]
    items = ctx.mapping(node, "defaults", "a mapping of target kind to default fields")
    ctx.known(items, kinds, "defaults", "target kind")
    out: dict[TargetKind, dict[str, _Field]] = {}
    for kind_name, (_, kind_node) in items.items():
        kind = TargetKind(kind_name)
        prefix = f"defaults.{kind_name}"
        if isinstance(kind_node, ScalarNode) and kind_node.tag == _NULL:
            continue
        fields = ctx.mapping(kind_node, prefix, "a mapping of target fields")
        valid = [f for f in KIND_FIELDS[kind] if f != "name"]
        ctx.known(fields, valid, prefix, "field")
        out[kind] = {key: _Field(value, _join(prefix, key)) for key, (_, value) in fields.items()}
    return out


# -- targets


@dataclass
class _Refs:
    """Where each target's cross references were written, for errors after all are loaded."""

    line: int
    host: _Field | None = None
    switch_ports: list[tuple[str, _Field]] = field(default_factory=list)


def _load_targets(
    ctx: _Ctx, node: Node, defaults: dict[TargetKind, dict[str, _Field]]
) -> tuple[list[Target], dict[str, _Refs]]:
    kinds = [k.value for k in TargetKind]
    items = ctx.mapping(node, "targets", f"a mapping of target kind ({', '.join(kinds)}) to lists")
    ctx.known(items, kinds, "targets", "target kind")
    targets: list[Target] = []
    refs: dict[str, _Refs] = {}
    first_seen: dict[str, tuple[str, int]] = {}
    for kind_name, (_, list_node) in items.items():
        kind = TargetKind(kind_name)
        entries = ctx.sequence(list_node, f"targets.{kind_name}", "a list of targets")
        for index, entry in enumerate(entries):
            prefix = f"targets.{kind_name}[{index}]"
            built = _load_entry(ctx, kind, entry, prefix, defaults.get(kind, {}))
            for target, ref, name_node in built:
                if target.name in first_seen:
                    other_path, other_line = first_seen[target.name]
                    raise ctx.error(
                        name_node,
                        f"{prefix}.name",
                        f"duplicate target name {target.name!r} (also {other_path} at {ctx.file}:{other_line})",
                        "a name no other target uses",
                    )
                first_seen[target.name] = (prefix, _line(name_node))
                targets.append(target)
                refs[target.name] = ref
    return targets, refs


def _load_entry(
    ctx: _Ctx, kind: TargetKind, node: Node, prefix: str, defaults: dict[str, _Field]
) -> list[tuple[Target, _Refs, Node]]:
    items = ctx.mapping(node, prefix, "a mapping with at least 'name'")
    ctx.known(items, KIND_FIELDS[kind], prefix, "field")
    if "name" not in items:
        raise ctx.error(node, f"{prefix}.name", "missing 'name'", "a target name or host range, e.g. esx-[01-16]")

    fields: dict[str, _Field] = dict(defaults)
    fields.update({key: _Field(value, _join(prefix, key)) for key, (_, value) in items.items()})

    name_f = fields["name"]
    name_text = ctx.text(name_f.node, name_f.path, "a target name or host range")
    try:
        names = expand_hostlist(name_text)
    except HostlistError as exc:
        raise ctx.expect(name_f.node, name_f.path, "a name or host range like esx-[01-16]", str(exc)) from None
    for n in names:
        if problem := _check_name(n):
            raise ctx.expect(name_f.node, name_f.path, problem, repr(n))
    count = len(names)

    def spread(f: _Field, text: str, check: Callable[[str], str | None] | None) -> list[str]:
        try:
            values = expand_hostlist(text)
        except HostlistError as exc:
            raise ctx.expect(f.node, f.path, "a value or a host range like esx-[01-16]", str(exc)) from None
        if len(values) == 1:
            values = values * count
        elif len(values) != count:
            raise ctx.error(
                f.node,
                f.path,
                f"{text!r} expands to {len(values)} values but name {name_text!r} to {count} targets",
                f"1 or {count} values",
            )
        if check:
            for v in values:
                if problem := check(v):
                    raise ctx.expect(f.node, f.path, problem, repr(v))
        return values

    def strings(key: str, check: Callable[[str], str | None] | None, expected: str = "a string") -> list[str | None]:
        f = fields.get(key)
        if f is None or (isinstance(f.node, ScalarNode) and f.node.tag == _NULL):
            return [None] * count
        return list(spread(f, ctx.text(f.node, f.path, expected), check))

    addresses = strings("address", _check_address)
    addresses = [a if a is not None else n for a, n in zip(addresses, names)]
    for n, a in zip(names, addresses):  # a default address is the name: it must be one too
        if problem := _check_address(a):
            f = fields.get("address", name_f)
            raise ctx.expect(f.node, f.path, problem, repr(a))
    usernames = strings("username", _check_username)
    key_files = strings("key_file", _check_path)
    hosts = strings("host", _check_name, "a target name")
    vms = strings("vm", _check_vm)

    port = None
    if (f := fields.get("port")) is not None and not _is_null(f.node):
        port = ctx.integer(f.node, f.path, 1, 65535)
    use_agent = True
    if (f := fields.get("use_agent")) is not None:
        use_agent = ctx.boolean(f.node, f.path)

    device_type = None
    if kind is TargetKind.SWITCH:
        f = fields.get("device_type")
        expected = f"one of {', '.join(DEVICE_TYPES)}"
        if f is None:
            raise ctx.error(node, f"{prefix}.device_type", f"missing 'device_type'; expected {expected}", expected)
        device_type = ctx.text(f.node, f.path, expected)
        if device_type not in DEVICE_TYPES:
            raise ctx.expect(f.node, f.path, expected)

    options: dict[str, Any] = {}  # the kind's defaults, then the entry's own, key by key, each checked
    own_options = _Field(items["options"][1], f"{prefix}.options") if "options" in items else None
    for f in (defaults.get("options"), own_options):
        if f is None or _is_null(f.node):
            continue
        for key, (key_node, value_node) in ctx.mapping(f.node, f.path, "a mapping of transport options").items():
            try:
                options[key] = option_value(kind, key, key_node, value_node)
            except OptionProblem as exc:
                raise ctx.error(exc.node, _join(f.path, key), exc.problem, exc.expected) from None

    passwords = _passwords(ctx, fields.get("password"), names, usernames, spread)
    roces = _roce(ctx, kind, defaults.get("roce"), items.get("roce", (None, None))[1], prefix, count, spread)

    line = _line(node)
    out = []
    for i, n in enumerate(names):
        creds = Credentials(
            username=usernames[i] if usernames[i] is not None else Credentials.username,
            password=passwords[i],
            key_file=key_files[i],
            use_agent=use_agent,
        )
        target = Target(
            name=n,
            kind=kind,
            address=addresses[i],
            port=port,
            credentials=creds,
            roce=roces[i][0],
            host=hosts[i],
            vm=vms[i],
            device_type=device_type,
            options=copy.deepcopy(options),
            source=f"{ctx.file}:{line}",
        )
        ref = _Refs(line=line, host=fields.get("host"), switch_ports=roces[i][1])
        out.append((target, ref, name_f.node))
    return out


def _roce(
    ctx: _Ctx, kind: TargetKind, default_node: _Field | None, own_node: Node | None, prefix: str, count: int, spread
) -> list[tuple[RoceSpec, list[tuple[str, _Field]]]]:
    empty = [(RoceSpec(), []) for _ in range(count)]
    valid = ROCE_FIELDS.get(kind)
    fields: dict[str, _Field] = {}
    for f in (default_node, _Field(own_node, f"{prefix}.roce") if own_node is not None else None):
        if f is None or _is_null(f.node):
            continue
        items = ctx.mapping(f.node, f.path, "a mapping of RoCE fields")
        ctx.known(items, valid or (), f.path, "roce field")
        fields.update({k: _Field(v, f"{f.path}.{k}") for k, (_, v) in items.items()})
    if not fields:
        return empty

    def one(key: str, check, expected: str) -> list[str | None]:
        f = fields.get(key)
        if f is None or _is_null(f.node):
            return [None] * count
        return list(spread(f, ctx.text(f.node, f.path, expected), check))

    def many(key: str, check, expected: str) -> list[list[tuple[str, _Field]]]:
        """A list of strings, each spread over the targets: per target [(value, where)]."""
        per_target: list[list[tuple[str, _Field]]] = [[] for _ in range(count)]
        f = fields.get(key)
        if f is None:
            return per_target
        for i, item in enumerate(ctx.sequence(f.node, f.path, f"a list of {expected}")):
            sub = _Field(item, f.path)
            for t, value in enumerate(spread(sub, ctx.text(item, f.path, f"a list of {expected}"), check)):
                per_target[t].append((value, _Field(item, f"{f.path}[{i}]")))
        return per_target

    pf = one("pf_pci", _check_pci, "a PCI address")
    netdev = one("netdev", _check_netdev, "an interface name")
    rdma_dev = one("rdma_dev", _check_rdma_dev, "an RDMA device name")
    ip = one("ip", _check_ip, "an IP address with prefix length")
    vmnics = many("vmnics", _check_vmnic, "vmnic names")
    ports = many("switch_ports", _check_switch_port, "'switch:port' strings")

    vfs: tuple[int, ...] = ()
    if (f := fields.get("vfs")) is not None:
        values = []
        for item in ctx.sequence(f.node, f.path, "a list of integers"):
            if not isinstance(item, ScalarNode) or item.tag != _INT:
                raise ctx.expect(item, f.path, "a list of integers")
            v = _construct(item)
            if v < 0:
                raise ctx.expect(item, f.path, "a list of integers ≥ 0", str(v))
            values.append(v)
        vfs = tuple(values)
        if vmnics[0] and len(vfs) != len(vmnics[0]):
            raise ctx.error(
                f.node,
                f.path,
                f"{len(vfs)} VF counts for {len(vmnics[0])} vmnics",
                "one VF count per vmnic, in vmnic order",
            )

    out = []
    for t in range(count):
        spec = RoceSpec(
            pf_pci=_norm_pci(pf[t]) if pf[t] else None,
            vmnics=tuple(v for v, _ in vmnics[t]),
            vfs=vfs,
            netdev=netdev[t],
            rdma_dev=rdma_dev[t],
            ip=str(ipaddress.ip_interface(ip[t])) if ip[t] else None,
            switch_ports=tuple(v for v, _ in ports[t]),
        )
        out.append((spec, ports[t]))
    return out


def _check_references(ctx: _Ctx, targets: list[Target], refs: dict[str, _Refs]) -> None:
    kinds = {t.name: t.kind for t in targets}
    wanted = {
        TargetKind.GUEST: (TargetKind.ESXI,),
        TargetKind.BMC: (TargetKind.ESXI, TargetKind.LINUX),
    }
    for t in targets:
        ref = refs[t.name]
        allowed = wanted.get(t.kind)
        if allowed and t.host is not None and kinds.get(t.host) not in allowed:
            names = " or ".join(k.value for k in allowed)
            found = f"a {kinds[t.host].value} target" if t.host in kinds else "no such target"
            assert ref.host is not None
            raise ctx.error(
                ref.host.node,
                ref.host.path,
                f"{t.name}: host {t.host!r} must name an {names} target in this file ({found})",
                f"the name of an {names} target",
            )
        for value, where in ref.switch_ports:
            switch = value.partition(":")[0]
            if kinds.get(switch) is not TargetKind.SWITCH:
                ctx.warn(
                    where.node,
                    f"{where.path}: switch {switch!r} is not a switch target in this inventory; "
                    "host-switch checks will not see that port",
                )
