"""Text from tools, made safe to show on a terminal.

A device name, a summary or a raw output line comes from a host: an ESC sequence in it (OSC retitles
the terminal, CSI clears the screen or moves the cursor, DCS talks to the terminal itself) must not
reach the TTY. `printable` is applied where such text is rendered (the CLI's rich output, the
wizard's grid, detail and log panes); the run log and results.json keep the raw bytes.
"""

from __future__ import annotations

import re

# whole escape sequences first, so that their parameters do not stay behind as text
_SEQUENCES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"  # CSI … final byte (cut short at the end: dropped all the same)
    r"|\x9b[0-?]*[ -/]*[@-~]?"  # 8-bit CSI
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"  # OSC/DCS/SOS/PM/APC strings
    r"|\x1b[ -/]*[0-~]?"  # any other ESC sequence (ESC c resets the terminal, ESC ( 0 switches charset)
)
# every other C0 control but tab and newline, DEL, and the C1 controls
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: object) -> str:
    """`text` (str() of it) without terminal control sequences or control characters; newlines and tabs kept."""
    s = text if isinstance(text, str) else str(text)
    if not _CONTROLS.search(s):
        return s
    return _CONTROLS.sub("", _SEQUENCES.sub("", s))
