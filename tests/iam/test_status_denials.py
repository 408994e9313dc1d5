"""`onceflow status` names each distinct request the local stack's IAM refused, in one line (who, what,
on which resource, how often, AWS's reason), read with boto3 from the CloudWatch Logs group the
embedded AWS writes denials to, as `status` reads a running `onceflow start` over its endpoint."""

from __future__ import annotations

import boto3
import pytest
from botocore.exceptions import ClientError
from typer.testing import CliRunner

from onceflow.cli import app
from onceflow.engine import ACCOUNT_ID, REGION, EmbeddedAws
from onceflow.engine.iam.denials import Denial
from onceflow.engine.iam.identities import assume
from onceflow.local.stack import LocalStack
from onceflow.ops.denials import DeniedAccess, distinct, parse
from onceflow.ops.stack import Target, find_stack
from onceflow.ops.status import read_status

pytestmark = pytest.mark.embedded_only(reason="reads the embedded AWS's denial log")


def test_a_denial_line_reads_back_as_the_engine_wrote_it() -> None:
    denial = Denial("sns.amazonaws.com", "sqs:SendMessage", "arn:aws:sqs:us-east-1:123456789012:q", "because x")
    assert parse(denial.line) == (
        "sns.amazonaws.com",
        "sqs:SendMessage",
        "arn:aws:sqs:us-east-1:123456789012:q",
        "because x",
    )
    assert parse("some other line") is None
    assert distinct([denial.line, "noise", denial.line]) == [
        DeniedAccess("sns.amazonaws.com", "sqs:SendMessage", "arn:aws:sqs:us-east-1:123456789012:q", "because x", 2)
    ]


def _as_starter(embedded_aws: EmbeddedAws, stack: LocalStack, service: str) -> object:
    """A client signed with a session of the starter's execution role, as the function's own calls are."""
    role = stack.functions["StarterFunction"].role_arn
    assert role is not None
    credentials = assume(ACCOUNT_ID, role, "onceflow-local-StarterFunction")
    return boto3.client(service, endpoint_url=embedded_aws.endpoint_url, region_name=REGION, **credentials)


def test_status_names_each_distinct_denial_in_one_line(embedded_aws: EmbeddedAws, stack: LocalStack) -> None:
    if not embedded_aws.iam.on:
        pytest.skip("IAM enforcement is off (ONCEFLOW_IAM=off): nothing is refused")
    resources = find_stack(Target(stack.endpoint_url), stack.stack_name)
    assert read_status(resources, last=0).denials == []

    sns, dynamodb = _as_starter(embedded_aws, stack, "sns"), _as_starter(embedded_aws, stack, "dynamodb")
    for _ in range(2):  # the starter's role may not publish: refused twice, shown once
        with pytest.raises(ClientError, match="AuthorizationError"):
            sns.publish(TopicArn=stack.notification_topic_arn, Message="{}")  # type: ignore[attr-defined]
    with pytest.raises(ClientError, match="AccessDeniedException"):
        dynamodb.scan(TableName=stack.business_table)  # type: ignore[attr-defined]
    assert len(embedded_aws.iam.denials.all()) == 3

    principal = (
        "arn:aws:sts::123456789012:assumed-role/" + stack.functions["StarterFunction"].role_arn.rsplit("/", 1)[-1]
    )
    principal += "/onceflow-local-StarterFunction"
    table = f"arn:aws:dynamodb:us-east-1:123456789012:table/{stack.business_table}"
    report = read_status(resources, last=0)
    assert report.denials == [
        DeniedAccess(
            principal,
            "sns:Publish",
            stack.notification_topic_arn,
            "because no identity-based policy allows the sns:Publish action",
            2,
        ),
        DeniedAccess(
            principal, "dynamodb:Scan", table, "because no identity-based policy allows the dynamodb:Scan action", 1
        ),
    ]
    assert report.denials_line() == "3 requests refused, 2 distinct (principal, action, resource): below"

    result = CliRunner().invoke(
        app, ["status", "--endpoint", stack.endpoint_url, "--last", "0"], env={"COLUMNS": "400"}
    )
    assert result.exit_code == 0, result.output
    assert "access denied     │ 3 requests refused, 2 distinct (principal, action, resource): below" in result.output
    lines = [line for line in result.output.splitlines() if "is not authorized to perform" in line]
    assert lines == [
        f"2x {principal} is not authorized to perform sns:Publish on {stack.notification_topic_arn} "
        "(because no identity-based policy allows the sns:Publish action)",
        f"1x {principal} is not authorized to perform dynamodb:Scan on {table} "
        "(because no identity-based policy allows the dynamodb:Scan action)",
    ]
