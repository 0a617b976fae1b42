"""The lab shell: the POSIX-sh subset simulated targets run command lines with."""

from __future__ import annotations

import pytest

from roce_wizard.lab.proto import Ctx, Reply
from roce_wizard.lab.scenarios import healthy
from roce_wizard.lab.shell import ShellSyntaxError, parse, run
from roce_wizard.probes import ESXI_TOOLS, GUEST_TOOLS, tool_presence_command

WORLD = healthy(1)


def _args(ctx: Ctx, argv: list[str]) -> Reply:
    return Reply(stdout="\n".join(argv) + "\n")


def _env(ctx: Ctx, argv: list[str]) -> Reply:
    return Reply(stdout="".join(f"{k}={ctx.env.get(k, '')}\n" for k in argv[1:]))


def _stdin(ctx: Ctx, argv: list[str]) -> Reply:
    return Reply(stdout=f"got:{ctx.stdin}")


def _fail(ctx: Ctx, argv: list[str]) -> Reply:
    return Reply(stdout="partial\n", stderr="mlxconfig: -E- boom\n", exit=3)


def _reboot(ctx: Ctx, argv: list[str]) -> Reply:
    return Reply(stdout="rebooting\n", action="reboot")


ESXI_PROGRAMS = {
    "esxcli": _args,
    "/opt/mellanox/bin/mst": _args,
    "/opt/mellanox/bin/mlxconfig": _fail,
    "reboot": _reboot,
    "env": _env,
    "readin": _stdin,
}
LINUX_PROGRAMS = {"ibv_devinfo": _args, "ip": _args, "/usr/sbin/ethtool": _args, "ofed_info": _args}
FILES = {
    "/proc/sys/kernel/random/boot_id": "0f6f2c34-1d2b-4c8e-9b0a-5d0c1c2e3f40\n",
    "/etc/hosts": "127.0.0.1 localhost\n10.0.0.1 esx-01\n10.0.0.2 esx-02\n",
    "/sys/class/net/ens256/mtu": "9000\n",
    "/sys/class/net/ens192/mtu": "1500\n",
}


def sh(line: str, *, esxi: bool = True, files: dict[str, str] | None = None, programs=None) -> Reply:
    ctx = Ctx(world=WORLD, target="esx-01" if esxi else "compute-01", files=dict(FILES) if files is None else files)
    return run(line, ctx, programs if programs is not None else (ESXI_PROGRAMS if esxi else LINUX_PROGRAMS))


# ---------------------------------------------------------------------------- what the probes send


def test_tool_presence_loop_on_esxi():
    r = sh(tool_presence_command(ESXI_TOOLS))
    assert r.exit == 0 and r.stderr == ""
    assert r.stdout.splitlines() == [
        "present /opt/mellanox/bin/mst /opt/mellanox/bin/mst",
        "present /opt/mellanox/bin/mlxconfig /opt/mellanox/bin/mlxconfig",
        "missing /opt/mellanox/bin/mlxfwmanager",
        "missing /opt/mellanox/bin/flint",
    ]


def test_tool_presence_loop_on_linux_resolves_bare_names_and_paths():
    r = sh(tool_presence_command(GUEST_TOOLS), esxi=False)
    lines = r.stdout.splitlines()
    assert "present ibv_devinfo /usr/bin/ibv_devinfo" in lines
    assert "present ethtool /usr/sbin/ethtool" in lines  # found through PATH
    assert "missing show_gids" in lines and "missing rdma" in lines
    assert len(lines) == len(GUEST_TOOLS)


def test_command_v():
    r = sh("command -v esxcli; command -v grep; command -v echo; command -v nope; echo $?")
    assert r.stdout == "/bin/esxcli\n/bin/grep\necho\n1\n"
    assert sh("command -v ip", esxi=False).stdout == "/usr/bin/ip\n"


