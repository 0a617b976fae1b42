"""Counted nouns for the CLI and the wizard: "1 fix", "2 fixes", never "fix(es)"."""

from __future__ import annotations

# words whose plural the rules below get wrong (verbs agreeing with the count too)
_IRREGULAR = {"was": "were", "is": "are", "has": "have", "needs": "need", "waits": "wait", "passes": "pass"}


def plural_word(n: int, word: str, plural_form: str | None = None) -> str:
    """`word` as it goes with the count `n` (1: word; else its plural: given, known, or word + "s")."""
    if n == 1:
        return word
    if plural_form is not None:
        return plural_form
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word.endswith(("s", "x", "sh", "ch")):
        return word + "es"
    return word + "s"


def plural(n: int, word: str, plural_form: str | None = None) -> str:
    """"1 host", "2 hosts", "0 hosts", "3 fixes"; `plural_form` for a word the rules get wrong."""
    return f"{n} {plural_word(n, word, plural_form)}"
