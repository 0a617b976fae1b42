"""mlxconfig on the simulated Linux host."""

from __future__ import annotations

from typing import Any

from roce_wizard.lab.guest.state import _err, _gs, _guest, _ok
from roce_wizard.lab.proto import Ctx, Reply
from roce_wizard.lab.world import Card

# ---------------------------------------------------------------------------- bare metal: MFT mlxconfig

_MLX_WORDS = {"LINK_TYPE_P1": {"IB": 1, "ETH": 2, "VPI": 3}, "LINK_TYPE_P2": {"IB": 1, "ETH": 2, "VPI": 3}}
_MFT_NO_DEV = "-E- No devices found or specified, mst might be stopped, run 'mst start' to load MST modules"


def _mlx_value(name: str, v: Any) -> str:
    if isinstance(v, bool):
        return "True(1)" if v else "False(0)"
    if isinstance(v, str):
        return f"{v}({_MLX_WORDS.get(name, {}).get(v, 0)})"
    return str(v)


def _mlx_parse(name: str, raw: str, old: Any) -> Any:
    s = raw.strip()
    if isinstance(old, bool):
        if s.lower() not in ("0", "1", "true", "false", "true(1)", "false(0)"):
            raise ValueError(s)
        return s.lower() in ("1", "true", "true(1)")
    words = _MLX_WORDS.get(name)
    if words:
        for w, n in words.items():
            if s.upper() in (w, str(n), f"{w}({n})"):
                return w
        raise ValueError(s)
    return int(s, 0)


def prog_mlxconfig(ctx: Ctx, argv: list[str]) -> Reply:
    world, guest = ctx.world, _guest(ctx.world, ctx.target)
    card: Card | None = _gs(world, guest)["card"]
    args = argv[1:]
    dev, extended, yes, cmd, rest = None, False, False, None, []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-d", "--dev") and i + 1 < len(args):
            dev = args[i + 1]
            i += 2
            continue
        if a in ("-e", "--enable_verbosity"):
            extended = True
        elif a in ("-y", "--yes"):
            yes = True
        elif cmd is None and a in ("q", "query", "s", "set"):
            cmd = "query" if a in ("q", "query") else "set"
        else:
            rest.append(a)
        i += 1
    if card is None or dev is None:
        return _err(_MFT_NO_DEV, 1)
    valid = {card.pci(1), f"0000:{card.pci(1)}", card.pci(2), f"0000:{card.pci(2)}", f"/dev/mst/{card.mst_name}",
             card.mst_name}
    if dev not in valid:
        return _err(f"-E- Failed to open the device: {dev}", 1)
    head = ["", "Device #1:", "----------", "", f"Device type:    {card.model}", f"Name:           {card.part_number}",
            f"Description:    {card.description}", f"Device:         {dev}", ""]
    if cmd in ("query", None):
        if extended:
            out = [*head, f"Configurations:{'Default':>37}         Current         Next Boot"]
            star = False
            for k, p in card.config.items():
                mark = "*" if p.next_boot != p.default or p.current != p.default else " "
                star = star or mark == "*"
                out.append(f"{mark}        {k:<36}{_mlx_value(k, p.default):<16}{_mlx_value(k, p.current):<16}"
                           f"{_mlx_value(k, p.next_boot)}")
            if star:
                out.append("The '*' shows parameters with next value different from default/current value.")
        else:
            out = [*head, f"Configurations:{'Next Boot':>47}"]
            out += [f"         {k:<36}{_mlx_value(k, p.next_boot)}" for k, p in card.config.items()]
        return _ok("\n".join(out) + "\n")
    changes: dict[str, Any] = {}
    for kv in rest:
        k, eq, v = kv.partition("=")
        if not eq or k not in card.config:
            return _err(f"-E- The Device doesn't support {k} parameter", 1)
        try:
            changes[k] = _mlx_parse(k, v, card.config[k].next_boot)
        except ValueError:
            return _err(f"-E- Bad value argument for {k}: {v}", 1)
    out = [*head, f"Configurations:{'Next Boot':>47}       New"]
    out += [f"         {k:<36}{_mlx_value(k, card.config[k].next_boot):<21}{_mlx_value(k, v)}" for k, v in changes.items()]
    if not yes:
        return _ok("\n".join([*out, "", " Apply new Configuration? (y/n) [n] : N", "Aborted by user"]) + "\n")
    for k, v in changes.items():
        card.config[k].next_boot = v
    return _ok("\n".join([*out, "", " Apply new Configuration? (y/n) [n] : y", "Applying... Done!",
                          "-I- Please reboot machine to load new configurations."]) + "\n")
