"""template.yaml's parameters deploy only in combinations that work on AWS, and its windows are the
ones the docs state. The template is read as data; its Rules are evaluated here as CloudFormation
evaluates them (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/rules-section-structure.html)."""

from __future__ import annotations

import re
import tomllib
from typing import Any

import pytest

from onceflow.devtools.capacity import read_capacity_settings
from onceflow.local.template import TEMPLATE_PATH, load_sam_template

FOURTEEN_DAYS = 14 * 86_400


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return load_sam_template()


def _evaluate(expression: Any, parameters: dict[str, str]) -> Any:
    """The rule-specific intrinsics the template uses; anything else fails the test rather than pass."""
    if isinstance(expression, (str, int)):
        return str(expression)
    if isinstance(expression, list):
        return [_evaluate(member, parameters) for member in expression]
    [(function, argument)] = expression.items()
    if function == "Ref":
        return parameters[argument]
    if function == "Fn::Not":
        [inner] = argument
        return not _evaluate(inner, parameters)
    if function == "Fn::Equals":
        left, right = _evaluate(argument, parameters)
        return left == right
    if function == "Fn::Contains":
        values, value = _evaluate(argument, parameters)
        return value in values
    raise AssertionError(f"rule function {function} is not modelled by this test")


def refused(template: dict[str, Any], **overrides: Any) -> list[str]:
    """The AssertDescriptions of the rules these parameter values break (defaults for the rest)."""
    parameters = {name: str(spec.get("Default", "")) for name, spec in template["Parameters"].items()}
    parameters.update({name: str(value) for name, value in overrides.items()})
    broken = []
    for rule in template["Rules"].values():
        if "RuleCondition" in rule and not _evaluate(rule["RuleCondition"], parameters):
            continue
        broken += [a["AssertDescription"] for a in rule["Assertions"] if not _evaluate(a["Assert"], parameters)]
    return broken


def test_the_defaults_deploy(template):
    assert refused(template) == []


@pytest.mark.parametrize(
    ("batch_size", "window", "ok"), [(10, 0, True), (11, 0, False), (100, 0, False), (100, 1, True)]
)
def test_batches_above_ten_need_a_batching_window(template, batch_size, window, ok):
    """Lambda refuses BatchSize > 10 with no batching window when it creates the event source mapping
    (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html)."""
    broken = refused(template, BatchSize=batch_size, MaximumBatchingWindowInSeconds=window)
    assert (broken == []) == ok, broken


@pytest.mark.parametrize(("batch_size", "window", "ok"), [(10, 0, True), (1, 0, True), (11, 1, False), (100, 1, False)])
def test_express_takes_batches_that_run_in_one_wave(template, batch_size, window, ok):
    """EXPRESS: the starter waits for each execution, 10 of a batch side by side at most."""
    broken = refused(template, StateMachineType="EXPRESS", BatchSize=batch_size, MaximumBatchingWindowInSeconds=window)
    assert (broken == []) == ok, broken
    assert all("EXPRESS" in reason for reason in broken)


FIFO_OK = {"SourceQueueType": "FIFO"}


@pytest.mark.parametrize("workflow", ["STANDARD", "EXPRESS"])
@pytest.mark.parametrize("event_format", ["json", "eventbridge", "sns"])
def test_fifo_deploys_with_either_workflow_and_every_format_a_fifo_producer_has(template, workflow, event_format):
    assert refused(template, **FIFO_OK, StateMachineType=workflow, EventFormat=event_format) == []


@pytest.mark.parametrize("window", ["", "0"])
def test_fifo_alone_deploys_and_an_explicit_zero_window_too(template, window):
    """SourceQueueType=FIFO needs no other parameter: the window's default (empty) means none for FIFO."""
    assert refused(template, SourceQueueType="FIFO", MaximumBatchingWindowInSeconds=window) == []


@pytest.mark.parametrize(
    ("parameters", "window"),
    [
        ({}, 1),  # a standard source's default
        ({"MaximumBatchingWindowInSeconds": "0"}, 0),
        ({"MaximumBatchingWindowInSeconds": "20"}, 20),
        ({"SourceQueueType": "FIFO"}, 0),  # none: Lambda supports no window for FIFO
        ({"SourceQueueType": "FIFO", "StateMachineType": "EXPRESS"}, 0),
    ],
)
def test_the_event_source_gets_the_window_given_or_its_sources_default(parameters, window):
    """As `onceflow capacity` (and `cost`) read the translated template's event source mapping."""
    assert read_capacity_settings(TEMPLATE_PATH, parameters).batching_window_seconds == window


@pytest.mark.parametrize(
    ("value", "allowed"),
    [
        ("", True),
        ("0", True),
        ("1", True),
        ("300", True),
        ("301", False),
        ("-1", False),
        ("1.5", False),
        ("01", False),
        ("one", False),
    ],
)
def test_the_window_is_empty_or_whole_seconds_up_to_300(template, value, allowed):
    """Lambda takes 0 to 300 s (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-parameters.html);
    CloudFormation matches AllowedPattern against the whole value."""
    pattern = template["Parameters"]["MaximumBatchingWindowInSeconds"]["AllowedPattern"]
    assert (re.fullmatch(pattern, value) is not None) == allowed