def test_cat_virtual_file_and_missing_file():
    assert sh("cat /proc/sys/kernel/random/boot_id").stdout == FILES["/proc/sys/kernel/random/boot_id"]
    r = sh("cat /sys/class/infiniband/mlx5_0/tc/1/traffic_class")
    assert r.exit == 1 and "No such file or directory" in r.stderr


# ---------------------------------------------------------------------------- grammar


@pytest.mark.parametrize("line, out, code", [
    ("echo a; echo b", "a\nb\n", 0),
    ("true && echo yes", "yes\n", 0),
    ("false && echo yes", "", 1),
    ("false || echo alt && echo and", "alt\nand\n", 0),
    ("true || echo no", "", 0),
    ("! false && echo negated", "negated\n", 0),
    ("if true; then echo t; else echo f; fi", "t\n", 0),
    ("if false; then echo t; elif true; then echo e; else echo f; fi", "e\n", 0),
    ("if false; then echo t; fi", "", 0),
    ("for i in 1 2 3; do echo $i; done", "1\n2\n3\n", 0),
    ("for i in; do echo $i; done", "", 0),
    ("x=0; while [ $x -lt 3 ]; do echo $x; x=$((x+1)); done", "0\n1\n2\n", 0),
    ("{ echo a; echo b; } | wc -l", "2\n", 0),
    ("(x=inner; echo $x); echo \"[$x]\"", "inner\n[]\n", 0),
    ("echo one\necho two", "one\ntwo\n", 0),
    ("echo a # a comment", "a\n", 0),
    ("exit 4; echo never", "", 4),
    ("echo $(exit 3); echo $?", "\n0\n", 0),
    ("false; echo $?", "1\n", 0),
])
def test_grammar(line, out, code):
    r = sh(line)
    assert (r.stdout, r.exit) == (out, code), r.stderr


@pytest.mark.parametrize("line, out", [
    ("echo 'single $HOME \"q\"'", "single $HOME \"q\"\n"),
    ('echo "double $HOSTNAME \\$x \\"q\\""', 'double esx-01 $x "q"\n'),
    ('x="a  b"; echo $x; echo "$x"', "a b\na  b\n"),
    ('x="a b"; for v in $x "$x"; do echo "<$v>"; done', "<a>\n<b>\n<a b>\n"),
    ('echo "" | wc -l', "1\n"),
    ("echo a\\ b", "a b\n"),
    ("echo ${unset:-default} ${HOSTNAME:+set} ${#HOSTNAME}", "default set 6\n"),
    ("echo $((2 * (3 + 4)))", "14\n"),
    ('echo "in $(echo "nested $(echo deep)")"', "in nested deep\n"),
    ("echo `echo back`", "back\n"),
    ("x=$(printf 'a\\nb\\n'); echo \"$x\"", "a\nb\n"),
    ("printf '%s=%d\\n' a 1 b 2", "a=1\nb=2\n"),
    ("printf '%-5s|%03d\\n' ab 7", "ab   |007\n"),
    ("echo -n no-newline", "no-newline"),
    ("echo -e 'a\\tb'", "a\tb\n"),
    ("export FOO=bar; env FOO", "FOO=bar\n"),
    ("FOO=once env FOO; env FOO", "FOO=once\nFOO=\n"),
    ("echo /sys/class/net/*/mtu", "/sys/class/net/ens192/mtu /sys/class/net/ens256/mtu\n"),
    ("echo '/sys/class/net/*/mtu'", "/sys/class/net/*/mtu\n"),
    ("echo ~", "/\n"),
])
def test_quoting_and_expansion(line, out):
    r = sh(line)
    assert r.stdout == out, r.stderr


