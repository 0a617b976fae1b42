"""Redfish service root, collections, the ComputerSystem (and its Reset action) and the Manager of a lab BMC."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from roce_wizard.lab.redfish.http import RedfishError, Request, Response, _message
from roce_wizard.lab.redfish.vendors import BASE, DELL, LAB_RESET_TYPES, RESET_TYPES

if TYPE_CHECKING:
    from roce_wizard.lab.redfish.bmc import Bmc


def get_versions(bmc: Bmc, req: Request) -> Response:
    return Response(200, {"v1": "/redfish/v1/"})


def get_odata(bmc: Bmc, req: Request) -> Response:
    names = ("Systems", "Managers", "SessionService")
    return Response(200, {"@odata.context": "/redfish/v1/$metadata", "value": [
        {"kind": "Singleton", "name": n, "url": f"/redfish/v1/{n}"} for n in names]})


def get_root(bmc: Bmc, req: Request) -> Response:
    ident = bmc._identity()
    body: dict[str, Any] = {
        "@odata.context": "/redfish/v1/$metadata#ServiceRoot.ServiceRoot",
        "@odata.id": bmc._p("/redfish/v1"),
        "@odata.type": "#ServiceRoot.v1_6_0.ServiceRoot",
        "Id": "RootService",
        "Name": "Root Service",
        "Description": "Root Service",
        "RedfishVersion": "1.11.0" if bmc.vendor is DELL else "1.6.0",
        "UUID": ident["uuid"],
        "Product": bmc.vendor.product,
        "Vendor": "Dell" if bmc.vendor is DELL else "HPE",
        "Systems": {"@odata.id": bmc._p("/redfish/v1/Systems")},
        "Managers": {"@odata.id": bmc._p("/redfish/v1/Managers")},
        "SessionService": {"@odata.id": bmc._p("/redfish/v1/SessionService")},
        "Links": {"Sessions": {"@odata.id": bmc._p("/redfish/v1/SessionService/Sessions")}},
    }
    if bmc.vendor is DELL:
        body["Oem"] = {"Dell": {"@odata.type": "#DellServiceRoot.v1_0_0.DellServiceRoot",
                                "IsBranded": 0, "ServiceTag": ident["service_tag"]}}
    return Response(200, body)


def _collection(bmc: Bmc, path: str, name: str, members: list[str], odata_type: str) -> Response:
    return Response(200, {
        "@odata.context": f"/redfish/v1/$metadata#{odata_type}.{odata_type}",
        "@odata.id": bmc._p(path),
        "@odata.type": f"#{odata_type}.{odata_type}",
        "Name": name,
        "Members": [{"@odata.id": bmc._p(m)} for m in members],
        "Members@odata.count": len(members),
    })


def get_systems(bmc: Bmc, req: Request) -> Response:
    return _collection(bmc, "/redfish/v1/Systems", "Computer System Collection", [bmc.system_path],
                            "ComputerSystemCollection")


def get_managers(bmc: Bmc, req: Request) -> Response:
    return _collection(bmc, "/redfish/v1/Managers", "Manager Collection", [bmc.manager_path],
                            "ManagerCollection")


def get_system(bmc: Bmc, req: Request) -> Response:
    host = bmc.host
    ident = bmc._identity()
    attrs = bmc.attributes()
    threads = 56 if attrs.get("LogicalProc", attrs.get("ProcHyperthreading")) != "Disabled" else 28
    allowed = list(LAB_RESET_TYPES)
    return Response(200, {
        "@odata.context": "/redfish/v1/$metadata#ComputerSystem.ComputerSystem",
        "@odata.id": bmc._p(bmc.system_path),
        "@odata.type": "#ComputerSystem.v1_12_0.ComputerSystem",
        "Id": bmc.vendor.system_id,
        "Name": "System",
        "Description": "Computer System which represents a machine (physical or virtual) and the local "
                       "resources such as memory, cpu and other devices that can be accessed from that machine.",
        "Actions": {"#ComputerSystem.Reset": {
            "target": f"{bmc.system_path}/Actions/ComputerSystem.Reset",
            "ResetType@Redfish.AllowableValues": allowed,
        }},
        "AssetTag": "",
        "Bios": {"@odata.id": bmc._p(f"{bmc.system_path}/Bios")},
        "BiosVersion": bmc.vendor.bios_version,
        "Boot": {"BootSourceOverrideEnabled": "Disabled", "BootSourceOverrideTarget": "None",
                 "BootSourceOverrideMode": "UEFI" if attrs.get("BootMode") == "Uefi" else "Legacy"},
        "HostName": host.name,
        "IndicatorLED": "Lit",
        "Links": {"ManagedBy": [{"@odata.id": bmc._p(bmc.manager_path)}]},
        "Manufacturer": ident["manufacturer"],
        "MemorySummary": {"TotalSystemMemoryGiB": 384, "Status": {"Health": "OK", "State": "Enabled"}},
        "Model": ident["model"],
        "PowerState": "On",
        "ProcessorSummary": {"Count": 2, "LogicalProcessorCount": threads,
                             "Model": "Intel(R) Xeon(R) Gold 6132 CPU @ 2.60GHz",
                             "Status": {"Health": "OK", "State": "Enabled"}},
        "SKU": ident["service_tag"],
        "SerialNumber": ident["service_tag"],
        "Status": {"Health": "OK", "HealthRollup": "OK", "State": "Enabled"},
        "SystemType": "Physical",
        "UUID": ident["uuid"],
    })


def post_reset(bmc: Bmc, req: Request) -> Response:
    data = req.json_object()
    action = "ComputerSystem.Reset"
    if "ResetType" not in data:
        raise RedfishError(400, _message(f"{BASE}.ActionParameterMissing",
                                         f"The action {action} requires the parameter ResetType to be present "
                                         "in the request body.", [action, "ResetType"], ["#/ResetType"],
                                         resolution="Supply the action with the required parameter in the "
                                                    "request body when the request is resubmitted.",
                                         severity="Critical"))
    for key in data:
        if key != "ResetType":
            raise RedfishError(400, _message(f"{BASE}.ActionParameterUnknown",
                                             f"The action {action} was submitted with the invalid parameter "
                                             f"{key}.", [action, key], [f"#/{key}"]))
    value = data["ResetType"]
    if not isinstance(value, str):
        raise RedfishError(400, _message(f"{BASE}.ActionParameterValueTypeError",
                                         f"The value '{value}' for the parameter ResetType in the action "
                                         f"{action} is of a different type than the parameter can accept.",
                                         [value, "ResetType", action], ["#/ResetType"]))
    if value not in LAB_RESET_TYPES:
        lab_note = (" The practice lab reboots servers but does not power them off; use one of "
                    f"{', '.join(LAB_RESET_TYPES)}." if value in RESET_TYPES else "")
        raise RedfishError(400, _message(f"{BASE}.ActionParameterValueNotInList",
                                         f"The value '{value}' for the parameter ResetType in the action "
                                         f"{action} is not in the list of acceptable values.{lab_note}",
                                         [value, "ResetType", action], ["#/ResetType"],
                                         resolution="Choose a value from the enumeration list that the "
                                                    "implementation can support and resubmit the request."))
    bmc.lab.reset(bmc.host_name)
    return Response(204)


def get_manager(bmc: Bmc, req: Request) -> Response:
    ident = bmc._identity()
    body: dict[str, Any] = {
        "@odata.context": "/redfish/v1/$metadata#Manager.Manager",
        "@odata.id": bmc._p(bmc.manager_path),
        "@odata.type": "#Manager.v1_9_0.Manager",
        "Id": bmc.vendor.manager_id,
        "Name": "Manager",
        "Description": "BMC",
        "ManagerType": "BMC",
        "Model": bmc.vendor.manager_model,
        "FirmwareVersion": bmc.vendor.manager_firmware,
        "PowerState": "On",
        "Status": {"Health": "OK", "State": "Enabled"},
        "UUID": str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{ident['uuid']}.manager")),
        "Links": {"ManagerForServers": [{"@odata.id": bmc._p(bmc.system_path)}]},
    }
    if bmc.vendor is DELL:
        body["Links"]["Oem"] = {"Dell": {"Jobs": {"@odata.id": f"{bmc.manager_path}/Jobs"}}}
    return Response(200, body)