@pytest.mark.parametrize(("batch_size", "window"), [(11, 1), (100, 1), (10, 1), (5, 300)])
def test_fifo_refuses_what_lambda_refuses_for_fifo(template, batch_size, window):
    """Lambda's SQS event source for a FIFO queue: BatchSize at most 10, no batching window
    (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-parameters.html)."""
    broken = refused(template, SourceQueueType="FIFO", BatchSize=batch_size, MaximumBatchingWindowInSeconds=window)
    assert broken and all("FIFO" in reason for reason in broken), broken
    if batch_size > 10:
        assert any("BatchSize 1 to 10" in reason for reason in broken)
    assert any("leave MaximumBatchingWindowInSeconds empty" in reason for reason in broken)


def test_fifo_refuses_s3_notifications_and_says_what_to_pick(template):
    """S3 event notifications cannot target a FIFO queue
    (https://docs.aws.amazon.com/AmazonS3/latest/userguide/ways-to-add-notification-config-to-bucket.html)."""
    [reason] = refused(template, **FIFO_OK, EventFormat="s3")
    assert "S3 event notifications cannot target a FIFO queue" in reason
    assert "SourceQueueType STANDARD" in reason and "EventFormat json" in reason
    assert refused(template, EventFormat="s3") == [], "a standard source still takes S3 notifications"


def test_a_full_batch_fits_in_the_starters_timeout(template):
    """The starter hands its records over one by one; at 250 ms per StartExecution in the worst case
    (p99 plus an SDK retry on throttling) the largest batch must end inside the function's timeout."""
    batch = template["Parameters"]["BatchSize"]
    timeout = template["Resources"]["StarterFunction"]["Properties"]["Timeout"]
    standard_timeout = timeout["Fn::If"][2] if isinstance(timeout, dict) else timeout
    assert batch["MaxValue"] == 100
    assert batch["MaxValue"] * 0.25 <= standard_timeout


def test_queue_retention_is_the_maximum_and_records_outlive_it(template):
    resources = template["Resources"]
    assert resources["SourceQueue"]["Properties"]["MessageRetentionPeriod"] == FOURTEEN_DAYS
    assert resources["DeadLetterQueue"]["Properties"]["MessageRetentionPeriod"] == FOURTEEN_DAYS
    # A moved message keeps its original enqueue time: 14 days after it was sent it is gone from both
    # queues, so a record kept longer than that is found by every SQS redelivery.
    assert template["Parameters"]["RecordRetentionDays"]["MinValue"] * 86_400 > FOURTEEN_DAYS


def test_only_the_state_record_expires(template):
    resources = template["Resources"]
    ttl = resources["ProcessedEventsTable"]["Properties"]["TimeToLiveSpecification"]
    assert ttl == {"AttributeName": "ttl", "Enabled": True}
    assert "TimeToLiveSpecification" not in resources["BusinessTable"]["Properties"], (
        "the business row is what keeps a resend after RecordRetentionDays from being written twice"
    )


def test_state_machine_logs_errors_without_execution_data_by_default(template):
    parameters = template["Parameters"]
    assert parameters["StateMachineLogLevel"]["Default"] == "ERROR"
    assert "ALL" in parameters["StateMachineLogLevel"]["AllowedValues"]
    assert parameters["StateMachineLogExecutionData"]["Default"] == "false"
    logging = template["Resources"]["PipelineStateMachine"]["Properties"]["Logging"]
    assert logging["Level"] == {"Ref": "StateMachineLogLevel"}
    assert logging["IncludeExecutionData"] == {"Ref": "StateMachineLogExecutionData"}


def test_the_state_machine_may_read_the_business_row(template):
    """The look-up reads the order row (TransactGetItems needs GetItem on each table); moto does not
    enforce IAM, so only this test sees a missing grant."""
    statements = template["Resources"]["PipelineStateMachine"]["Properties"]["Policies"][0]["Statement"]
    on_orders = {
        action
        for statement in statements
        if statement["Resource"] == {"Fn::GetAtt": ["BusinessTable", "Arn"]}
        for action in statement["Action"]
    }
    assert {"dynamodb:PutItem", "dynamodb:GetItem"} <= on_orders


def test_samconfig_spells_out_the_templates_own_defaults(template):
    """samconfig.toml's default deploy says it runs with the template's defaults: each value it
    spells out must be one (a stale one would override the default it claims to show)."""
    config = tomllib.loads((TEMPLATE_PATH.parent / "samconfig.toml").read_text())
    spelled = dict(entry.split("=", 1) for entry in config["default"]["deploy"]["parameters"]["parameter_overrides"])
    defaults = {name: str(spec.get("Default", "")) for name, spec in template["Parameters"].items()}
    assert {name: defaults.get(name) for name in spelled} == spelled
