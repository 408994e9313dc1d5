"""The template checks fail on a broken template.yaml, naming the problem."""

from __future__ import annotations

import pytest

from onceflow.devtools.static_checks import SAM_IN_ONE_PROCESS, run_check
from tests.static.conftest import Document, StaticRuns, Variant, broken_template, resources_of_type


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


UNKNOWN_SQS_EVENT_PROPERTY = broken_template(_add_unknown_sqs_event_property, "sam-validate", "cfn-lint")
OUTPUT_WITH_REF_TO_MISSING_RESOURCE = broken_template(_add_output_with_ref_to_missing_resource, "sam-lint", "cfn-lint")
FUNCTION_VARIABLE_WITH_REF_TO_MISSING_RESOURCE = broken_template(
    _add_function_variable_with_ref_to_missing_resource, "cfn-lint"
)


@pytest.mark.usefixtures("sam_cli")
def test_unknown_sqs_event_property_fails_sam_validate(static_runs: StaticRuns) -> None:
    result = static_runs.result(UNKNOWN_SQS_EVENT_PROPERTY, "sam-validate")
    assert not result.passed
    assert "property BogusSetting not defined for resource of type SQS" in result.output


def test_unknown_sqs_event_property_fails_the_translation_for_cfn_lint(static_runs: StaticRuns) -> None:
    result = static_runs.result(UNKNOWN_SQS_EVENT_PROPERTY, "cfn-lint")
    assert not result.passed
    assert "could not translate" in result.output
    assert "BogusSetting" in result.output


@pytest.mark.usefixtures("sam_cli")
def test_sam_in_one_process_reports_what_a_sam_process_of_its_own_reports(
    static_runs: StaticRuns, monkeypatch: pytest.MonkeyPatch
) -> None:
    in_one_process = static_runs.result(UNKNOWN_SQS_EVENT_PROPERTY, "sam-validate")
    monkeypatch.setenv(SAM_IN_ONE_PROCESS, "0")
    on_its_own = run_check("sam-validate", static_runs.copy(UNKNOWN_SQS_EVENT_PROPERTY))
    assert (on_its_own.passed, on_its_own.output) == (in_one_process.passed, in_one_process.output)


@pytest.mark.usefixtures("sam_cli")
def test_ref_to_missing_resource_fails_sam_lint(static_runs: StaticRuns) -> None:
    result = static_runs.result(OUTPUT_WITH_REF_TO_MISSING_RESOURCE, "sam-lint")
    assert not result.passed
    assert "'MissingQueue' is not" in result.output


@pytest.mark.parametrize(
    "broken",
    [OUTPUT_WITH_REF_TO_MISSING_RESOURCE, FUNCTION_VARIABLE_WITH_REF_TO_MISSING_RESOURCE],
    ids=lambda variant: variant.name,
)
def test_ref_to_missing_resource_fails_cfn_lint_on_the_translated_template(
    static_runs: StaticRuns, broken: Variant
) -> None:
    result = static_runs.result(broken, "cfn-lint")
    assert not result.passed
    assert "'MissingQueue' is not" in result.output
