"""Redfish Bios, Bios/Settings (PATCH with registry checks) and the BIOS attribute registry of a lab BMC."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from roce_wizard.lab.redfish.http import RedfishError, Request, Response, _message, _now_iso, _success, _sys011
from roce_wizard.lab.redfish.jobs import _commit
from roce_wizard.lab.redfish.vendors import BASE, DELL, IDRAC

if TYPE_CHECKING:
    from roce_wizard.lab.redfish.bmc import Bmc


def get_bios(bmc: Bmc, req: Request) -> Response:
    settings: dict[str, Any] = {
        "@odata.type": "#Settings.v1_3_1.Settings",
        "SettingsObject": {"@odata.id": bmc._p(bmc.settings_path)},
    }
    if bmc.vendor is DELL:
        settings["SupportedApplyTimes"] = ["OnReset", "Immediate"]
    else:
        settings["Messages"] = [{"MessageId": "Base.1.0.Success"}]
        settings["Time"] = _now_iso(bmc.host.boot_time)
    body: dict[str, Any] = {
        "@odata.context": "/redfish/v1/$metadata#Bios.Bios",
        "@odata.id": bmc._p(f"{bmc.system_path}/Bios"),
        "@odata.type": "#Bios.v1_1_0.Bios",
        "@Redfish.Settings": settings,
        "Id": "Bios",
        "Name": "BIOS Configuration Current Settings",
        "Description": "BIOS Configuration Current Settings",
        "AttributeRegistry": bmc.vendor.registry,
        "Attributes": bmc.attributes(),
    }
    if bmc.vendor is DELL:
        body["Links"] = {"SoftwareImages": [], "SoftwareImages@odata.count": 0}
    return Response(200, body)


def get_settings(bmc: Bmc, req: Request) -> Response:
    if bmc.vendor is DELL:
        # iDRAC lists only what is pending (staged or committed by a job)
        pending = bmc.pending()
        attrs = {n: v for n, v in bmc.attributes({**bmc.host.bios, **pending}).items()
                 if n in bmc._names(pending)}
    else:
        attrs = bmc.attributes({**bmc.host.bios, **bmc.host.bios_pending})  # iLO: the whole future BIOS
    body: dict[str, Any] = {
        "@odata.context": "/redfish/v1/$metadata#Bios.Bios",
        "@odata.id": bmc._p(bmc.settings_path),
        "@odata.type": "#Bios.v1_1_0.Bios",
        "Id": "Settings",
        "Name": "BIOS Configuration Pending Settings",
        "Description": "BIOS Configuration Pending Settings",
        "AttributeRegistry": bmc.vendor.registry,
        "Attributes": attrs,
    }
    if bmc.vendor is DELL:
        body["@Redfish.SettingsApplyTime"] = {
            "@odata.type": "#Settings.v1_3_1.PreferredApplyTime",
            "ApplyTime": "OnReset",
        }
    return Response(200, body)


def _validate(bmc: Bmc, changes: Any) -> dict[str, Any]:
    """Registry checks on a PATCH's Attributes; returns {world key: value} or raises with every problem."""
    if not isinstance(changes, dict):
        raise RedfishError(400, _message(f"{BASE}.PropertyValueTypeError",
                                         f"The value '{changes}' for the property Attributes is of a different "
                                         "type than the property can accept.", [changes, "Attributes"],
                                         ["#/Attributes"]))
    errors: list[dict[str, Any]] = []
    future = {**bmc.host.bios, **bmc.pending()}
    for name, value in changes.items():
        attr = bmc.vendor.attr(name)
        if attr is not None and not attr.identity and not attr.profile:
            future[attr.world_key] = value
    out: dict[str, Any] = {}
    for name, value in changes.items():
        attr = bmc.vendor.attr(name)
        where = [f"#/Attributes/{name}"]
        if attr is None:
            errors.append(_message(f"{BASE}.PropertyUnknown",
                                   f"The property {name} is not in the list of valid properties for the "
                                   "resource.", [name], where,
                                   resolution="Remove the unknown property from the request body and resubmit "
                                              "the request if the operation failed."))
            continue
        read_only = attr.read_only or (attr.profile and future.get("SysProfile") != "Custom")
        if read_only:
            why = (" It is set by SysProfile; set SysProfile to Custom first (in the same request is fine)."
                   if attr.profile else "")
            errors.append(_message(f"{BASE}.PropertyNotWritable",
                                   f"The property {name} is a read only property and cannot be assigned a "
                                   f"value.{why}", [name], where,
                                   resolution="Remove the property from the request body and resubmit the "
                                              "request if the operation failed."))
            continue
        if attr.kind == "Integer":
            if isinstance(value, bool) or not isinstance(value, int):
                errors.append(_message(f"{BASE}.PropertyValueTypeError",
                                       f"The value '{value}' for the property {name} is of a different type "
                                       "than the property can accept.", [value, name], where))
            elif not attr.lower <= value <= attr.upper:
                errors.append(_message(f"{BASE}.PropertyValueOutOfRange",
                                       f"The value '{value}' for the property {name} is not in the supported "
                                       "range of acceptable values.", [value, name], where))
            else:
                out[attr.world_key] = value
            continue
        if not isinstance(value, str):
            errors.append(_message(f"{BASE}.PropertyValueTypeError",
                                   f"The value '{value}' for the property {name} is of a different type than "
                                   "the property can accept.", [value, name], where))
            continue
        if attr.kind == "String":
            if attr.upper and len(value) > attr.upper:
                errors.append(_message(f"{BASE}.PropertyValueFormatError",
                                       f"The value '{value}' for the property {name} is of a different format "
                                       "than the property can accept.", [value, name], where))
            else:
                out[attr.world_key] = value
            continue
        if value not in attr.values:
            if bmc.vendor is DELL:
                errors.append(_message(
                    f"{IDRAC}.SYS409",
                    "Unable to set the object properties because an incorrect object value is entered.",
                    [name], [name],
                    resolution="Enter a valid object value and retry the operation. For the values "
                               f"{name} accepts ({', '.join(attr.values)}), see the attribute registry at "
                               f"{bmc.system_path}/Bios/BiosRegistry."))
            else:
                errors.append(_message(f"{BASE}.PropertyValueNotInList",
                                       f"The value '{value}' for the property {name} is not in the list of "
                                       "acceptable values.", [value, name], where,
                                       resolution=f"Choose one of {', '.join(attr.values)}."))
            continue
        out[attr.world_key] = value
    if errors:
        raise RedfishError(400, *errors)
    return out


