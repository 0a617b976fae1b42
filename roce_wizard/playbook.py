"""playbooks/*.yaml -> ordered stages of check codes (+ policy overrides). Data only."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from roce_wizard import yamlguard
from roce_wizard.model import Stage


class PlaybookError(ValueError):
    pass


@dataclass(frozen=True)
class PlaybookStage:
    id: Stage
    title: str
    checks: tuple[str, ...]


@dataclass(frozen=True)
class Playbook:
    name: str
    title: str
    stages: tuple[PlaybookStage, ...]
    policy: dict[str, Any] = field(default_factory=dict)
    path: str = ""

    def stage_of(self, code: str) -> Stage | None:
        for stage in self.stages:
            if code in stage.checks:
                return stage.id
        return None

    @property
    def codes(self) -> list[str]:
        return [c for s in self.stages for c in s.checks]


def playbooks_dir() -> Path:
    here = Path(__file__).resolve().parent
    source_tree = here.parent / "playbooks"
    return source_tree if source_tree.is_dir() else here / "_playbooks"


def load_playbook(name_or_path: str) -> Playbook:
    path = Path(name_or_path)
    if not path.suffix:
        path = playbooks_dir() / f"{name_or_path}.yaml"
    if not path.exists():
        known = ", ".join(sorted(p.stem for p in playbooks_dir().glob("*.yaml")))
        raise PlaybookError(f"no playbook {name_or_path!r} (known: {known})")
    try:  # a user's playbook file: depth, aliases and tags bounded (roce_wizard/yamlguard.py)
        data = yamlguard.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise PlaybookError(f"{path}:{mark.line + 1 if mark else '?'}: {exc.problem or exc.context}") from None
    except (yaml.YAMLError, OSError, UnicodeDecodeError) as exc:
        raise PlaybookError(f"{path}: cannot read the playbook: {exc}") from None
    if not isinstance(data, dict):
        raise PlaybookError(f"{path}: expected a mapping with 'stages'")
    stages = []
    order = list(Stage)
    last = -1
    for i, raw in enumerate(data.get("stages") or []):
        try:
            stage = Stage(raw["id"])
        except (KeyError, ValueError, TypeError):
            raise PlaybookError(f"{path}: stages[{i}]: expected id one of {[s.value for s in Stage]}") from None
        if order.index(stage) <= last:
            raise PlaybookError(f"{path}: stage {stage.value} is out of order (stages go "
                                f"{', '.join(s.value for s in Stage)})")
        last = order.index(stage)
        checks = tuple(str(c) for c in (raw.get("checks") or []))
        stages.append(PlaybookStage(stage, str(raw.get("title", stage.value)), checks))
    return Playbook(str(data.get("name", path.stem)), str(data.get("title", "")), tuple(stages),
                    dict(data.get("policy") or {}), str(path))
