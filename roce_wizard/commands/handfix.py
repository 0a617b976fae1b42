"""Fix-by-hand text: the commands a finding shows for an operator to paste, as root, on the host.

A value read from a host (an mst device name, an nmlx5_core parameter, a vmnic, an interface) reaches
such a command the way it reaches a command the tool runs: through the same validators
(`commands.shell.safe` and the checklib `safe_*` / `params_set_command`, which raise `UnsafeValue`), quoted.
A value that fails gives no command at all, but a sentence saying why: a pasted line must never run
something the host printed. Values inside a `#` comment count too (a newline ends the comment).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable

from roce_wizard.commands.shell import UnsafeValue

# what a sentence names, per value a fix embeds
MST_DEVICE = "the device name printed by mst / mlxconfig"
NMLX5_PARAMS = "the nmlx5_core parameter string read from the host"
VMNIC = "the vmnic name printed by esxcli"
PCI = "the PCI address printed by the host"
PSID = "the PSID printed by mlxfwmanager"
NETDEV = "the interface name printed by the host"
RDMA_DEVICE = "the RDMA device name printed by the host"
REDFISH_URI = "a Redfish URI the BMC printed"
SWITCH_PORT = "the port name printed by the switch"


def refused(source: str) -> str:
    """The sentence shown instead of a command that would carry an unsafe value."""
    return f"{source} contains shell characters or is not in the expected form: not shown as a command (see the evidence)"


def pasteable(build: Callable[[], str], source: str) -> str:
    """The fix text `build()` returns, its host values validated and quoted by the validators it calls;
    when one refuses a value (UnsafeValue), the sentence saying why instead."""
    try:
        return build()
    except UnsafeValue:
        return refused(source)


# nothing a shell acts on when a pasted line carries it: no command separator, substitution, quote,
# redirection, comment, history expansion or control character
_PLAIN = re.compile(r"^[^;&|$`'\"\\<>#!\x00-\x1f\x7f]*$")


def shown_name(name: object) -> str:
    """A name an API printed (a vCenter VM, port group, datacenter), for a fix line that also reads as
    prose ("vSphere Client: Networking > RoCE-DC > …"): as it is when plain, shell-quoted when it holds
    anything a shell would act on — so that the line stays inert if pasted (control characters escaped)."""
    text = str(name)
    if _PLAIN.match(text):
        return text
    if re.search(r"[\x00-\x1f\x7f]", text):  # a newline would split the line: shown escaped (no longer exact)
        text = text.encode("unicode_escape").decode("ascii")
    return shlex.quote(text)