def patch_settings(bmc: Bmc, req: Request) -> Response:
    data = req.json_object()
    for key in data:
        if key not in ("Attributes", "@Redfish.SettingsApplyTime"):
            raise RedfishError(400, _message(f"{BASE}.PropertyUnknown",
                                             f"The property {key} is not in the list of valid properties for "
                                             "the resource.", [key], [f"#/{key}"]))
    apply_time = None
    if "@Redfish.SettingsApplyTime" in data:
        if not bmc.vendor.jobs:
            raise RedfishError(400, _message(f"{BASE}.PropertyUnknown",
                                             "The property @Redfish.SettingsApplyTime is not in the list of "
                                             "valid properties for the resource.",
                                             ["@Redfish.SettingsApplyTime"], ["#/@Redfish.SettingsApplyTime"]))
        spec = data["@Redfish.SettingsApplyTime"]
        apply_time = spec.get("ApplyTime") if isinstance(spec, dict) else spec
        if apply_time not in ("OnReset", "Immediate"):
            raise RedfishError(400, _message(f"{BASE}.PropertyValueNotInList",
                                             f"The value '{apply_time}' for the property ApplyTime is not in the "
                                             "list of acceptable values.", [apply_time, "ApplyTime"],
                                             ["#/@Redfish.SettingsApplyTime/ApplyTime"],
                                             resolution="Use OnReset or Immediate (the lab has no "
                                                        "maintenance windows)."))
    if "Attributes" not in data and apply_time is None:
        raise RedfishError(400, _message(f"{BASE}.NoOperation",
                                         "The request body submitted contain no data to act upon and no changes "
                                         "to the resource took place.",
                                         resolution="Add properties in the JSON object and resubmit the "
                                                    "request."))
    if bmc.vendor.jobs and bmc.scheduled_job() is not None:
        raise _sys011()
    changes = _validate(bmc, data.get("Attributes", {}))
    if bmc.vendor.jobs:
        for key, value in changes.items():
            if bmc.host.bios.get(key, _default(bmc, key)) == value:
                bmc.staged.pop(key, None)  # back to the current value: nothing left to change
            else:
                bmc.staged[key] = value
    else:
        for key, value in changes.items():
            if bmc.host.bios.get(key, _default(bmc, key)) == value:
                bmc.host.bios_pending.pop(key, None)
            else:
                bmc.host.bios_pending[key] = value
        return Response(200, {"error": {
            "code": "iLO.0.10.ExtendedInfo",
            "message": "See @Message.ExtendedInfo for more information.",
            "@Message.ExtendedInfo": [{"MessageId": "iLO.2.14.SystemResetRequired"}],
        }})
    headers: dict[str, str] = {}
    status = 200
    if apply_time is not None and bmc.staged:
        job = _commit(bmc)
        headers["Location"] = f"{bmc.manager_path}/Jobs/{job.id}"
        status = 202
        if apply_time == "Immediate":
            bmc.lab.reset(bmc.host_name)
    return Response(status, {"@Message.ExtendedInfo": [_success()]}, headers)


