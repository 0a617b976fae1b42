"""Waiting for a vSphere task (`wait_for_task`): pyVim's WaitForTask misreads some simulator tasks."""

from __future__ import annotations

import time
from typing import Any

from pyVmomi import vim

# ---------------------------------------------------------------------------- tasks


def wait_for_task(task: Any, timeout: float = 300.0, poll: float = 0.1) -> Any:
    """Poll a vSphere task until it succeeds (its result), fails (raises its fault) or `timeout`
    seconds pass (TimeoutError naming the task and its state). Blocking: call it in a thread."""
    deadline = time.monotonic() + timeout
    while True:
        info = task.info
        if info.state == vim.TaskInfo.State.success:
            return info.result
        if info.state == vim.TaskInfo.State.error:
            if info.error is not None:
                raise info.error
            raise RuntimeError(f"task {info.key} failed without saying why")
        if time.monotonic() >= deadline:
            name = info.descriptionId or info.key
            raise TimeoutError(f"task {name} ({info.key}) still {info.state} after {timeout:g}s")
        time.sleep(poll)
