"""Render each wizard screen to docs/wizard-<screen>.svg and .png (README shows the PNGs).

Runs the wizard headless on the recorded sample cluster (examples/sample-cluster, replay transport),
so the pictures do not depend on ports, timing or a lab. SVG comes from Textual's save_screenshot;
PNG from cairosvg (PyPI; needs the cairo library, present on Debian as libcairo2).

    python3 scripts/screenshots.py [--size 80x24] [--out docs]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "examples" / "sample-cluster"


async def render(out: Path, size: tuple[int, int]) -> list[Path]:
    from roce_wizard.tui.app import make_app  # noqa: PLC0415
    from roce_wizard.tui.screens.main import MainScreen  # noqa: PLC0415

    app = make_app(SAMPLE / "inventory.yaml", replay=SAMPLE / "recordings.yaml", subtitle="sample cluster (recorded)")
    written: list[Path] = []

    async with app.run_test(size=size) as pilot:
        async def settle() -> None:
            for _ in range(200):
                await pilot.pause(0.05)
                if app.busy is None and not any(w.is_running for w in app.workers):
                    return

        def shot(name: str) -> None:
            path = out / f"wizard-{name}.svg"
            app.save_screenshot(filename=path.name, path=str(out))
            written.append(path)

        await settle()
        shot("welcome")
        await pilot.press("enter")
        await settle()
        screen = app.screen
        assert isinstance(screen, MainScreen)
        _, rows, columns = screen.shape
        screen.query_one("#grid").move_cursor(row=rows.index("esx-02"), column=columns.index("RW209") + 1)
        await pilot.pause(0.2)
        shot("main")
        await pilot.press("s")
        await pilot.pause(0.3)
        shot("fix-preview")
        await pilot.press("escape")
        await pilot.press("a")  # fix everything, rebooting as needed: its preview
        await pilot.pause(0.3)
        shot("fix-all")
        await pilot.press("escape")
        await pilot.press("b")
        await pilot.pause(0.3)
        shot("reboots")
        await pilot.press("escape")
        await pilot.press("question_mark")
        await pilot.pause(0.3)
        shot("help")
        await pilot.press("escape")
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="80x24")  # the size the wizard promises (over SSH)
    parser.add_argument("--out", type=Path, default=REPO / "docs")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    args.out.mkdir(parents=True, exist_ok=True)
    # a throwaway state dir: the run logs of the screenshots are not the user's
    os.environ.setdefault("ROCE_WIZARD_STATE_DIR", tempfile.mkdtemp(prefix="roce-wizard-shots-"))
    svgs = asyncio.run(render(args.out, (width, height)))
    try:
        import cairosvg  # noqa: PLC0415
    except ImportError:
        print("cairosvg is not installed (pip install cairosvg): wrote the SVGs only")
        cairosvg = None
    for svg in svgs:
        if cairosvg is not None:
            png = svg.with_suffix(".png")
            cairosvg.svg2png(url=str(svg), write_to=str(png))
            print(png)
        else:
            print(svg)


if __name__ == "__main__":
    main()
