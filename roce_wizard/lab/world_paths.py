"""Attribute paths on the world's objects, as a scenario file's `set:` names them
(`esx-02: cards[1].config.NUM_OF_VFS.current: 8`): find the target, walk the path, check the type, set."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from roce_wizard.lab.world import World


class PathError(ValueError):
    """A path that names nothing, or a value of another type than the one it replaces; the message says which."""


def known_targets(world: World) -> str:
    names = [*world.hosts, *world.guests, *(f"vm:{v}" for v in world.vms), *world.switches]
    shown = ", ".join(names[:12]) + (" …" if len(names) > 12 else "")
    return f"this world has {shown}"


def set_root(world: World, name: str) -> Any:
    if name == "world":
        return world
    if name == "vcenter":
        return world.vcenter
    if name.startswith("vm:"):
        return world.vms.get(name[3:])
    for table in (world.hosts, world.guests, world.switches):
        if name in table:
            return table[name]
    return None


_SEGMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)?((?:\[[^\]]+\])*)$")


def _path_steps(dotted: str) -> list[tuple[str, str]]:
    """`cards[1].config.NUM_OF_VFS.current` -> [(attr, cards), (index, 1), (attr, config), …]."""
    steps: list[tuple[str, str]] = []
    if not dotted or dotted.startswith(".") or dotted.endswith(".") or ".." in dotted:
        raise PathError("expected a dotted attribute path like cards[1].config.NUM_OF_VFS.current")
    for segment in dotted.split("."):
        m = _SEGMENT.match(segment)
        if not m or not (m.group(1) or m.group(2)):
            raise PathError(f"bad path segment {segment!r}")
        if m.group(1):
            steps.append(("attr", m.group(1)))
        for index in re.findall(r"\[([^\]]+)\]", m.group(2) or ""):
            steps.append(("index", index.strip()))
    return steps


def _step(obj: Any, kind: str, key: str, where: str) -> Any:
    if kind == "attr" and isinstance(obj, dict):
        if key not in obj:
            raise PathError(f"no key {key!r} at {where or 'the target'} (has {', '.join(map(str, obj)) or 'none'})")
        return obj[key]
    if kind == "attr":
        if not dataclasses.is_dataclass(obj) or key not in {f.name for f in dataclasses.fields(obj)}:
            valid = ", ".join(f.name for f in dataclasses.fields(obj)) if dataclasses.is_dataclass(obj) else "none"
            raise PathError(f"no attribute {key!r} on {type(obj).__name__} (has {valid})")
        return getattr(obj, key)
    if isinstance(obj, list):
        if re.fullmatch(r"-?\d+", key):
            i = int(key)
            if not -len(obj) <= i < len(obj):
                raise PathError(f"index {i} out of range at {where} ({len(obj)} items)")
            return obj[i]
        for item in obj:
            if getattr(item, "name", None) == key:
                return item
        names = [getattr(item, "name", None) for item in obj]
        raise PathError(f"no item named {key!r} at {where} (has {', '.join(str(n) for n in names if n)})")
    if isinstance(obj, dict):
        if key not in obj:
            raise PathError(f"no key {key!r} at {where} (has {', '.join(map(str, obj)) or 'none'})")
        return obj[key]
    raise PathError(f"{where} is a {type(obj).__name__}: it cannot be indexed")


def _coerce(current: Any, value: Any, where: str) -> Any:
    if current is None or value is None:
        return value
    if isinstance(current, bool):
        if not isinstance(value, bool):
            raise PathError(f"expected true/false for {where}, got {value!r}")
        return value
    if isinstance(current, int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise PathError(f"expected an integer for {where}, got {value!r}")
        return value
    if isinstance(current, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise PathError(f"expected a number for {where}, got {value!r}")
        return float(value)
    if isinstance(current, str):
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise PathError(f"expected a string for {where}, got {value!r}")
        return str(value)
    if isinstance(current, set):
        if not isinstance(value, list):
            raise PathError(f"expected a list for {where}, got {value!r}")
        return set(value)
    if isinstance(current, (list, tuple)):
        if not isinstance(value, list):
            raise PathError(f"expected a list for {where}, got {value!r}")
        return type(current)(value)
    if isinstance(current, dict):
        if not isinstance(value, dict):
            raise PathError(f"expected a mapping for {where}, got {value!r}")
        return value
    raise PathError(f"{where} is a {type(current).__name__}: set its attributes one by one")


def assign(obj: Any, dotted: str, value: Any) -> None:
    """Set `obj.<dotted path>` = value, checking that the path exists and the type fits."""
    steps = _path_steps(dotted)
    where = ""
    for kind, key in steps[:-1]:
        obj = _step(obj, kind, key, where)
        where = f"{where}.{key}" if kind == "attr" else f"{where}[{key}]"
        where = where.lstrip(".")
    kind, key = steps[-1]
    where = (f"{where}.{key}" if kind == "attr" else f"{where}[{key}]").lstrip(".")
    if isinstance(obj, dict):
        # a dict may gain keys (module_params in a fresh world has none yet)
        obj[key] = _coerce(obj.get(key), value, where)
        return
    if kind == "attr":
        current = _step(obj, kind, key, where)
        setattr(obj, key, _coerce(current, value, where))
        return
    if isinstance(obj, list):
        current = _step(obj, kind, key, where)
        if not re.fullmatch(r"-?\d+", key):
            raise PathError(f"{where}: set an attribute of the item, e.g. {where}.mtu")
        obj[int(key)] = _coerce(current, value, where)
        return
    raise PathError(f"{where}: cannot set an item of a {type(obj).__name__}")