@pytest.mark.parametrize("line, out", [
    ("cat /etc/hosts | grep esx", "10.0.0.1 esx-01\n10.0.0.2 esx-02\n"),
    ("cat /etc/hosts | grep -v esx", "127.0.0.1 localhost\n"),
    ("cat /etc/hosts | grep -i -e LOCAL -e esx-02", "127.0.0.1 localhost\n10.0.0.2 esx-02\n"),
    ("grep -c esx /etc/hosts", "2\n"),
    ("grep -E 'esx-0(1|2)' /etc/hosts | wc -l", "2\n"),
    ("grep 'esx-0\\(1\\|2\\)' /etc/hosts | wc -l", "2\n"),
    ("grep -q localhost /etc/hosts && echo found", "found\n"),
    ("cat /etc/hosts | head -n 1", "127.0.0.1 localhost\n"),
    ("cat /etc/hosts | head -2 | tail -n 1", "10.0.0.1 esx-01\n"),
    ("cat /etc/hosts | tail -n +2 | wc -l", "2\n"),
    ("cat /etc/hosts | sort -r | head -n 1", "127.0.0.1 localhost\n"),
    ("printf '3\\n10\\n2\\n' | sort -n", "2\n3\n10\n"),
    ("printf 'b\\na\\nb\\n' | sort -u", "a\nb\n"),
    ("printf 'a:b:c\\n' | cut -d: -f2", "b\n"),
    ("echo ABC | tr A-Z a-z", "abc\n"),
    ("esxcli a b | grep b", "b\n"),
    ("echo data | readin", "got:data\n"),
    ("ls /sys/class/net", "ens192\nens256\n"),
])
def test_pipes_and_filters(line, out):
    r = sh(line)
    assert r.stdout == out, r.stderr


def test_not_found_is_127_busybox_style():
    r = sh("mlxfwmanager --query")
    assert (r.stdout, r.stderr, r.exit) == ("", "sh: mlxfwmanager: not found\n", 127)
    r = sh("/opt/mellanox/bin/flint -d x q")
    assert (r.stderr, r.exit) == ("sh: /opt/mellanox/bin/flint: not found\n", 127)
    r = sh("nope; echo $?")
    assert r.stdout == "127\n" and r.exit == 0
    # on ESXi /opt/mellanox/bin is not in PATH: the bare name is not found
    assert sh("mst status").exit == 127


def test_program_failure_keeps_stdout_and_stderr():
    r = sh("/opt/mellanox/bin/mlxconfig -d mt4119_pciconf1 q")
    assert (r.stdout, r.stderr, r.exit) == ("partial\n", "mlxconfig: -E- boom\n", 3)


@pytest.mark.parametrize("line, out, err", [
    ("nope >/dev/null 2>&1", "", ""),
    ("nope 2>&1 >/dev/null", "sh: nope: not found\n", ""),  # order matters, as in sh
    ("nope 2>/dev/null", "", ""),
    ("nope 2>&1 | grep -c found", "1\n", ""),
    ("echo out >&2", "", "out\n"),
    ("/opt/mellanox/bin/mlxconfig q &>/dev/null", "", ""),
])
def test_redirections(line, out, err):
    r = sh(line)
    assert (r.stdout, r.stderr) == (out, err)


def test_redirect_to_files():
    files: dict[str, str] = {}
    r = sh("echo one > /tmp/f; echo two >> /tmp/f; cat /tmp/f; echo x > /tmp/f; cat /tmp/f", files=files)
    assert r.stdout == "one\ntwo\nx\n"
    assert files["/tmp/f"] == "x\n"
    r = sh("echo RoCE v2 | tee /tmp/mode; cat < /tmp/mode", files=files)
    assert r.stdout == "RoCE v2\nRoCE v2\n"


def test_write_file_hook_sees_writes():
    seen: list[tuple[str, str]] = []
    ctx = Ctx(world=WORLD, target="compute-01", files={})
    run("echo 106 > /sys/class/infiniband/mlx5_0/tc/1/traffic_class", ctx, {},
        write_file=lambda path, content: seen.append((path, content)))
    assert seen[-1] == ("/sys/class/infiniband/mlx5_0/tc/1/traffic_class", "106\n")


