"""The project's own template.yaml and ASL pass every check; the command line reports and exits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from onceflow.devtools.static_checks import CHECKS, Project, definitions_as_objects, main, placeholder_value, run_check
from tests.static.conftest import ProjectCopy, StaticRuns, real_files

NEEDS = {"sam-validate": "sam_cli", "sam-lint": "sam_cli", "checkov": "checkov_cli"}
REAL_FILES = real_files(*CHECKS)


@pytest.mark.parametrize("name", list(CHECKS))
def test_real_files_pass(name: str, static_runs: StaticRuns, request: pytest.FixtureRequest) -> None:
    if name in NEEDS:
        request.getfixturevalue(NEEDS[name])
    result = static_runs.result(REAL_FILES, name)
    assert result.passed, f"{name} failed on the project's own files:\n{result.output}"


def test_translated_template_is_written_under_the_build_dir_with_definitions_as_objects(
    real_project: Project,
) -> None:
    translated = real_project.translated
    assert translated.parent == real_project.build_dir
    machines = [
        resource["Properties"]
        for resource in json.loads(translated.read_text())["Resources"].values()
        if resource["Type"] == "AWS::StepFunctions::StateMachine"
    ]
    assert machines
    assert all("StartAt" in machine["Definition"] and "DefinitionString" not in machine for machine in machines)


def test_definition_with_intrinsic_parts_is_left_as_it_is() -> None:
    joined = {"Fn::Join": ["\n", ["{", {"Ref": "Something"}, "}"]]}
    template = {
        "Resources": {"M": {"Type": "AWS::StepFunctions::StateMachine", "Properties": {"DefinitionString": joined}}}
    }
    assert definitions_as_objects(template)["Resources"]["M"]["Properties"] == {"DefinitionString": joined}


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("NotificationTopicArn", "arn:aws:sns:us-east-1:123456789012:notification-topic-arn"),
        ("DeadLetterQueueUrl", "https://sqs.us-east-1.amazonaws.com/123456789012/dead-letter-queue-url"),
        ("ProcessedEventsTable", "processed-events-table"),
        ("WorkerFunctionArn", "arn:aws:lambda:us-east-1:123456789012:function:worker-function-arn"),
    ],
)
def test_placeholder_values_are_plausible(name: str, value: str) -> None:
    assert placeholder_value(name) == value


def test_command_line_exits_non_zero_on_a_failure_and_names_it(
    project_copy: ProjectCopy, capsys: pytest.CaptureFixture[str]
) -> None:
    project_copy.edit_asl(lambda definition: definition.update(StartAt="Nowhere"))
    code = main(["--root", str(project_copy.root), "--build-dir", str(project_copy.build_dir), "statelint"])
    out = capsys.readouterr().out
    assert code == 1
    assert "[FAIL] statelint" in out
    assert "StartAt value Nowhere not found" in out
    assert "FAILED: statelint" in out


def test_command_line_runs_the_chosen_subset(project_copy: ProjectCopy, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--root", str(project_copy.root), "--build-dir", str(project_copy.build_dir), "statelint", "cfn-lint"])
    out = capsys.readouterr().out
    assert code == 0
    assert "[PASS] statelint" in out
    assert "[PASS] cfn-lint" in out
    assert "sam-validate" not in out


def test_command_line_lists_checks_and_rejects_unknown_ones(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--list"]) == 0
    assert capsys.readouterr().out.split() == list(CHECKS)
    with pytest.raises(SystemExit) as exit_info:
        main(["no-such-check"])
    assert exit_info.value.code == 2


def test_missing_template_is_a_failure_not_a_crash(tmp_path: Path) -> None:
    result = run_check("cfn-lint", Project(tmp_path, tmp_path / "build"))
    assert not result.passed
    assert "template.yaml" in result.output
