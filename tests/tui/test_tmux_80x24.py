"""The demo at 80x24 in tmux, as a person over SSH would see it (issue 17 item 1): `a` (fix everything), the
preview and the second confirmation each with both buttons read off the captured screen, the run to "done",
then `?` help scrolled to its last line, then q with no process left behind."""

from __future__ import annotations

import os
import re
import shlex
import sys
import time

import pytest

from .test_tmux_demo import Tmux, alive, demo_env, descendants, pytestmark  # noqa: F401 - the same skip when tmux is missing

WIDTH, HEIGHT = 80, 24


def buttons(screen: str) -> list[str]:
    """The button labels on the screen: a button's label line sits between its ▔ and ▁ edges."""
    lines = screen.splitlines()
    out = []
    for i, line in enumerate(lines[1:-1], 1):
        if "▔" in lines[i - 1] and "▁" in lines[i + 1]:
            out += [label.strip() for label in re.findall(r"([A-Z][^▔▁█▌▐]*?\([a-zA-Z]+\))", line)]
    return out


def test_buttons_reads_labels_between_button_edges():
    screen = ("█   ▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔  ▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔▔ █\n"
              "█    Yes, include them (y)    No, safe ones only (n)  █\n"
              "█   ▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁  ▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁ █\n")
    assert buttons(screen) == ["Yes, include them (y)", "No, safe ones only (n)"]


@pytest.mark.slow
def test_demo_at_80x24_fix_everything_through_both_confirmations_then_help_to_its_end(tmp_path):
    from roce_wizard.lab.vcenter import go_problem

    if go_problem() is not None:
        pytest.skip(f"{go_problem()}: the demo's reboots go through the lab's vCenter")
    env = demo_env(tmp_path)
    tmux = Tmux(f"roce-wizard-test80-{os.getpid()}", env)
    demo = f"{shlex.quote(sys.executable)} -m roce_wizard.cli demo --hosts 2 --reboot-delay 0.5"
    command = f"sh -c {shlex.quote(demo + '; echo $? > demo.exit')}"
    tmux("new-session", "-d", "-s", "demo", "-x", str(WIDTH), "-y", str(HEIGHT), "-c", str(tmp_path), command,
         ";", "set-option", "-t", "demo", "remain-on-exit", "on")
    try:
        pid = int(tmux("display-message", "-p", "-t", "demo", "#{pane_pid}").strip())
        tmux.wait_for(lambda s: "8 of 8 targets reachable" in s, "the preflight", 120)
        processes = descendants(pid)
        tmux.keys("Enter")
        screen = tmux.wait_for(lambda s: "checks done:" in s and "running]" not in s and "Fix all" in s,
                               "the first full run", 120)
        footer = screen.splitlines()[-1]
        assert all(f" {key} " in f" {footer} " for key in ("?", "q", "b", "e")), footer  # 80 columns keep them

        tmux.keys("a")
        preview = tmux.wait_for(lambda s: "rebooting as needed" in s and len(buttons(s)) == 2, "the preview", 30)
        assert buttons(preview) == ["Apply (y)", "Cancel (n)"], preview
        assert "a Fix all" not in preview.splitlines()[-1], "the main screen's keys leak into the dialog's footer"
        tmux.keys("y")
        second = tmux.wait_for(lambda s: re.search(r"disruptive fix(es)? too\?", s) and len(buttons(s)) == 2,
                               "the second confirmation", 30)
        assert buttons(second) == ["Yes, include them (y)", "No, safe ones only (n)"], second
        print(f"the second confirmation at {WIDTH}x{HEIGHT}:\n{second}")
        tmux.keys("y")
        done = tmux.wait_for(lambda s: re.search(r"(done: \d+ round|stopped: )", s) and buttons(s),
                             "fix everything", 600)
        assert re.search(r"done: \d+ round", done) and buttons(done) == ["Close (Enter)"], done
        tmux.keys("Enter")
        tmux.wait_for(lambda s: "ESXI" in s and "Close (Enter)" not in s, "the main screen", 30)

        tmux.keys("?")
        tmux.wait_for(lambda s: "Keys" in s and "where" in s, "the help", 30)
        tmux.keys("End")
        end = tmux.wait_for(lambda s: "End of the keys. Escape or ? closes this help." in s, "the help's last line", 30)
        footer = end.rstrip("\n").splitlines()[-1]
        assert "Close" in footer and "Fix all" not in footer, end  # the help's own footer: its keys only
        print(f"help at its end:\n{end}")
        tmux.keys("Escape")
        tmux.wait_for(lambda s: "End of the keys" not in s, "the help to close", 30)

        tmux.keys("q")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(alive(p) for p in processes):
            time.sleep(0.1)
        assert not [p for p in processes if alive(p)], "processes left after q"
    finally:
        tmux("kill-server", check=False)


@pytest.mark.slow
def test_demo_at_80x24_a_staged_fix_shows_waits_for_a_reboot_not_a_pass(tmp_path):
    """Issue 17 item 2 as a person sees it: fix the esxi stage without rebooting (`3`, `s`, both confirmations);
    the cells whose change waits for the host's reboot read ⟳, the progress line and the grid title say so."""
    env = demo_env(tmp_path)
    tmux = Tmux(f"roce-wizard-pending80-{os.getpid()}", env)
    demo = f"{shlex.quote(sys.executable)} -m roce_wizard.cli demo --hosts 1 --reboot-delay 0.5"
    tmux("new-session", "-d", "-s", "demo", "-x", str(WIDTH), "-y", str(HEIGHT), "-c", str(tmp_path), demo)
    try:
        tmux.wait_for(lambda s: "targets reachable" in s, "the preflight", 120)
        tmux.keys("Enter")
        tmux.wait_for(lambda s: "checks done:" in s and "running]" not in s and "Fix all" in s, "the first full run",
                      120)
        tmux.keys("3")
        tmux.wait_for(lambda s: "ESXI" in s, "the esxi stage", 30)
        tmux.keys("s")
        preview = tmux.wait_for(lambda s: len(buttons(s)) == 2, "the stage's preview", 30)
        assert buttons(preview) == ["Apply (y)", "Cancel (n)"], preview
        tmux.keys("y")
        second = tmux.wait_for(lambda s: re.search(r"disruptive fix(es)? too\?", s) and len(buttons(s)) == 2,
                               "the second confirmation", 30)
        tmux.keys("y")
        done = tmux.wait_for(lambda s: "re-verified:" in s and buttons(s), "the re-verification", 300)
        assert re.search(r"\d+ wait for a reboot", done), done
        tmux.keys("Enter")
        grid = tmux.wait_for(lambda s: "ESXI" in s and "Close (Enter)" not in s and "running]" not in s,
                             "the main screen", 60)
        rows = [line for line in grid.splitlines() if "esx-01" in line]
        assert rows and "⟳" in rows[0], grid  # not ✓: the change is not in effect before the reboot
        assert "wait for a reboot" in grid, grid  # the grid's title counts them apart from the passes
        print(f"after the staged fix at {WIDTH}x{HEIGHT}:\n{grid}\n(second confirmation was:\n{second})")
    finally:
        tmux("kill-server", check=False)
