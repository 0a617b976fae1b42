"""The footer's order: the keys every screen has (? q b e, the app's) first, then the screen's own, so an
80-column footer that cuts its tail still shows help, quit, reboots and export."""

from __future__ import annotations

from textual.screen import Screen


class AppKeysFirst(Screen):
    """A screen whose footer lists the app's keys before its own (Textual lists the focused widget's first)."""

    @property
    def active_bindings(self):  # noqa: ANN201 - Textual's own type (dict[str, ActiveBinding])
        bindings = super().active_bindings
        return dict(sorted(bindings.items(), key=lambda item: item[1].node is not self.app))