def test_test_builtin():
    assert sh("[ -e /etc/hosts ] && echo y").stdout == "y\n"
    assert sh("[ -x /opt/mellanox/bin/mst ] && echo y").stdout == "y\n"
    assert sh("[ -x /opt/mellanox/bin/flint ] || echo n").stdout == "n\n"
    assert sh("[ -d /sys/class/net ] && echo y").stdout == "y\n"
    assert sh('test "a" = "a" -a 3 -gt 2 && echo y').stdout == "y\n"
    assert sh("[ -z '' ] && [ -n x ] && echo y").stdout == "y\n"
    r = sh("[ 1 -eq 1")
    assert r.exit == 2 and "missing ]" in r.stderr


def test_reboot_action_ends_the_line():
    r = sh("echo before; reboot; echo after")
    assert r.stdout == "before\nrebooting\n" and r.action == "reboot" and r.exit == 0


def test_sleep_is_capped_and_reported():
    r = sh("sleep 1; sleep 0.5; echo done")
    assert r.stdout == "done\n" and getattr(r, "delay_s", 0) == pytest.approx(1.5)
    assert getattr(sh("sleep 600"), "delay_s", 0) <= 5


@pytest.mark.parametrize("line, word", [
    ("if then", "then"),
    ("echo a |", "end of file"),
    ("echo a && ;", ";"),
    ("for i in 1 2; echo $i; done", "echo"),
    ("fi", "fi"),
    ("(echo a", "end of file"),
])
def test_syntax_errors(line, word):
    r = sh(line)
    assert r.exit == 2 and r.stderr == f'sh: syntax error: unexpected "{word}"\n', r.stderr


def test_unterminated_quote():
    r = sh("echo 'abc")
    assert r.exit == 2 and "unterminated" in r.stderr
    with pytest.raises(ShellSyntaxError):
        parse('echo "abc')


def test_exported_environment_reaches_programs():
    r = sh("export UCX_NET_DEVICES=mlx5_0:1; env UCX_NET_DEVICES PATH")
    assert r.stdout == "UCX_NET_DEVICES=mlx5_0:1\nPATH=/bin:/sbin\n"


def test_target_may_refuse_a_write_and_decides_what_reads_back():
    state = {"tc": None}

    def files() -> dict[str, str]:
        return {"/sys/class/infiniband/mlx5_0/tc/1/traffic_class": f"Global tclass={state['tc']}\n"
                if state["tc"] is not None else ""}

    def write(path: str, content: str) -> str | None:
        if not path.startswith("/sys/class/infiniband/"):
            return None
        if not content.strip().isdigit():
            return "sh: echo: write error: Invalid argument"
        state["tc"] = int(content)
        return None

    ctx = Ctx(world=WORLD, target="compute-01", files=files())
    path = "/sys/class/infiniband/mlx5_0/tc/1/traffic_class"
    r = run(f"echo 106 > {path}; cat {path}", ctx, {}, write_file=write, reload_files=files)
    assert (r.stdout, r.stderr, r.exit) == ("Global tclass=106\n", "", 0)
    r = run(f"echo bogus > {path}", ctx, {}, write_file=write, reload_files=files)
    assert (r.stderr, r.exit) == ("sh: echo: write error: Invalid argument\n", 1)
    assert state["tc"] == 106


def test_unreadable_file():
    ctx = Ctx(world=WORLD, target="compute-01", files={})
    path = "/proc/sys/kernel/random/boot_id"
    r = run(f"cat {path}", ctx, {}, unreadable={path: "Permission denied"})
    assert (r.stdout, r.stderr, r.exit) == ("", f"cat: {path}: Permission denied\n", 1)
    r = run(f"[ -e {path} ] && ! [ -r {path} ] && echo exists-unreadable", ctx, {},
            unreadable={path: "Permission denied"})
    assert r.stdout == "exists-unreadable\n"
