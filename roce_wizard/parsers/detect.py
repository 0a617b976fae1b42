"""Which tool printed this text? Every parser's sniffer scores it; the best score wins.

A text no sniffer recognises is kind ``unknown`` — never a guess presented as fact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from roce_wizard.parsers import PARSERS

UNKNOWN = "unknown"
# The corpus convention (../shared/corpus): three annotation lines before the output. They are not
# the tool's output; `analyze` drops them before detecting or parsing, and nothing relies on them.
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
