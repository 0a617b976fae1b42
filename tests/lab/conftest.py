"""Every test under tests/lab starts the practice lab: marked `lab` here, so `-m "not lab"` leaves them out."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
# parametrized cases measured over ~5 s (`--durations`): the Onyx CLI's fixes (the others are marked at their def)
SLOW_CASES = {"test_switch_fix.py::test_fix_fault[onyx-RW501]", "test_switch_fix.py::test_fix_fault[onyx-RW502]"}


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.lab)
            if f"{Path(item.path).name}::{item.name}" in SLOW_CASES:
                item.add_marker(pytest.mark.slow)
