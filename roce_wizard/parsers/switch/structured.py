"""Switch outputs as structured data: JSON (`| json`, `| json-print`, the Onyx JSON API) and the Python repr
an automation script prints when it `print()`s the parsed JSON (single quotes, `True`/`None`).

`load_structured` turns either into Python data, safely: JSON first, then `ast.literal_eval` (literals only,
never `eval`) on a bounded text. The vendor readers here map that data onto the same facts vocabulary the text
parsers beside it produce, so the switch checks (RW501–RW507) judge both alike.
"""

from __future__ import annotations

import ast
import json
from typing import Any

from roce_wizard.parsers.base import Facts

# A repr larger than this is not read: `ast.literal_eval` builds a full syntax tree first, and no switch
# output an operator pastes comes near it.
MAX_REPR_CHARS = 2_000_000


def _span(text: str) -> str | None:
    """From the first `{`/`[` to the last `}`/`]` (a prompt, a label or indentation around it is not data)."""
    opens = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not opens:
        return None
    start = min(opens)
    end = max(text.rfind("}"), text.rfind("]"))
    return text[start:end + 1] if end > start else None


def load_structured(text: str) -> Any:
    """JSON, or a Python literal (a printed dict/list), or None when the text is neither."""
    s = text.strip()
    if not s or s[0] not in "[{":
        return None
    try:
        return json.loads(s)
    except json.JSONDecodeError:
        pass
    body = _span(s)
    if body is None or len(body) > MAX_REPR_CHARS:
        return None
    try:
        return json.loads(body)
    except json.JSONDecodeError:
        pass
    if "'" not in body and "True" not in body and "None" not in body and "False" not in body:
        return None  # broken JSON is not a Python repr either
    try:
        return ast.literal_eval(body)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def onyx_unwrap(data: Any) -> Any:
    """The Onyx JSON API answers `{"results": [{"status", "executed_command", "data"}]}`; `data` is a dict or
    a list of dicts (one per table the command prints, or one per interface with its `header`). Return the
    tables merged into one dict (the interface list as it is); anything not that envelope is returned unchanged."""
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        return data
    merged: dict[str, Any] = {}
    for result in data["results"]:
        if not isinstance(result, dict):
            continue
        body = result.get("data")
        if isinstance(body, list) and body and all(isinstance(p, dict) and "header" in p for p in body):
            return body  # one entry per interface (`show interfaces`), as json-print prints it
        for part in body if isinstance(body, list) else [body]:
            if isinstance(part, dict):
                merged.update(part)
    return merged


# --------------------------------------------------------------------------------------------
# EOS `show interfaces | json` (eAPI): the same keys as the text form (switch.parse_eos_interfaces)


def _eos_interface(name: str, node: dict[str, Any]) -> dict[str, Any]:
    def num(key: str) -> int | None:
        value = node.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    status, proto = node.get("interfaceStatus"), node.get("lineProtocolStatus")
    model = node.get("forwardingModel")
    routed = model == "routed" if isinstance(model, str) else False
    # eAPI's `mtu` is the IP MTU (EOS `mtu` sets the L3 MTU); `l2Mtu` (newer EOS) the Ethernet MTU
    ip_mtu, ethernet_mtu = num("mtu"), num("l2Mtu")
    mtu = ip_mtu if routed else ethernet_mtu
    desc = node.get("description")
    counters = node.get("interfaceCounters") if isinstance(node.get("interfaceCounters"), dict) else {}
    rx = counters.get("inputErrorsDetail") if isinstance(counters.get("inputErrorsDetail"), dict) else {}
    tx = counters.get("outputErrorsDetail") if isinstance(counters.get("outputErrorsDetail"), dict) else {}
    out = {
        "port": name,
        "admin_up": status != "disabled" if isinstance(status, str) else None,
        "link_up": proto == "up" if isinstance(proto, str) else None,
        "description": desc if isinstance(desc, str) and desc else None,
        "ethernet_mtu": ethernet_mtu, "ip_mtu": ip_mtu, "routed": routed, "mtu": mtu,
        "mtu_kind": ("ip" if routed else "ethernet") if mtu is not None else None,
        "forwarding_model": model if isinstance(model, str) else None,
    }
    for key, src in (("pause_input", rx.get("rxPause")), ("pause_output", tx.get("txPause"))):
        if isinstance(src, int) and not isinstance(src, bool):
            out[key] = src
    return out


def eos_interfaces_from_json(data: Any) -> Facts | None:
    """`{"interfaces": {name: {...}}}` -> eos_interfaces facts; None when it is not that document."""
    node = data.get("interfaces") if isinstance(data, dict) else None
    if not isinstance(node, dict):
        return None
    interfaces = [_eos_interface(str(name), v) for name, v in node.items()
                  if isinstance(v, dict) and ("lineProtocolStatus" in v or "interfaceStatus" in v)]
    return {"interfaces": interfaces} if interfaces else None


def looks_like_eos_interfaces_json(data: Any) -> bool:
    node = data.get("interfaces") if isinstance(data, dict) else None
    return isinstance(node, dict) and any(isinstance(v, dict) and "lineProtocolStatus" in v and "mtu" in v
                                          for v in node.values())
