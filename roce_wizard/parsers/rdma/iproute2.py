"""iproute2 `rdma link show` and `rdma statistic show`."""

from __future__ import annotations

import re

from roce_wizard.parsers.base import (
    Facts,
    ParseError,
    body_lines,
    fraction,
    to_int,
)

# ---------------------------------------------------------------------------------------------
# rdma link show

_RL_LINE = re.compile(
    r"^\s*(?:(?P<idx>[0-9]+)/(?P<iport>[0-9]+):\s+)?(?:link\s+)?(?P<dev>[^\s/:]+)/(?P<port>[0-9]+):?\s+(?P<rest>.*)$"
)
_RL_KEYS = {"state", "physical_state", "netdev", "netdev_index", "subnet_prefix", "lid", "sm_lid",
            "lmc", "type", "parent"}


def _rdma_link_line(ln: str) -> dict | None:
    m = _RL_LINE.match(ln)
    if not m:
        return None
    tok = m.group("rest").split()
    attrs: dict = {}
    i = 0
    while i < len(tok):
        if tok[i] in _RL_KEYS and i + 1 < len(tok):
            attrs[tok[i]] = tok[i + 1]
            i += 2
        else:
            i += 1
    if "state" not in attrs and "physical_state" not in attrs:
        return None
    link = {"dev": m.group("dev"), "port": int(m.group("port")),
            "state": attrs.get("state"), "physical_state": attrs.get("physical_state"),
            "netdev": attrs.get("netdev")}
    if m.group("idx"):
        link["index"] = int(m.group("idx"))
    for k in ("netdev_index", "lid", "sm_lid", "lmc"):
        if k in attrs:
            link[k] = to_int(attrs[k])
    if "subnet_prefix" in attrs:
        link["subnet_prefix"] = attrs["subnet_prefix"]
    return link


def parse_rdma_link(text: str) -> Facts:
    body = body_lines(text, ("rdma",))
    links = [lk for lk in (_rdma_link_line(ln) for ln in body) if lk]
    if not links and any(ln.strip() for ln in body):
        raise ParseError("rdma_link", "no `link <dev>/<port> state …` line found")
    # empty output is what `rdma link show` prints on a host without RDMA devices
    return {"links": links}


def sniff_rdma_link(text: str) -> int:
    body = body_lines(text, ("rdma",))
    f = fraction(body, lambda ln: _rdma_link_line(ln) is not None)
    return round(90 * f) if f else 0


# ---------------------------------------------------------------------------------------------
# rdma statistic show

_RS_LINE = re.compile(r"^\s*(?:[0-9]+/[0-9]+:\s+)?link\s+(?P<dev>[^\s/]+)/(?P<port>[0-9]+):?\s*(?P<rest>.*)$")


def _pairs(tokens: list[str]) -> tuple[dict[str, int], dict[str, str]]:
    counters: dict[str, int] = {}
    attrs: dict[str, str] = {}
    for i in range(0, len(tokens) - 1, 2):
        name, value = tokens[i], tokens[i + 1]
        if re.fullmatch(r"-?[0-9]+", value):
            counters[name] = int(value)
        else:
            attrs[name] = value
    return counters, attrs


def parse_rdma_statistic(text: str) -> Facts:
    links: list[dict] = []
    last: dict | None = None
    for ln in body_lines(text, ("rdma",)):
        m = _RS_LINE.match(ln)
        if m:
            counters, attrs = _pairs(m.group("rest").split())
            last = {"dev": m.group("dev"), "port": int(m.group("port")), "counters": counters}
            if attrs:
                last["attrs"] = attrs
            links.append(last)
            continue
        # `rdma -p statistic show` puts counters on indented continuation lines
        if last is not None and ln[:1].isspace():
            counters, _ = _pairs(ln.split())
            last["counters"].update(counters)
            continue
        last = None
    links = [lk for lk in links if lk["counters"] and "state" not in lk.get("attrs", {})]
    if not links:
        raise ParseError("rdma_statistic", "no `link <dev>/<port> <counter> <value> …` line found")
    return {"links": links}


def _is_stat_line(ln: str) -> bool:
    m = _RS_LINE.match(ln)
    if not m:
        return False
    counters, attrs = _pairs(m.group("rest").split())
    return len(counters) >= 3 and "state" not in attrs


def sniff_rdma_statistic(text: str) -> int:
    body = body_lines(text, ("rdma",))
    if any(_is_stat_line(ln) for ln in body):
        return 92
    return 0
