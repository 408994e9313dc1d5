"""The payments app passes the tools a SAM user runs, offline, from the pinned .venv-sam and this venv:
`sam validate` (the SAM translator), `sam validate --lint`, cfn-lint on the translated template with
the ASL inlined (rule E3601 reads it only there) and statelint; and `sam init --location`, SAM's own
door to a cookiecutter template, renders the same app as `onceflow init`."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from onceflow.app_template import location
from onceflow.app_template.render import Rendered, template_context
from onceflow.devtools.static_checks import CheckResult, Project, find_tool, run_each
from tests.adoption.conftest import payments_values

CHECKS = ("sam-validate", "sam-lint", "cfn-lint", "statelint")


@pytest.fixture(scope="module")
def results(payments_root: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, CheckResult]:
    project = Project(payments_root, tmp_path_factory.mktemp("payments-build"))
    return {result.name: result for result in run_each([(check, project) for check in CHECKS])}


@pytest.mark.parametrize("check", CHECKS)
def test_the_payments_app_passes(check: str, sam_cli: None, results: dict[str, CheckResult]) -> None:
    result = results[check]
    assert result.passed, f"{check} failed on the generated app:\n{result.output}"


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_sam_init_renders_the_same_app_as_onceflow_init(payments_app: Rendered, tmp_path: Path, sam_cli: None) -> None:
    context = template_context(payments_app.path, payments_values())
    completed = subprocess.run(
        [
            str(find_tool("sam", ".venv-sam")),
            "init",
            "--location",
            str(location()),
            "--no-input",
            "--extra-context",
            json.dumps(context),
            "--output-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "SAM_CLI_TELEMETRY": "0"},
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    by_sam, by_onceflow = _tree(tmp_path / payments_app.path.name), _tree(payments_app.path)
    assert sorted(by_sam) == sorted(by_onceflow)
    assert [name for name in by_sam if by_sam[name] != by_onceflow[name]] == []
