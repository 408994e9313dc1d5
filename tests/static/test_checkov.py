"""checkov scans template.yaml and the translated template, and honours justified skips."""

from __future__ import annotations

import pytest

from onceflow.local.template import load_sam_template
from tests.static.conftest import Document, StaticRuns, broken_template, resources_of_type

pytestmark = pytest.mark.usefixtures("checkov_cli")
POINT_IN_TIME_RECOVERY = "CKV_AWS_28"
REASON = "test: rebuilt from the event stream"


def _first_table(template: Document) -> tuple[str, Document]:
    return next(resources_of_type(template, "AWS::DynamoDB::Table"))


def _without_point_in_time_recovery(template: Document) -> None:
    _first_table(template)[1]["Properties"].pop("PointInTimeRecoverySpecification", None)


def _skipping_point_in_time_recovery(template: Document) -> None:
    _without_point_in_time_recovery(template)
    _, table = _first_table(template)
    table.setdefault("Metadata", {})["checkov"] = {"skip": [{"id": POINT_IN_TIME_RECOVERY, "comment": REASON}]}


WITHOUT_POINT_IN_TIME_RECOVERY = broken_template(_without_point_in_time_recovery, "checkov")
SKIPPING_POINT_IN_TIME_RECOVERY = broken_template(_skipping_point_in_time_recovery, "checkov")


def test_table_without_point_in_time_recovery_fails_in_both_templates(static_runs: StaticRuns) -> None:
    project_copy = static_runs.copy(WITHOUT_POINT_IN_TIME_RECOVERY)
    table_id, _ = _first_table(load_sam_template(project_copy.template))
    result = static_runs.result(WITHOUT_POINT_IN_TIME_RECOVERY, "checkov")
    assert not result.passed
    finding = f"FAILED {POINT_IN_TIME_RECOVERY} AWS::DynamoDB::Table.{table_id} in "
    assert f"{finding}template.yaml:" in result.output
    assert f"{finding}{project_copy.shown(project_copy.translated)}:" in result.output


def test_skip_in_resource_metadata_is_honoured_in_both_templates_with_its_reason(static_runs: StaticRuns) -> None:
    project_copy = static_runs.copy(SKIPPING_POINT_IN_TIME_RECOVERY)
    table_id, _ = _first_table(load_sam_template(project_copy.template))
    result = static_runs.result(SKIPPING_POINT_IN_TIME_RECOVERY, "checkov")
    assert f"FAILED {POINT_IN_TIME_RECOVERY} " not in result.output
    skipped = f"skipped {POINT_IN_TIME_RECOVERY} AWS::DynamoDB::Table.{table_id} in "
    assert f"{skipped}template.yaml: {REASON}" in result.output
    assert f"{skipped}{project_copy.shown(project_copy.translated)}: {REASON}" in result.output
