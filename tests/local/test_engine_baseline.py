"""Between tests the stack is brought back to just-deployed (engine/bookkeeping/baseline.py), not redeployed."""

from __future__ import annotations

import json

import pytest

from onceflow.engine import ACCOUNT_ID, REGION, EmbeddedAws
from onceflow.engine.bookkeeping.baseline import Baseline
from onceflow.local.safety_net import find_rule
from tests.conftest import fresh_stack
from tests.support import dead_letters, order, order_rows, run_execution, state_rows

pytestmark = pytest.mark.embedded_only(reason="restores the embedded engine's backends")


def test_restore_forgets_what_a_test_did_and_puts_back_what_it_deleted(stack, embedded_aws):
    baseline = Baseline.capture(embedded_aws.lock, ACCOUNT_ID, REGION)
    sfn, sqs, sns = stack.client("stepfunctions"), stack.client("sqs"), stack.client("sns")
    assert run_execution(stack, order("before-restore"), name="before-restore").status == "SUCCEEDED"
    sqs.send_message(QueueUrl=stack.dead_letter_queue_url, MessageBody="left over")
    extra_queue = sqs.create_queue(QueueName="made-by-a-test")["QueueUrl"]
    definition = json.loads(sfn.describe_state_machine(stateMachineArn=stack.state_machine_arn)["definition"])
    version = sfn.update_state_machine(
        stateMachineArn=stack.state_machine_arn,
        definition=json.dumps({**definition, "Comment": "changed by a test"}),
        publish=True,
    )["stateMachineVersionArn"]
    sfn.create_state_machine_alias(
        name="live", routingConfiguration=[{"stateMachineVersionArn": version, "weight": 100}]
    )
    sns.delete_topic(TopicArn=stack.notification_topic_arn)  # how a test makes Publish fail

    baseline.restore(embedded_aws.lock)

    assert sfn.list_executions(stateMachineArn=stack.state_machine_arn)["executions"] == []
    assert order_rows(stack) == [] and state_rows(stack) == [] and dead_letters(stack) == []
    assert extra_queue not in sqs.list_queues().get("QueueUrls", [])
    restored = json.loads(sfn.describe_state_machine(stateMachineArn=stack.state_machine_arn)["definition"])
    assert restored == definition
    assert "revisionId" not in sfn.describe_state_machine(stateMachineArn=stack.state_machine_arn)
    assert sfn.list_state_machine_versions(stateMachineArn=stack.state_machine_arn)["stateMachineVersions"] == []
    assert sfn.list_state_machine_aliases(stateMachineArn=stack.state_machine_arn)["stateMachineAliases"] == []
    assert stack.notification_topic_arn in {t["TopicArn"] for t in sns.list_topics()["Topics"]}
    # The restored stack works as deployed, the same execution name included.
    assert run_execution(stack, order("before-restore"), name="before-restore").path[-1] == "Mark as sent"


def test_a_reset_makes_the_next_stack_deploy_again(embedded_aws):
    generation = embedded_aws.generation
    embedded_aws.reset()
    assert embedded_aws.generation == generation + 1  # the `stack` fixture deploys again next time


def test_another_embedded_aws_started_in_the_process_makes_the_next_stack_deploy_again(stack, embedded_aws, _deployed):
    """moto's backends are the process's: another EmbeddedAws started in it (an in-process `onceflow
    demo`, as tests/local/test_cli.py runs) resets them all, EventBridge's rules, IAM's roles and
    CloudFormation's stacks with them, which a baseline does not put back. The next stack used to be
    restored from its baseline all the same, and a later test's LocalPipeline found no safety-net
    rule (ResourceNotFoundException from DescribeRule)."""
    generation = embedded_aws.generation
    with EmbeddedAws():
        pass
    assert embedded_aws.generation > generation

    again = fresh_stack(embedded_aws, _deployed)
    assert find_rule(again).name == again.outputs["SafetyNetRuleName"]
    assert run_execution(again, order("after-another-engine"), name="after-another-engine").path[-1] == "Mark as sent"
