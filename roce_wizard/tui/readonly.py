"""`--replay` is read-only: recorded outputs cannot be changed, so no fix and no reboot runs.

Before this, "fix everything" under --replay showed a plan, "applied" it against the recording and
listed failures without reasons. Every entry point that would change a target asks `refused` first;
the workers ask again (a command-palette path or a future key cannot slip past).
"""

from __future__ import annotations

from typing import Any

READ_ONLY = "recorded outputs cannot be changed: --replay is read-only"
BANNER = f"READ-ONLY — {READ_ONLY}"  # one line at 80 columns; a refused action says the rest


def is_read_only(app: Any) -> bool:
    connection = getattr(app, "connection", None)
    return getattr(connection, "replay", None) is not None


def refused(app: Any, what: str) -> bool:
    """True (and the operator told why, on screen and in the log) when `what` must not run."""
    if not is_read_only(app):
        return False
    app.notify(READ_ONLY, title=f"{what}: refused", severity="warning")
    app.log_line(f"{what}: refused — {READ_ONLY}", "yellow")
    return True


def refuse_work(app: Any, what: str, *also: Any) -> bool:
    """In a worker: True (the failure and `also` posted as messages) when `what` must not run."""
    if not is_read_only(app):
        return False
    from roce_wizard.tui.messages import WorkFailed  # noqa: PLC0415

    for message in (WorkFailed(what, READ_ONLY), *also):
        app.post_message(message)
    return True
