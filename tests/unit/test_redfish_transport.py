"""The Redfish transport's pure parts: the `redfish bios` document and the vendor it names.
(The transport itself runs against the lab's BMCs in tests/lab/test_bios_stage.py: TLS, auth,
sessions, errors.)"""

from __future__ import annotations

import asyncio
import ssl

import pytest

from roce_wizard.model import Target, TargetKind
from roce_wizard.transports.base import ConnectErrorKind, TransportError
from roce_wizard.transports.redfish import RedfishTransport, bios_document, vendor_of

DELL_ROOT = {"Oem": {"Dell": {"ServiceTag": "2D5RMM2"}}, "Product": "Integrated Dell Remote Access Controller"}
HPE_SYSTEM = {"Id": "1", "Manufacturer": "HPE", "Model": "ProLiant DL380 Gen10",
              "Links": {"ManagedBy": [{"@odata.id": "/redfish/v1/Managers/1/"}]},
              "Actions": {"#ComputerSystem.Reset": {"target": "/redfish/v1/Systems/1/Actions/ComputerSystem.Reset"}}}


def test_vendor_from_oem_then_manufacturer():
    assert vendor_of(DELL_ROOT, {"Manufacturer": "Dell Inc."}) == "dell"
    assert vendor_of({}, HPE_SYSTEM) == "hpe"
    assert vendor_of({}, {"Manufacturer": "Hewlett Packard Enterprise"}) == "hpe"
    assert vendor_of({}, {"Manufacturer": "Lenovo"}) == "lenovo"
    assert vendor_of({}, {"Manufacturer": "Quanta Cloud Technology Inc."}) == "quanta"
    assert vendor_of({}, {}) is None


def test_ilo_settings_list_the_whole_future_bios_only_changes_are_pending():
    bios = {"Attributes": {"IntelProcVtd": "Disabled", "Sriov": "Enabled"}}
    settings = {"Attributes": {"IntelProcVtd": "Enabled", "Sriov": "Enabled"}}
    doc = bios_document({}, HPE_SYSTEM, bios, settings)
    assert doc["vendor"] == "hpe" and doc["pending"] == {"IntelProcVtd": "Enabled"}
    assert doc["system"]["manager_uri"] == "/redfish/v1/Managers/1/"
    assert doc["system"]["reset_uri"] == "/redfish/v1/Systems/1/Actions/ComputerSystem.Reset"
    # Bios/Settings not readable: what is staged is unknown, not "nothing"
    assert bios_document({}, HPE_SYSTEM, bios, None)["pending"] is None


def test_a_ca_file_that_cannot_be_read_is_a_tls_error_naming_it(tmp_path):
    target = Target(name="bmc-1", kind=TargetKind.BMC, address="127.0.0.1", port=1,
                    options={"ca_file": str(tmp_path / "missing.pem")})

    async def go() -> None:
        async with RedfishTransport(password_resolver=lambda t: "x") as transport:
            await transport.session(target)

    with pytest.raises(TransportError) as err:
        asyncio.run(go())
    assert err.value.kind is ConnectErrorKind.TLS and "options.ca_file" in err.value.message


def test_refused_is_refused():
    target = Target(name="bmc-1", kind=TargetKind.BMC, address="127.0.0.1", port=1)

    async def go() -> None:
        async with RedfishTransport(password_resolver=lambda t: "x", connect_timeout=2) as transport:
            await transport.session(target)

    with pytest.raises(TransportError) as err:
        asyncio.run(go())
    assert err.value.kind is ConnectErrorKind.REFUSED and "port 1" in err.value.message


def test_bmcs_that_trust_the_same_ca_share_one_tls_context(tmp_path):
    """Issue 16: a TLS context that loads the system trust store holds ~0.85 MB; one per BMC was 218 MB at 256
    BMCs. BMCs with the same ca_file share its context, BMCs without one share the system store's."""
    from roce_wizard.lab.redfish.tls import write_certificates

    ca_a, _, _ = write_certificates(tmp_path / "a")
    ca_b, _, _ = write_certificates(tmp_path / "b")

    def bmc(name: str, ca: object = None) -> Target:
        return Target(name=name, kind=TargetKind.BMC, address="127.0.0.1", port=1,
                      options={"ca_file": str(ca)} if ca else {})

    transport = RedfishTransport(password_resolver=lambda t: "x")
    a1, a2, b1 = (transport._verify(bmc("bmc-1", ca_a)), transport._verify(bmc("bmc-2", ca_a)),
                  transport._verify(bmc("bmc-3", ca_b)))
    system1, system2 = transport._verify(bmc("bmc-4")), transport._verify(bmc("bmc-5"))
    assert a1 is a2 and a1 is not b1 and system1 is system2 and system1 not in (a1, b1)
    assert all(c.verify_mode is ssl.CERT_REQUIRED and c.check_hostname for c in (a1, b1, system1))
    assert len(a1.get_ca_certs()) == 1 and a1.get_ca_certs() != b1.get_ca_certs()
