"""Shared fixtures: where the real-output corpus and the seeds live (tests/data, copied with provenance)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# real outputs and the seed documents the tests quote, copied into the project with their provenance
# (tests/data/PROVENANCE.md): a clone with nothing beside it runs its tests
DATA = REPO / "tests" / "data"
CORPUS = DATA / "corpus"
SEEDS = DATA / "seeds"


def corpus_text(relpath: str) -> str:
    """A corpus sample as a user would paste it: the three `# source/tool/notes` header lines removed."""
    raw = (CORPUS / relpath).read_text(encoding="utf-8")
    out = raw.split("\n")
    while out and out[0].startswith(("# source:", "# tool:", "# notes:")):
        out.pop(0)
    return "\n".join(out)


def corpus_files(kind: str) -> list[str]:
    return sorted(f"{kind}/{p.name}" for p in (CORPUS / kind).glob("*.txt"))


@pytest.fixture
def corpus():
    return corpus_text
