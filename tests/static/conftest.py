"""A copy of template.yaml and the ASL files to break, and the tools the checks need."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from onceflow.devtools.static_checks import CheckFailed, Project, find_tool
from onceflow.local.template import PROJECT_ROOT, load_sam_template

Document = dict[str, Any]


class ProjectCopy(Project):
    """A Project over copied files, with helpers to edit them as data."""

    def edit_template(self, change: Callable[[Document], None]) -> None:
        """Apply `change` to the parsed template; it is written back as JSON (valid YAML)."""
        template = load_sam_template(self.template)
        change(template)
        self.template.write_text(json.dumps(template, indent=2))

    def edit_asl(self, change: Callable[[Document], None]) -> None:
        for path in self.asl_files():
            definition = json.loads(path.read_text())
            change(definition)
            path.write_text(json.dumps(definition, indent=2))


@pytest.fixture
def project_copy(tmp_path: Path) -> ProjectCopy:
    root = tmp_path / "project"
    (root / "statemachine").mkdir(parents=True)
    shutil.copy(PROJECT_ROOT / "template.yaml", root / "template.yaml")
    for asl in (PROJECT_ROOT / "statemachine").glob("*.asl.json"):
        shutil.copy(asl, root / "statemachine" / asl.name)
    return ProjectCopy(root, tmp_path / "build")


@pytest.fixture
def real_project(tmp_path: Path) -> Project:
    """The project's own files; generated files go to a temporary directory."""
    return Project(PROJECT_ROOT, tmp_path / "build")


def _require(tool: str, venv: str, what: str) -> None:
    try:
        find_tool(tool, venv)
    except CheckFailed as missing:
        reason = f"{what} is not installed ({missing}); `make venv-tools` creates {venv}"
        # `make test` and .ci/run create the tool venvs first: there a missing tool is a failure, never a skip.
        if os.environ.get("CI") or os.environ.get("ONCEFLOW_REQUIRE_TOOLS"):
            pytest.fail(reason)
        pytest.skip(reason)


@pytest.fixture
def sam_cli() -> None:
    _require("sam", ".venv-sam", "aws-sam-cli")


@pytest.fixture
def checkov_cli() -> None:
    _require("checkov", ".venv-checkov", "checkov")


def resources_of_type(template: Document, resource_type: str) -> Iterator[tuple[str, Document]]:
    for logical_id, resource in template["Resources"].items():
        if resource["Type"] == resource_type:
            yield logical_id, resource


def states(definition: Document) -> Iterator[tuple[str, Document]]:
    """Every state, nested ones (Parallel branches, Map processors) included."""
    for name, state in definition["States"].items():
        yield name, state
        for branch in state.get("Branches", []):
            yield from states(branch)
        for key in ("ItemProcessor", "Iterator"):
            if key in state:
                yield from states(state[key])
