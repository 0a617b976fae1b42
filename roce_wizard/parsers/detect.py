"""Which tool printed this text? Every parser's sniffer scores it; the best score wins.

A text no sniffer recognises is kind ``unknown`` — never a guess presented as fact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from roce_wizard.parsers import PARSERS

UNKNOWN = "unknown"
# The corpus convention (tests/data/corpus/INDEX.md in the source tree): three annotation lines before
# the output. They are not the tool's output; `analyze` drops them before detecting or parsing, and
# nothing relies on them.
ANNOTATION_RE = re.compile(r"^# (source|tool|notes): ")


@dataclass(frozen=True)
class Detection:
    kind: str
    score: int
    runner_up: str | None = None
    runner_up_score: int = 0

    @property
    def ambiguous(self) -> bool:
        return self.runner_up is not None and self.runner_up_score == self.score


def strip_annotations(text: str) -> str:
    lines = text.split("\n")
    while lines and ANNOTATION_RE.match(lines[0]):
        lines.pop(0)
    return "\n".join(lines)


def detect(text: str) -> Detection:
    scores = []
    for kind, parser in PARSERS.items():
        try:
            score = int(parser.sniff(text))
        except Exception:  # a sniffer must never take detection down
            score = 0
        if score > 0:
            scores.append((score, kind))
    if not scores:
        return Detection(UNKNOWN, 0)
    scores.sort(key=lambda s: (-s[0], s[1]))
    best_score, best = scores[0]
    runner = scores[1] if len(scores) > 1 else (0, None)
    return Detection(best, best_score, runner[1], runner[0])


def _has_content(facts: object) -> bool:
    """Whether a parse read anything at all (an all-empty result of a lenient parser is not evidence)."""
    return isinstance(facts, dict) and any(v not in (None, [], {}, "", 0) for v in facts.values())


def identify(text: str, hint: str | None = None) -> Detection:
    """`detect`, told what the echoed command named (`paste.hint_kind`). With a hint the kind is the hint or
    unknown, never a third tool's: the hint holds when its sniffer recognises the text at all, or its parser
    reads something from it (a grep-filtered output has no header for the sniffers, but `esxcli software vib
    list | grep` says what it is); `ibstat | grep Rate` lines that look like `ethtool -S` counters are not."""
    found = detect(text)
    if hint is None or hint not in PARSERS or found.kind == hint:
        return found
    parser = PARSERS[hint]
    try:
        score = int(parser.sniff(text))
    except Exception:  # a sniffer must never take detection down
        score = 0
    if score > 0:
        return Detection(hint, score, found.kind if found.kind != UNKNOWN else None, found.score)
    try:
        facts = parser.parse(text)
    except Exception:  # ParseError or a parser's own bug: the hint does not hold
        facts = None
    if _has_content(facts):
        return Detection(hint, 1, found.kind if found.kind != UNKNOWN else None, found.score)
    return Detection(UNKNOWN, 0, found.kind if found.kind != UNKNOWN else None, found.score)
