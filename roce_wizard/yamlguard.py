"""YAML written by users (inventories, playbook files, replay recordings), read without surprises.

`GuardedLoader` is PyYAML's SafeLoader with three limits, all enforced while the document is composed,
before any value is built, each refused with the line it happened on (`YamlRefused`, a MarkedYAMLError):
- nesting deeper than MAX_DEPTH (5,000 nested lists would otherwise end in a RecursionError);
- aliases: allowed (an inventory uses anchors and `<<: *defaults` merge keys), but the nodes they stand
  for are counted — every alias adds the size of the whole subtree it repeats — and more than
  MAX_ALIASED_NODES is refused: a "billion laughs" of 10 levels of 9 aliases would otherwise
  stand for 3.4 billion nodes, each walked by the code that reads options or writes the bundle;
  a recursive alias (an anchor used inside itself) is refused too;
- tags: only the standard ones (`!!str 01` is how a user keeps a leading zero); `!!python/…` and any
  other tag is refused by name, and an explicit `!!int`/`!!float`/`!!bool`/`!!null` must fit its value.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.events import AliasEvent, CollectionStartEvent, ScalarEvent
from yaml.nodes import Node, ScalarNode

MAX_DEPTH = 64  # an inventory is 7 levels deep, a replay recording 6
MAX_ALIASED_NODES = 100_000  # nodes repeated through aliases, over the whole document

_CORE = "tag:yaml.org,2002:"
_COLLECTION_TAGS = {f"{_CORE}seq", f"{_CORE}map"}
_SCALAR_TAGS = {f"{_CORE}{t}" for t in ("str", "int", "float", "bool", "null")}


class YamlRefused(yaml.MarkedYAMLError):
    """A YAML document refused for its shape (depth, aliases, tags), with the line it happened on."""

    def __init__(self, problem: str, mark: yaml.Mark | None) -> None:
        super().__init__(problem=problem, problem_mark=mark)

    @property
    def line(self) -> int | None:
        return self.problem_mark.line + 1 if self.problem_mark is not None else None


def _shown_tag(tag: str) -> str:
    return "!!" + tag.removeprefix(_CORE) if tag.startswith(_CORE) else tag


class GuardedLoader(yaml.SafeLoader):
    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._depth = 0
        self._sizes: dict[str, int] = {}  # anchor → nodes in its subtree (aliases inside it expanded)
        self._counts: list[int] = [0]  # nodes composed so far, per open collection
        self._open: set[str] = set()  # anchors whose collection is still being composed
        self._aliased = 0

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        event = self.peek_event()
        if isinstance(event, AliasEvent):
            if event.anchor in self._open:
                raise YamlRefused(f"alias *{event.anchor} is used inside its own anchor (a recursive structure)",
                                  event.start_mark)
            size = self._sizes.get(event.anchor, 1)
            self._aliased += size
            if self._aliased > MAX_ALIASED_NODES:
                raise YamlRefused(f"aliases repeat more than {MAX_ALIASED_NODES} nodes (a YAML alias bomb?); "
                                  "write the values out or use fewer nested aliases", event.start_mark)
            self._counts[-1] += size
            return super().compose_node(parent, index)
        self._check_tag(event)
        if isinstance(event, ScalarEvent):
            self._counts[-1] += 1
            node = super().compose_node(parent, index)
            if event.anchor is not None:
                self._sizes[event.anchor] = 1
            return node
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise YamlRefused(f"nested deeper than {MAX_DEPTH} levels", event.start_mark)
        if isinstance(event, CollectionStartEvent) and event.anchor is not None:
            self._open.add(event.anchor)
        self._counts.append(1)
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        size = self._counts.pop()
        self._counts[-1] += size
        if event.anchor is not None:
            self._open.discard(event.anchor)
            self._sizes[event.anchor] = size
        return node

    def _check_tag(self, event: Any) -> None:
        tag = getattr(event, "tag", None)
        if tag is None or tag == "!":  # no tag, or the non-specific one of a quoted scalar
            return
        if isinstance(event, ScalarEvent) and tag in _SCALAR_TAGS:
            implicit = self.resolve(ScalarNode, event.value, (True, False))
            if tag in (f"{_CORE}str", implicit):
                return
            raise YamlRefused(f"{event.value!r} is not a valid {_shown_tag(tag)}", event.start_mark)
        if isinstance(event, CollectionStartEvent) and tag in _COLLECTION_TAGS:
            return
        raise YamlRefused(f"YAML tag {_shown_tag(tag)} is not allowed (only plain values, lists and mappings; "
                          "a !!python/… tag would build Python objects)", event.start_mark)


def compose(text: str) -> Node | None:
    """The document's node tree, checked; raises YamlRefused or another yaml.YAMLError."""
    return yaml.compose(text, Loader=GuardedLoader)


def safe_load(text: str) -> Any:
    """The document's values, checked; raises YamlRefused or another yaml.YAMLError."""
    return yaml.load(text, Loader=GuardedLoader)  # noqa: S506 - GuardedLoader is a SafeLoader
