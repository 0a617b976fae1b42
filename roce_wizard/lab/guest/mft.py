"""mlxconfig on a bare-metal Linux host: MFT's one implementation (lab/tools/mft.py) over the host's card."""

from __future__ import annotations

from roce_wizard.lab.guest.state import _gs, _guest
from roce_wizard.lab.proto import Ctx, Reply
from roce_wizard.lab.tools import mft
from roce_wizard.lab.world import Card


def prog_mlxconfig(ctx: Ctx, argv: list[str]) -> Reply:
    card: Card | None = _gs(ctx.world, _guest(ctx.world, ctx.target))["card"]
    names = set() if card is None else {card.pci(1), f"0000:{card.pci(1)}", card.pci(2), f"0000:{card.pci(2)}",
                                        f"/dev/mst/{card.mst_name}", card.mst_name}

    def resolve(dev: str) -> Card | None:
        return card if dev in names else None

    cards = [] if card is None else [(card, f"/dev/mst/{card.mst_name}")]
    return mft.mlxconfig(ctx, argv, mft.MstDevices(card is not None, cards, resolve))
