"""The lab's shell runs `cmd &` asynchronously, as sh does (issue 12, item 7): the job is forked at once
(its `>` file exists, empty; `$!` is its pid) and runs when the foreground lets time pass (`sleep`, `wait`)
or when the line ends — so a loop polling a background perftest server's log really polls."""

from __future__ import annotations

from roce_wizard.lab import scenarios
from tests.fixkit import run_line


def _run(line: str):
    world = scenarios.healthy()
    return run_line(world, "compute-01", line)


def test_a_background_job_has_not_run_before_time_passes():
    out = _run("echo up > /tmp/x.log & grep -q up /tmp/x.log || echo not-yet; test -e /tmp/x.log && echo exists; "
               "sleep 0.1; grep -q up /tmp/x.log && echo now")
    assert out.stdout == "not-yet\nexists\nnow\n"


def test_the_validate_stage_wait_loop_polls_until_the_server_waits():
    """The loop roce_wizard/probes/pairs.py wraps around a perftest server: it must see the log empty first."""
    out = _run("nohup timeout 60 ib_send_bw -a -F --tclass=106 -d mlx5_0 -x 3 -p 18600 </dev/null >/tmp/s.log 2>&1 & "
               "i=0; while [ $i -lt 30 ] && ! grep -q 'Waiting for client' /tmp/s.log; do sleep 0.1; i=$((i+1)); done; "
               "echo polls=$i; pgrep -f 'ib_send_bw .*-p 18600'")
    assert out.stdout.splitlines()[0] == "polls=1"
    assert out.stdout.splitlines()[1].isdigit()  # the server is still there, waiting for its client


def test_pid_wait_and_exit_status():
    out = _run("false & p=$!; echo pid=$p; wait $p; echo rc=$?; wait 99999; echo unknown=$?; "
               "for n in 1 2; do echo job$n >/tmp/j$n & done; wait; cat /tmp/j1 /tmp/j2")
    assert out.stdout == "pid=4243\nrc=1\nunknown=127\njob1\njob2\n"


def test_a_job_the_line_left_running_still_answers_and_the_line_keeps_its_status():
    out = _run("echo later & echo now; false")
    assert (out.stdout, out.exit_status) == ("now\nlater\n", 1)