def _default(bmc: Bmc, key: str) -> Any:
    attr = next((a for a in bmc.vendor.attributes if a.world_key == key), None)
    return attr.default if attr is not None else None


def get_registry(bmc: Bmc, req: Request) -> Response:
    entries = []
    profile = bmc.attributes().get("SysProfile")
    for order, attr in enumerate(bmc.vendor.attributes):
        entry: dict[str, Any] = {
            "AttributeName": attr.name,
            "CurrentValue": None,
            "DisplayName": attr.display,
            "DisplayOrder": (order + 1) * 100,
            "HelpText": f"{attr.display}.",
            "Hidden": False,
            "Immutable": attr.read_only,
            "MenuPath": f"./{attr.menu}",
            "ReadOnly": attr.read_only or (attr.profile and profile != "Custom"),
            "Type": attr.kind,
            "WriteOnly": False,
        }
        if attr.kind == "Enumeration":
            entry["Value"] = [{"ValueDisplayName": v, "ValueName": v} for v in attr.values]
        elif attr.kind == "Integer":
            entry.update(LowerBound=attr.lower, UpperBound=attr.upper, ScalarIncrement=1)
        elif attr.upper:
            entry.update(MaxLength=attr.upper, MinLength=0)
        entries.append(entry)
    dependencies = [{
        "Dependency": {"MapFrom": [{"MapFromAttribute": "SysProfile", "MapFromCondition": "NEQ",
                                    "MapFromProperty": "CurrentValue", "MapFromValue": "Custom"}],
                       "MapToAttribute": a.name, "MapToProperty": "ReadOnly", "MapToValue": True},
        "DependencyFor": a.name,
        "Type": "Map",
    } for a in bmc.vendor.attributes if a.profile]
    return Response(200, {
        "@odata.context": "/redfish/v1/$metadata#AttributeRegistry.AttributeRegistry",
        "@odata.id": f"{bmc.system_path}/Bios/BiosRegistry",
        "@odata.type": "#AttributeRegistry.v1_3_0.AttributeRegistry",
        "Id": bmc.vendor.registry,
        "Name": "BIOS Attribute Registry",
        "Description": "This registry defines a representation of BIOS Attribute instances",
        "Language": "en",
        "OwningEntity": "Dell",
        "RegistryVersion": bmc.vendor.registry.rpartition(".v")[2].replace("_", "."),
        "SupportedSystems": [{"ProductName": bmc.vendor.model, "SystemId": "SystemBios", "FirmwareVersion":
                              bmc.vendor.bios_version}],
        "RegistryEntries": {"Attributes": entries, "Dependencies": dependencies, "Menus": []},
    })
