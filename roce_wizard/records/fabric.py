"""One sentence per measured node pair: is the fabric lossless and congestion-controlled, and what shows it.

Pure, over the JSON contract's result rows (doctor's report and a bundle's results.json alike): RW607 (RoCE
on the lossless priority), RW605/RW606 (incast holds, pauses and no drops) say lossless; RW608 (ECN marks,
CNPs sent and handled) says congestion-controlled. Each finding's summary carries its numbers: the sentence
quotes them as the evidence. A pair without RW607/RW608 results gets no sentence.
"""

from __future__ import annotations

from typing import Any

LOSSLESS = ("RW607", "RW605", "RW606")


def _verdict(row: dict[str, Any] | None) -> str:
    if row is None:
        return "absent"
    if row.get("status") == "skip" and row.get("blocked_by"):
        return "blocked"
    return str(row.get("status"))


def _cite(row: dict[str, Any]) -> str:
    blocked = row.get("blocked_by")
    if row.get("status") == "skip" and blocked:
        # the JSON contract's {"check", "target"}; a run rebuilt from its findings keeps [check, target]
        code, where = ((blocked.get("check"), blocked.get("target")) if isinstance(blocked, dict)
                       else (list(blocked) + [None, None])[:2])
        return f"{row['check']} blocked by {code} on {where}"
    return f"{row['check']} on {row.get('target')}: {row.get('summary')}"


def pair_sentences(rows: list[dict[str, Any]]) -> list[str]:
    by_pair: dict[str, dict[str, dict[str, Any]]] = {}
    for r in rows:
        if r.get("subject") and str(r.get("check", "")).startswith("RW60"):
            by_pair.setdefault(r["subject"], {})[r["check"]] = r
    out = []
    for pair, found in by_pair.items():
        if "RW607" not in found and "RW608" not in found:
            continue
        lossless = [found[c] for c in LOSSLESS if c in found]
        bad = [r for r in lossless if _verdict(r) in ("fail", "error", "warn")]
        if bad:
            first = "is NOT lossless (" + _cite(bad[0]) + ")"
        elif any(_verdict(r) == "blocked" for r in lossless):
            first = "could not be proven lossless (" + _cite(next(r for r in lossless if _verdict(r) == "blocked")) + ")"
        elif _verdict(found.get("RW607")) == "pass":
            first = "is lossless (" + "; ".join(_cite(r) for r in lossless if _verdict(r) == "pass") + ")"
        else:
            r607 = found.get("RW607")
            first = "is lossless as far as the hosts can see (" + (_cite(r607) if r607 else "RW607 not run") + ")"
        cc = found.get("RW608")
        v = _verdict(cc)
        if cc is None:
            second = "congestion control was not measured (RW608 not selected)"
        elif v == "pass":
            second = "congestion-controlled (" + _cite(cc) + ")"
        elif v in ("fail", "error", "warn"):
            second = "NOT congestion-controlled (" + _cite(cc) + ")"
        else:
            second = "congestion control not judged (" + _cite(cc) + ")"
        out.append(f"{pair} {first}, and {second}.")
    return out
