"""The small POSIX-sh subset the simulated targets run command lines with.

An SSH exec request carries one command line; ESXi runs it with busybox ``sh``, a Linux guest with
its login shell. The lab parses it here and runs the words against the target's program table
(`lab/proto.py`): what the checks, probes and fixes send, and what a person types at a prompt.

Grammar (enough for roce-wizard's probes and fixes and for hand use):

    list      := and_or ((';' | '&' | NEWLINE) and_or)*
    and_or    := pipeline (('&&' | '||') pipeline)*
    pipeline  := ['!'] command ('|' command)*
    command   := simple | for | while | until | if | '{ list; }' | '( list )'  [redirections]
    simple    := [NAME=value]… word… with redirections anywhere: [n]>file [n]>>file [n]<file
                 [n]>&m &>file
    words     : 'single', "double with $VAR ${VAR} ${VAR:-x} $(…) `…` $? $((1+2))", \\escapes,
                unquoted results of expansions split on blanks, * ? globs over the virtual files

Built in: echo, printf, cat, ls, test/[, true, false, :, exit, command [-v], which, type, export,
unset, set, cd, pwd, sleep (capped, and reported as `Reply.delay_s` so the server waits without
blocking the other targets) and the filters grep, head, tail, wc, sort, uniq, cut, tr, tee, xargs.
A name neither built in nor in the program table is ``sh: NAME: not found`` with exit 127, as both
busybox (ESXi) and dash print it. ``cmd &`` is asynchronous as in a real shell: the job is forked at once
(its words are expanded and its `>` files created then, `$!` is its pid, its stdin is /dev/null) and it runs
when the foreground lets time pass — at a `sleep`, a `wait [pid]`, or when the line ends (a job outlives its
shell) — so a loop polling a background server's log really polls. No `kill`/job control (`%1`).
A program answering ``action="reboot"`` ends the line: the machine is going down.
"""

from __future__ import annotations

from roce_wizard.lab.shell.entry import run
from roce_wizard.lab.shell.parser import parse
from roce_wizard.lab.shell.syntax import ESXI_PATH, LINUX_PATH, ShellSyntaxError

__all__ = ["ESXI_PATH", "LINUX_PATH", "ShellSyntaxError", "parse", "run"]
