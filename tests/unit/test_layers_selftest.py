"""The layer checker of tests/unit/test_layers.py catches what it is there to catch: a tiny fake project in
tmp_path with one violation of each kind (a check reaching a transport through a chain, a lazy and relative
import, a cycle made by a lazy import, a 501-line file) — and nothing that is allowed."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.unit.test_layers import check, collect, compare

FAKE = {
    "roce_wizard/__init__.py": "",
    "roce_wizard/model.py": "import enum\n",
    "roce_wizard/textsafe.py": "import re\n",  # a leaf utility: imports nothing of the project
    "roce_wizard/helper.py": "from roce_wizard import textsafe\nfrom roce_wizard.transports import ssh\n",
    "roce_wizard/transports/__init__.py": "",
    "roce_wizard/transports/ssh.py": "from roce_wizard.model import enum\n",
    "roce_wizard/transports/switch.py": """
        def apply():
            from ..parsers import eos  # lazy and relative: still an import
            return eos
        """,
    "roce_wizard/parsers/__init__.py": "",
    "roce_wizard/parsers/eos.py": """
        from __future__ import annotations
        from typing import TYPE_CHECKING
        from roce_wizard import model, textsafe  # allowed: model, and a leaf
        from . import base
        if TYPE_CHECKING:
            from roce_wizard.transports.ssh import Session  # type-only: never runs, not an import
        def f():
            from roce_wizard.lab import world
        """,
    "roce_wizard/parsers/base.py": "",
    "roce_wizard/lab/__init__.py": "",
    "roce_wizard/lab/world.py": "from roce_wizard.lab import proto\nfrom roce_wizard import helper\n",
    "roce_wizard/lab/proto.py": "",
    "roce_wizard/engine.py": "import roce_wizard.validate\n",
    "roce_wizard/validate.py": """
        def late():
            import roce_wizard.engine  # lazy: closes the cycle all the same
            from roce_wizard.cli import main
        """,
    "roce_wizard/cli/__init__.py": "from roce_wizard.cli.app import main\n",
    "roce_wizard/cli/app.py": "import roce_wizard.helper\nfrom roce_wizard import tui\n",  # front ends import anything
    "roce_wizard/tui/__init__.py": "",
    "roce_wizard/big.py": "x = 1\n" * 501,
    "roce_wizard/fits.py": "x = 1\n" * 500,
    "checks/__init__.py": "",
    "checks/esxi/__init__.py": "",
    "checks/esxi/rw1.py": "from roce_wizard.helper import textsafe\n",
    "checks/esxi/rw2.py": """
        from typing import TYPE_CHECKING
        from roce_wizard.parsers import eos
        if TYPE_CHECKING:
            from roce_wizard.transports import ssh
        """,
}


@pytest.fixture
def fake(tmp_path: Path) -> Path:
    for rel, text in FAKE.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return tmp_path


def found_in(root: Path) -> dict[tuple[str, str, str], str]:
    return check(collect({"roce_wizard": root / "roce_wizard", "roce_wizard_checks": root / "checks"}, base=root))


def test_each_kind_of_violation_is_found_and_nothing_else(fake):
    assert set(found_in(fake)) == {
        # a check reaches a transport through a helper (and, through the parser, the lab)
        ("checks-reach", "roce_wizard_checks.esxi.rw1", "roce_wizard.transports.ssh"),
        ("checks-reach", "roce_wizard_checks.esxi.rw2", "roce_wizard.lab.world"),
        # a parser imports the lab, lazily; the lab imports a non-leaf helper
        ("parsers-only", "roce_wizard.parsers.eos", "roce_wizard.lab.world"),
        ("lab-only", "roce_wizard.lab.world", "roce_wizard.helper"),
        # a transport reaches a parser through a lazy relative import
        ("transports-reach", "roce_wizard.transports.switch", "roce_wizard.parsers.eos"),
        # a non-front-end imports the CLI
        ("front-ends", "roce_wizard.validate", "roce_wizard.cli"),
        # engine -> validate -(lazy)-> engine
        ("cycle", "roce_wizard.engine", "roce_wizard.validate"),
        ("cycle", "roce_wizard.validate", "roce_wizard.engine"),
        ("max-lines", "roce_wizard/big.py", ">500"),
    }


def test_messages_name_the_rule_and_the_file_line_chain(fake):
    found = found_in(fake)
    reach = found[("checks-reach", "roce_wizard_checks.esxi.rw1", "roce_wizard.transports.ssh")]
    assert reach.startswith("[checks-reach]")
    assert "roce_wizard_checks.esxi.rw1 (checks/esxi/rw1.py:1) -> roce_wizard.helper" in reach
    assert "roce_wizard.helper (roce_wizard/helper.py:2) -> roce_wizard.transports.ssh" in reach
    lazy = found[("parsers-only", "roce_wizard.parsers.eos", "roce_wizard.lab.world")]
    assert "roce_wizard/parsers/eos.py:8" in lazy
    cycle = found[("cycle", "roce_wizard.engine", "roce_wizard.validate")]
    assert "roce_wizard.validate (roce_wizard/validate.py:2) -> roce_wizard.engine" in cycle
    assert "501 lines" in found[("max-lines", "roce_wizard/big.py", ">500")]


def test_a_violation_gone_from_the_code_must_leave_the_known_set_too(fake):
    found = found_in(fake)
    assert compare(found, set(found)) == ""
    stale = ("cycle", "roce_wizard.a", "roce_wizard.b")
    assert "no longer occur" in compare(found, {*found, stale}) and repr(stale) in compare(found, {*found, stale})
    missing = ("max-lines", "roce_wizard/big.py", ">500")
    assert "not in KNOWN_VIOLATIONS" in compare(found, set(found) - {missing})


def test_cutting_the_lazy_import_ends_the_cycle(fake):
    (fake / "roce_wizard/validate.py").write_text("def late():\n    pass\n", encoding="utf-8")
    assert not {v for v in found_in(fake) if v[0] == "cycle"}
