"""Text -> facts. One module per tool family; ``PARSERS`` maps kind id -> Parser."""

from __future__ import annotations

import importlib

from roce_wizard.parsers.base import Facts, ParseError, Parser

__all__ = ["Facts", "ParseError", "Parser", "PARSERS", "FAMILIES", "parse"]

FAMILIES = ("firmware", "esxi", "rdma", "linux", "perf", "switch", "vsphere", "redfish")


def _collect() -> dict[str, Parser]:
    registry: dict[str, Parser] = {}
    for family in FAMILIES:
        module = importlib.import_module(f"roce_wizard.parsers.{family}")
        for kind, parser in module.PARSERS.items():
            if kind in registry:
                raise RuntimeError(f"parser kind {kind} defined twice")
            registry[kind] = parser
    return registry


PARSERS: dict[str, Parser] = _collect()


def parse(kind: str, text: str) -> Facts:
    return PARSERS[kind].parse(text)
