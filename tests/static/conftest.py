"""A copy of template.yaml and the ASL files to break, the tools the checks need, and one run of each tool.

Most of a static check's CPU is its tool's start-up, so the tests do not run a tool per test: each
test module declares the copies it breaks (`broken_template`, `broken_asl`) and the checks to run
on them, at import, before any test runs; the first test that asks `static_runs` for a tool's
result runs that tool once over every declared copy (and the real files, when declared), and each
test asserts on its own copy's result. That first test takes the tool's whole run (checkov over
three projects: ~7 s of CPU); the others take none.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from onceflow.devtools.static_checks import CHECKS, CheckFailed, CheckResult, Project, find_tool, run_each
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


def copy_of_project(base: Path) -> ProjectCopy:
    root = base / "project"
    (root / "statemachine").mkdir(parents=True)
    shutil.copy(PROJECT_ROOT / "template.yaml", root / "template.yaml")
    for asl in (PROJECT_ROOT / "statemachine").glob("*.asl.json"):
        shutil.copy(asl, root / "statemachine" / asl.name)
    return ProjectCopy(root, base / "build")


@pytest.fixture
def project_copy(tmp_path: Path) -> ProjectCopy:
    return copy_of_project(tmp_path)


@dataclass(frozen=True, eq=False)
class Variant:
    """The project's own files (`edit` None) or a copy that `edit` breaks, and the checks run on it.

    Compared by identity: each declaration is a project of its own.
    """

    name: str
    checks: tuple[str, ...]
    edit: Callable[[ProjectCopy], None] | None = None


VARIANTS: list[Variant] = []
"""Declared by the test modules as they are imported, so before the first test runs."""


def _declare(variant: Variant) -> Variant:
    unknown = [check for check in variant.checks if check not in CHECKS]
    assert not unknown, f"{variant.name}: no such check(s) {unknown}"
    VARIANTS.append(variant)
    return variant


def real_files(*checks: str) -> Variant:
    return _declare(Variant("the project's own files", checks))


def broken_template(change: Callable[[Document], None], *checks: str) -> Variant:
    """A copy whose template.yaml `change` edits, for `checks`."""
    return _declare(Variant(change.__qualname__, checks, lambda copy: copy.edit_template(change)))


def broken_asl(change: Callable[[Document], None], *checks: str) -> Variant:
    """A copy whose every ASL file `change` edits, for `checks`."""
    return _declare(Variant(change.__qualname__, checks, lambda copy: copy.edit_asl(change)))


class StaticRuns:
    """Each tool runs once in the session, over every declared variant that one of its checks is for."""

    def __init__(self, base: Path) -> None:
        self._base = base
        self._projects: dict[Variant, Project | Exception] = {}
        self._results: dict[tuple[Variant, str], CheckResult] = {}

    def project(self, variant: Variant) -> Project:
        if variant not in self._projects:
            self._projects[variant] = self._prepare(variant, len(self._projects))
        prepared = self._projects[variant]
        if isinstance(prepared, Exception):
            raise prepared
        return prepared

    def copy(self, variant: Variant) -> ProjectCopy:
        copy = self.project(variant)
        assert isinstance(copy, ProjectCopy), f"{variant.name} is not a copy"
        return copy

    def result(self, variant: Variant, check: str) -> CheckResult:
        assert check in variant.checks, f"{variant.name} is not declared for {check}"
        self.project(variant)  # a copy its edit could not break fails here, with the reason
        if (variant, check) not in self._results:
            self._run_tool(CHECKS[check])
        return self._results[(variant, check)]

    def _prepare(self, variant: Variant, number: int) -> Project | Exception:
        base = self._base / f"variant-{number}"
        if variant.edit is None:
            return Project(PROJECT_ROOT, base / "build")
        try:
            copy = copy_of_project(base)
            variant.edit(copy)
        except Exception as error:  # kept for the tests of this variant; the others still run
            return error
        return copy

    def _run_tool(self, tool: str) -> None:
        pairs = []
        for variant in VARIANTS:
            for check in variant.checks:
                if CHECKS[check] == tool and (variant, check) not in self._results:
                    with contextlib.suppress(Exception):  # a broken edit: reported by its own tests
                        pairs.append((variant, check, self.project(variant)))
        results = run_each([(check, project) for _, check, project in pairs])
        for (variant, check, _), result in zip(pairs, results, strict=True):
            self._results[(variant, check)] = result


@pytest.fixture(scope="session")
def static_runs(tmp_path_factory: pytest.TempPathFactory) -> StaticRuns:
    return StaticRuns(tmp_path_factory.mktemp("static-runs"))


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
