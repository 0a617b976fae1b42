"""Pasted shapes around one tool's output, for the counter parsers of issue 15.

`per_host(parse_one)` makes a parser that accepts what people paste: ANSI colours and CRLF off (`paste.clean`),
and a pdsh/clush `host: ` (or Slurm/Open MPI rank) prefix on every line (`paste.strip_launchers`). One host:
its facts, with `host` naming it. Several hosts: `hosts{label: facts}` and no merged top-level values (two
machines' counters are never one machine's; a check reads the host it wants). A stream that is not the tool's
output raises ParseError only when no stream is.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from roce_wizard.parsers.base import Facts, ParseError, is_prompt
from roce_wizard.parsers.paste import Stream, clean, strip_launchers


def per_host(parse_one: Callable[[str], Facts]) -> Callable[[str], Facts]:
    @functools.wraps(parse_one)  # its module and docstring (`explain --where` finds the module's name for it)
    def parse(text: str) -> Facts:
        text = clean(text)
        streams = strip_launchers(text)
        if any(s.label is not None for s in streams) and all(
                re.fullmatch(r"\s*-?[0-9]+\s*", ln) for s in streams for ln in s.text.split("\n")
                if ln.strip() and not is_prompt(ln)):
            # `rx_prio3_pause: 5` lines: a `name: value` listing, not a host prefix before each value
            streams = [Stream(None, text)]
        if len(streams) == 1:
            facts = parse_one(streams[0].text)
            if streams[0].label is not None:
                facts["host"] = streams[0].label.removeprefix("host ")
            return facts
        hosts: dict[str, Facts] = {}
        error: ParseError | None = None
        for s in streams:
            try:
                hosts[(s.label or "").removeprefix("host ")] = parse_one(s.text)
            except ParseError as exc:
                error = error or exc
        if not hosts:
            raise error or ParseError(getattr(parse_one, "__name__", "parser"), "no output recognised")
        return {"hosts": hosts}

    return parse
