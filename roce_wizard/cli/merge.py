"""`analyze` and `export` over many nodes' run directories: one merged report (roce_wizard.records.merge)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from roce_wizard.console import make_console
from roce_wizard.textsafe import printable


def analyze_merged(roots: list[Path], paths: list[Path], checks: dict, *, as_json: bool, verbose: bool) -> int:
    """Print the merged report of the run directories (JSON: doctor's contract plus `merged`); its exit code."""
    from rich.markup import escape  # noqa: PLC0415

    from roce_wizard.records.merge import left_out, merge_runs, render_merged  # noqa: PLC0415

    merged = merge_runs(roots)
    others = left_out(paths, roots)
    if as_json:
        document = merged.to_dict()
        document["merged"]["left_out"] = [str(p) for p in others]
        sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False, default=str) + "\n")
        return merged.exit_code
    console = make_console()
    render_merged(merged, checks, console, verbose=verbose)
    if others:
        shown = ", ".join(str(p) for p in others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
        make_console(stderr=True).print(f"[yellow]note:[/] not in any run directory, not merged (analyze them on "
                                        f"their own): {escape(printable(shown))}", highlight=False, soft_wrap=True)
    return merged.exit_code
