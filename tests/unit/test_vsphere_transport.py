"""VSphereTransport without a vCenter: TLS options, error mapping, task polling, the printed JSON.
(Against the lab's real vCenter: tests/lab/test_vsphere_stage.py.)"""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
from types import SimpleNamespace

import pytest
from pyVmomi import vim

from roce_wizard.model import Credentials, SecretRef, SecretSource, Target, TargetKind
from roce_wizard.transports.base import ConnectErrorKind, TransportError
from roce_wizard.transports.vsphere import (
    VSphereSession,
    VSphereTransport,
    render,
    ssl_context_for,
    wait_for_task,
)


def vc(**options) -> Target:
    return Target(name="vc-01", kind=TargetKind.VCENTER, address="vcenter.example", port=443,
                  credentials=Credentials(username="administrator@vsphere.local",
                                          password=SecretRef(SecretSource.ENV, "VC_PASSWORD")),
                  options=options)


def test_tls_is_verified_by_default_and_with_a_ca_file(tmp_path):
    context = ssl_context_for(vc())
    assert context.verify_mode is ssl.CERT_REQUIRED and context.check_hostname
    with pytest.raises(TransportError) as info:
        ssl_context_for(vc(ca_file=str(tmp_path / "missing.pem")))
    assert info.value.kind is ConnectErrorKind.TLS and "cannot load options.ca_file" in info.value.message


@pytest.mark.parametrize("value", [True, "true", "yes"])
def test_insecure_is_explicit(value):
    context = ssl_context_for(vc(insecure=value))
    assert context.verify_mode is ssl.CERT_NONE and not context.check_hostname
    assert ssl_context_for(vc(insecure=False)).verify_mode is ssl.CERT_REQUIRED


def _mapped(exc: Exception, **options) -> TransportError:
    return VSphereTransport()._map_error(exc, vc(**options))


def test_connect_errors_are_mapped_like_ssh():
    untrusted = ssl.SSLCertVerificationError(1, "certificate verify failed")
    untrusted.verify_message, untrusted.reason = "self-signed certificate in certificate chain", None
    err = _mapped(untrusted)
    assert err.kind is ConnectErrorKind.TLS
    assert "options: {ca_file: /path/to/vcenter-ca.pem}" in err.message and "options: {insecure: true}" in err.message
    assert "https://vcenter.example/certs/download.zip" in err.message
    assert "not signed by the CA in options.ca_file /etc/vc.pem" in _mapped(untrusted, ca_file="/etc/vc.pem").message
    mismatch = ssl.SSLCertVerificationError(1, "certificate verify failed")
    mismatch.verify_message, mismatch.reason = "Hostname mismatch, certificate is not valid for 'vcenter.example'.", None
    assert "does not name 'vcenter.example'" in _mapped(mismatch).message
    assert _mapped(vim.fault.InvalidLogin(msg="Login failure")).kind is ConnectErrorKind.AUTH
    assert "<env:VC_PASSWORD>" in _mapped(vim.fault.InvalidLogin(msg="Login failure")).message
    assert _mapped(socket.gaierror(-2, "Name or service not known")).kind is ConnectErrorKind.DNS
    assert _mapped(ConnectionRefusedError(111, "Connection refused")).kind is ConnectErrorKind.REFUSED
    assert _mapped(TimeoutError("timed out")).kind is ConnectErrorKind.TIMEOUT
    assert _mapped(OSError(113, "No route to host")).kind is ConnectErrorKind.UNREACHABLE
    assert _mapped(ValueError("not SOAP")).kind is ConnectErrorKind.PROTOCOL


def test_no_password_is_an_auth_error_before_connecting():
    transport = VSphereTransport(password_resolver=lambda t: None)
    with pytest.raises(TransportError) as info:
        asyncio.run(transport.session(vc()))
    assert info.value.kind is ConnectErrorKind.AUTH and "no password for vc-01" in info.value.message
    assert transport.connects == 0


def test_unknown_query_exits_2():
    session = VSphereSession(VSphereTransport(), vc(), si=None)
    result = asyncio.run(session.run("esxcli network nic list"))
    assert result.exit_status == 2 and "queries: vsphere hosts, vsphere vms, vsphere dvs" in result.stderr
    assert "vsphere host-maintenance" in result.stderr  # the actions fixes and reboots use are named too


def test_render_prints_valid_json_one_object_per_line():
    doc = {"query": "vsphere hosts", "about": {"fullName": "x"}, "hosts": [{"name": "a"}, {"name": "b"}]}
    text = render(doc)
    assert json.loads(text) == doc
    assert text.splitlines()[3] == ' {"name": "a"},' and text.splitlines()[4] == ' {"name": "b"}'


class _Task:
    def __init__(self, states, result=None, error=None):
        self.states = list(states)
        self.result, self.error = result, error

    @property
    def info(self):
        state = self.states.pop(0) if len(self.states) > 1 else self.states[0]
        return SimpleNamespace(state=state, result=self.result, error=self.error, key="task-1",
                               descriptionId="VirtualMachine.reconfigure")


def test_wait_for_task_polls_until_success_error_or_timeout():
    S = vim.TaskInfo.State
    assert wait_for_task(_Task([S.queued, S.running, S.success], result="done"), timeout=5, poll=0.001) == "done"
    with pytest.raises(vim.fault.InvalidPowerState):
        wait_for_task(_Task([S.running, S.error], error=vim.fault.InvalidPowerState()), timeout=5, poll=0.001)
    with pytest.raises(TimeoutError, match=r"task VirtualMachine.reconfigure \(task-1\) still running after 0.05s"):
        wait_for_task(_Task([S.running]), timeout=0.05, poll=0.01)
