"""Hypothesis strategies that damage real tool outputs the way terminals, pastes and odd hosts do.

Used by test_parser_properties.py: truncation, dropped/duplicated lines, shuffled fields, CRLF,
ANSI colour codes, non-ASCII digits, dropped JSON keys (for JSON outputs).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

SEEDS = Path(__file__).resolve().parents[1] / "data" / "parser_seeds"
# fullwidth, Arabic-Indic, Devanagari, superscript (isdigit() but not int()-able), mathematical bold
ODD_DIGITS = ("３", "٣", "३", "²", "𝟑", "①")
ANSI = ("\x1b[31m", "\x1b[0m", "\x1b[1;32m", "\x1b[K", "\x1b]0;title\x07")


def seeds(kind: str) -> list[str]:
    return [p.read_text(encoding="utf-8") for p in sorted((SEEDS / kind).glob("*.txt"))]


def _lines(text: str) -> list[str]:
    return text.split("\n")


@st.composite
def truncate(draw: st.DrawFn, text: str) -> str:
    return text[: draw(st.integers(0, len(text)))]


@st.composite
def drop_line(draw: st.DrawFn, text: str) -> str:
    ls = _lines(text)
    i = draw(st.integers(0, len(ls) - 1))
    return "\n".join(ls[:i] + ls[i + 1:])


@st.composite
def duplicate_line(draw: st.DrawFn, text: str) -> str:
    ls = _lines(text)
    i = draw(st.integers(0, len(ls) - 1))
    return "\n".join(ls[: i + 1] + ls[i:])


@st.composite
def shuffle_fields(draw: st.DrawFn, text: str) -> str:
    ls = _lines(text)
    i = draw(st.integers(0, len(ls) - 1))
    parts = re.split(r"(\s+|,|:|=)", ls[i])
    words = parts[::2]
    order = draw(st.permutations(range(len(words))))
    parts[::2] = [words[j] for j in order]
    ls[i] = "".join(parts)
    return "\n".join(ls)


@st.composite
def crlf(draw: st.DrawFn, text: str) -> str:
    return text.replace("\n", "\r\n") if draw(st.booleans()) else text.replace("\n", "\r")


@st.composite
def ansi(draw: st.DrawFn, text: str) -> str:
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(text)))
        text = text[:i] + draw(st.sampled_from(ANSI)) + text[i:]
    return text


@st.composite
def odd_digit(draw: st.DrawFn, text: str) -> str:
    spots = [m.start() for m in re.finditer(r"[0-9]", text)]
    if not spots:
        return text
    odd = draw(st.sampled_from(ODD_DIGITS))
    if draw(st.booleans()):  # every digit at once: nothing numeric is left to read
        return re.sub(r"[0-9]", odd, text)
    i = draw(st.sampled_from(spots))
    return text[:i] + odd + text[i + 1:]


def _json_start(text: str) -> int:
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    return min(starts) if starts else -1


def _paths(node: Any, path: tuple = ()) -> list[tuple]:
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            out.append((*path, k))
            out += _paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*path, i))
    return out


@st.composite
def json_damage(draw: st.DrawFn, text: str) -> str:
    """Drop a key anywhere in the JSON document, or give it a value of another type."""
    start = _json_start(text)
    if start < 0:
        return text
    try:
        doc, end = json.JSONDecoder().raw_decode(text[start:])
    except ValueError:
        return text
    paths = [p for p in _paths(doc) if isinstance(p[-1], str)]
    if not paths:
        return text
    path = draw(st.sampled_from(paths))
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    if draw(st.booleans()):
        del parent[path[-1]]
    else:
        parent[path[-1]] = draw(st.sampled_from([None, "", "x", 3, -1, 1.5, [], {}, True, "３"]))
    return text[:start] + json.dumps(doc) + text[start + end:]


MUTATIONS = (truncate, drop_line, duplicate_line, shuffle_fields, crlf, ansi, odd_digit, json_damage)


@st.composite
def mutated(draw: st.DrawFn, texts: list[str]) -> str:
    text = draw(st.sampled_from(texts))
    for _ in range(draw(st.integers(1, 3))):
        text = draw(draw(st.sampled_from(MUTATIONS))(text))
    return text
