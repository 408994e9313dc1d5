"""The template checks fail on a broken template.yaml, naming the problem."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from onceflow.devtools.static_checks import run_check
from tests.static.conftest import Document, ProjectCopy, resources_of_type


def _add_unknown_sqs_event_property(template: Document) -> None:
    for _, function in resources_of_type(template, "AWS::Serverless::Function"):
        for event in function["Properties"].get("Events", {}).values():
            if event["Type"] == "SQS":
                event["Properties"]["BogusSetting"] = 3
                return
    raise AssertionError("template.yaml has no function with an SQS event")


def _add_output_with_ref_to_missing_resource(template: Document) -> None:
    template.setdefault("Outputs", {})["BrokenQueueUrl"] = {"Value": {"Ref": "MissingQueue"}}


def _add_function_variable_with_ref_to_missing_resource(template: Document) -> None:
    """`sam validate --lint` (cfn-lint 1.58 on the SAM template) does not see this one; the translated lint does."""
    _, function = next(resources_of_type(template, "AWS::Serverless::Function"))
    variables = function["Properties"].setdefault("Environment", {}).setdefault("Variables", {})
    variables["BROKEN_QUEUE_URL"] = {"Ref": "MissingQueue"}


@pytest.mark.usefixtures("sam_cli")
def test_unknown_sqs_event_property_fails_sam_validate(project_copy: ProjectCopy) -> None:
    project_copy.edit_template(_add_unknown_sqs_event_property)
    result = run_check("sam-validate", project_copy)
    assert not result.passed
    assert "property BogusSetting not defined for resource of type SQS" in result.output


def test_unknown_sqs_event_property_fails_the_translation_for_cfn_lint(project_copy: ProjectCopy) -> None:
    project_copy.edit_template(_add_unknown_sqs_event_property)
    result = run_check("cfn-lint", project_copy)
    assert not result.passed
    assert "could not translate" in result.output
    assert "BogusSetting" in result.output


@pytest.mark.usefixtures("sam_cli")
def test_ref_to_missing_resource_fails_sam_lint(project_copy: ProjectCopy) -> None:
    project_copy.edit_template(_add_output_with_ref_to_missing_resource)
    result = run_check("sam-lint", project_copy)
    assert not result.passed
    assert "'MissingQueue' is not" in result.output


@pytest.mark.parametrize(
    "break_template", [_add_output_with_ref_to_missing_resource, _add_function_variable_with_ref_to_missing_resource]
)
def test_ref_to_missing_resource_fails_cfn_lint_on_the_translated_template(
    project_copy: ProjectCopy, break_template: Callable[[Document], None]
) -> None:
    project_copy.edit_template(break_template)
    result = run_check("cfn-lint", project_copy)
    assert not result.passed
    assert "'MissingQueue' is not" in result.output
