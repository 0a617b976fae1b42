"""What a BMC says it supports of Redfish's query parameters, and the URLs that use it.

DMTF DSP0266 (Redfish Specification), clause "Query parameters": `$expand` (`.` = every hyperlink not
under `Links`, `*` = every hyperlink, `$levels=n` how deep) and `$select` (a subset of the properties)
are optional; a service lists the ones it implements in its service root under
`ProtocolFeaturesSupported` (`ExpandQuery: {NoLinks, ExpandAll, Levels, ...}`, `SelectQuery: true`;
ServiceRoot schema v1_3_0 and later). A service answers a `$` parameter it does not implement with 501
(DSP0266), but older ones (iLO 4) silently ignore it and some (iDRAC) answer 400/404/405 on URIs they do
not expand. So: ask only where the root advertises it, check the answer, and fall back to plain GETs
(remembering, for the rest of the run, not to ask that BMC again).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

# the ComputerSystem properties `redfish bios` reads (bios_document, vendor_of)
SYSTEM_SELECT = ("Id", "Manufacturer", "Model", "SerialNumber", "SKU", "BiosVersion", "HostName", "PowerState",
                 "Links", "Actions", "Bios", "Oem")
# Bios/Settings: only the staged values
SETTINGS_SELECT = ("Attributes",)


@dataclass(frozen=True)
class ProtocolFeatures:
    expand: str | None = None  # "." or "*": the $expand option this BMC implements, None when neither
    levels: bool = False  # it takes `$levels=n`
    select: bool = False  # it implements $select

    @classmethod
    def of(cls, root: dict[str, Any]) -> ProtocolFeatures:
        """Read from the service root; nothing advertised (or not a JSON object) is nothing supported."""
        supported = root.get("ProtocolFeaturesSupported")
        if not isinstance(supported, dict):
            return cls()
        expand = supported.get("ExpandQuery")
        expand = expand if isinstance(expand, dict) else {}
        option = "." if expand.get("NoLinks") is True else "*" if expand.get("ExpandAll") is True else None
        return cls(expand=option, levels=expand.get("Levels") is True, select=supported.get("SelectQuery") is True)

    def expanded(self, path: str) -> str | None:
        """`path` with its members inlined one level deep, or None when this BMC cannot."""
        if self.expand is None:
            return None
        return f"{path}?$expand={self.expand}" + ("($levels=1)" if self.levels else "")

    def selected(self, path: str, properties: tuple[str, ...]) -> str:
        """`path` asking for `properties` only, or `path` itself when this BMC has no $select."""
        return f"{path}?$select={','.join(properties)}" if self.select else path

    def without_expand(self) -> ProtocolFeatures:
        return replace(self, expand=None, levels=False)

    def without_select(self) -> ProtocolFeatures:
        return replace(self, select=False)


def expanded_member(collection: Any) -> dict[str, Any] | None:
    """The first member of an `$expand`ed collection when it really was inlined (more than its @odata.id)."""
    members = collection.get("Members") if isinstance(collection, dict) else None
    first = members[0] if isinstance(members, list) and members else None
    if isinstance(first, dict) and first.get("@odata.id") and any(not k.startswith("@odata.") for k in first):
        return first
    return None
