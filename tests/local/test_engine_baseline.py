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


def test_a_reset_does_not_lose_the_session_s_deployment(stack, embedded_aws, _deployed):
    """A test that resets the engine and deploys its own stack is followed by a `stack` that is the same
    deployment brought back (engine/bookkeeping/worlds.py), not deployed again, and works as deployed."""
    embedded_aws.reset()
    assert stack.client("stepfunctions").list_state_machines()["stateMachines"] == []  # the reset forgot it

    again = fresh_stack(embedded_aws, _deployed)
    assert again is stack  # brought back, not deployed again
    assert find_rule(again).name == again.outputs["SafetyNetRuleName"]
    assert run_execution(again, order("after-a-reset"), name="after-a-reset").path[-1] == "Mark as sent"


def test_another_embedded_aws_started_in_the_process_leaves_the_next_stack_whole(stack, embedded_aws, _deployed):
    """moto's backends are the process's: another EmbeddedAws started in it (an in-process `onceflow
    demo`, as tests/local/test_cli.py runs) resets them all, EventBridge's rules, IAM's roles, STS's
    sessions and CloudFormation's stacks with them, which a baseline does not put back. The deployment
    is brought back whole: a later test's LocalPipeline once found no safety-net rule
    (ResourceNotFoundException from DescribeRule), and the state machine's role session, issued after
    the deploy and kept by the engine's integration clients, must still be known to STS (without the
    account's STS in the deployment's world: UnrecognizedClientException from TransactWriteItems)."""
    assert run_execution(stack, order("before-another-engine"), name="before-another-engine").status == "SUCCEEDED"
    generation = embedded_aws.generation
    with EmbeddedAws():
        pass
    assert embedded_aws.generation > generation

    again = fresh_stack(embedded_aws, _deployed)
    assert again is stack
    assert find_rule(again).name == again.outputs["SafetyNetRuleName"]
    assert run_execution(again, order("after-another-engine"), name="after-another-engine").path[-1] == "Mark as sent"


def test_switching_parameter_sets_brings_each_deployment_back_as_deployed(embedded_aws, _deployed):
    standard = fresh_stack(embedded_aws, _deployed)
    assert run_execution(standard, order("in-standard"), name="in-standard").path[-1] == "Mark as sent"
    express = fresh_stack(embedded_aws, _deployed, mode="EXPRESS")
    sfn = express.client("stepfunctions")
    assert sfn.describe_state_machine(stateMachineArn=express.state_machine_arn)["type"] == "EXPRESS"
    assert order_rows(express) == []  # the standard deployment's row is not in this one
    express.client("sqs").send_message(QueueUrl=express.dead_letter_queue_url, MessageBody="in express")

    back = fresh_stack(embedded_aws, _deployed)
    assert back is standard  # brought back, not deployed again
    machines = sfn.list_state_machines()["stateMachines"]
    assert [m["stateMachineArn"] for m in machines] == [standard.state_machine_arn]
    assert sfn.describe_state_machine(stateMachineArn=standard.state_machine_arn)["type"] == "STANDARD"
    assert order_rows(standard) == [] and dead_letters(standard) == []  # and just-deployed
    assert run_execution(standard, order("in-standard"), name="in-standard").path[-1] == "Mark as sent"

    assert fresh_stack(embedded_aws, _deployed, mode="EXPRESS") is express
    assert dead_letters(express) == [] and order_rows(express) == []


def test_a_service_first_used_after_the_deploy_is_empty_again_for_the_next_test(stack, embedded_aws, _deployed):
    """A baseline restores the deployed resources only; what a test made in a service the deploy never
    used (here Secrets Manager) is gone too, as it would be on a new deploy."""
    secrets = stack.client("secretsmanager")
    secrets.create_secret(Name="made-by-a-test", SecretString="x")

    again = fresh_stack(embedded_aws, _deployed)
    assert secrets.list_secrets()["SecretList"] == []
    assert run_execution(again, order("after-a-secret"), name="after-a-secret").path[-1] == "Mark as sent"
