"""Validate-stage refusals are findings or inventory errors, never a crash (issue 11, item 3).

- An RDMA device name with shell characters, as a node's own `rdma link` prints it, reaches the pair
  runner: the pair's validate checks "could not run", no command is sent with it, the run ends.
- `policy.mpi_env` with shell metacharacters is refused when the inventory is read (exit 2, file:line:field).
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from roce_wizard.catalog import load_catalog
from roce_wizard.cli import app
from roce_wizard.engine import run_checks
from roce_wizard.inventory import InventoryError, load_inventory
from roce_wizard.model import ExitCode, Policy, RoceSpec, Stage, Status, Target, TargetKind
from roce_wizard.transports.replay import ReplayTransport, TargetRecording

CATALOG = load_catalog([])
VALIDATE = {code: c for code, c in CATALOG.items() if c.meta.stage is Stage.VALIDATE}


def guest(name: str) -> Target:
    return Target(name=name, kind=TargetKind.GUEST, address="127.0.0.1", host="esx-01", vm=name,
                  roce=RoceSpec(netdev="ens1f0np0", ip="192.168.100.11/24"))


@pytest.mark.parametrize("dev", ["mlx5_0;reboot", "$(reboot)", "mlx5_`id`"])
async def test_an_unsafe_rdma_device_name_is_a_could_not_run_finding(dev):
    hostile = f"link {dev}/1 state ACTIVE physical_state LINK_UP netdev ens1f0np0\n"
    transport = ReplayTransport({
        "compute-01": TargetRecording(commands={"rdma link show": {"stdout": hostile}}),
        "compute-02": TargetRecording(commands={
            "rdma link show": {"stdout": "link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev ens1f0np0\n"}}),
    })
    report = await run_checks([guest("compute-01"), guest("compute-02")], VALIDATE, transport, Policy())
    assert report.findings, "the run ended with findings"
    said = f"could not run: unsafe device name {dev!r} on compute-01"
    by = {f.check: f for f in report.findings}
    assert set(by) == set(VALIDATE) and all(f.subject == "compute-01<->compute-02" for f in by.values())
    assert by["RW601"].status is Status.ERROR and by["RW601"].summary.startswith(said), by["RW601"].summary
    for f in by.values():  # each one says so, or names the one that does as its root cause (RW605 on RW601)
        if f.status is Status.SKIP:
            assert by[f.blocked_by[0]].status is Status.ERROR and f.details["unjudged"].startswith("error: " + said)
        else:
            assert f.status is Status.ERROR and f.summary.startswith(said), f.summary
    assert report.exit_code is ExitCode.INCOMPLETE
    assert not any(dev in command for _, command in transport.commands_run)


INVENTORY = "policy:\n  mpi_env: {value}\ntargets:\n  guest:\n    - name: compute-01\n      address: 127.0.0.1\n"


@pytest.mark.parametrize("value", ["'UCX_TLS=rc;reboot'", "'UCX_TLS=$(id)'", "'UCX_TLS=rc `id`'",
                                   "'LD_PRELOAD=/tmp/x.so'", "'UCX_TLS=rc|sh'"])
def test_mpi_env_with_metacharacters_is_an_inventory_error_with_file_line_field(tmp_path, value):
    path = tmp_path / "inv.yaml"
    path.write_text(INVENTORY.format(value=value))
    with pytest.raises(InventoryError) as err:
        load_inventory(path)
    assert f"{path}:2:" in str(err.value) and "policy.mpi_env" in str(err.value)
    result = CliRunner().invoke(app, ["doctor", "-i", str(path)])
    assert result.exit_code == 2 and "inv.yaml:2" in result.output and "mpi_env" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize("value, expected", [("'UCX_TLS=rc,sm UCX_IB_SL=3'", "UCX_TLS=rc,sm UCX_IB_SL=3"),
                                             ("''", "")])
def test_a_plain_mpi_env_loads(tmp_path, value, expected):
    path = tmp_path / "inv.yaml"
    path.write_text(INVENTORY.format(value=value))
    assert load_inventory(path).policy.mpi_env == expected
