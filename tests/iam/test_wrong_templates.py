"""Deliberately wrong templates fail locally as they would on AWS: the real template.yaml, altered in a
copy (one mistake each), deployed onto the embedded AWS and run through the real pipeline. Each test
asserts that the denial happened (counted in `aws.iam.denials`), the exact words AWS answers with,
and where the event went.

The mistakes are the issue's: the state machine's role without `sns:Publish`; the subscriber's queue
policy admitting another topic than the notification topic (and, for comparison, without the
`aws:SourceArn` condition at all, which AWS accepts); a KMS key policy that does not admit SNS, on a
subscriber queue encrypted with that key.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from onceflow.engine import EmbeddedAws
from onceflow.local.pipeline import LocalPipeline
from onceflow.local.stack import LocalStack
from onceflow.local.template import PROJECT_ROOT
from onceflow.ops.executions import history
from tests.conftest import fresh_stack

pytestmark = pytest.mark.embedded_only(reason="deploys altered copies of the template onto the embedded AWS")

SUBSCRIBER = {"DeploySubscriber": "true"}

PUBLISH_GRANT = """\
            - Sid: PublishNotification
              Effect: Allow
              Action: [sns:Publish]
              Resource: !Ref NotificationTopic
"""
SUBSCRIBER_SOURCE_ARN = """\
            Condition:
              ArnEquals:
                aws:SourceArn: !Ref NotificationTopic
"""
SUBSCRIBER_QUEUE_ENCRYPTION = """\
      SqsManagedSseEnabled: true
      # An SNS FIFO topic's subscriber keeps each group's order"""
SUBSCRIBER_DEAD_LETTER_QUEUE = """\
  SubscriberDeadLetterQueue:
    Type: AWS::SQS::Queue
"""
SUBSCRIBER_ROLE_GRANTS = """\
              - Sid: ConsumeSubscriberQueue
"""

# A customer managed key for the subscriber queue, whose key policy lets the account's IAM policies
# allow its use and admits no service principal: SNS cannot use it.
KEY_WITHOUT_SNS = """\
  SubscriberQueueKey:
    Type: AWS::KMS::Key
    Condition: HasSubscriber
    Properties:
      Description: Encrypts the subscriber queue.
      EnableKeyRotation: true
      KeyPolicy:
        Version: "2012-10-17"
        Statement:
          - Sid: AccountAdministersTheKeyThroughIam
            Effect: Allow
            Principal:
              AWS: !Sub arn:${AWS::Partition}:iam::${AWS::AccountId}:root
            Action: kms:*
            Resource: "*"
"""
# What the SQS Developer Guide's key policy for SNS adds.
SNS_MAY_USE_THE_KEY = """\
          - Sid: NotificationTopicEncryptsDeliveries
            Effect: Allow
            Principal:
              Service: sns.amazonaws.com
            Action: [kms:GenerateDataKey*, kms:Decrypt]
            Resource: "*"
            Condition:
              ArnEquals:
                aws:SourceArn: !Ref NotificationTopic
"""
SUBSCRIBER_DECRYPTS = """\
              - Sid: DecryptSubscriberQueue
                Effect: Allow
                Action: kms:Decrypt
                Resource: !GetAtt SubscriberQueueKey.Arn
"""


_URI = re.compile(r"^( +(?:CodeUri|ContentUri|DefinitionUri)): (\S+)$", re.MULTILINE)


def _replaced(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"the template no longer holds exactly one {old!r}"
    return text.replace(old, new)


def altered_app(folder: Path, *edits: tuple[str, str]) -> Path:
    """A copy of the app's template.yaml with each (old, new) edit made, beside the project's own
    sample bodies. Its code and state machine URIs point at the project's own folders (absolute), so
    the functions run the very modules this process loaded from them. Returns the template's path."""
    folder.mkdir()
    text = (PROJECT_ROOT / "template.yaml").read_text()
    for old, new in edits:
        text = _replaced(text, old, new)
    text = _URI.sub(lambda found: f"{found[1]}: {PROJECT_ROOT / found[2]}", text)
    (folder / "events").symlink_to(PROJECT_ROOT / "events")
    (folder / "template.yaml").write_text(text)
    return folder / "template.yaml"


@pytest.fixture
def deploy_altered(embedded_aws: EmbeddedAws, _deployed: dict, tmp_path: Path) -> Callable[..., LocalStack]:
    if not embedded_aws.iam.on:
        pytest.skip("IAM enforcement is off (ONCEFLOW_IAM=off): a wrong template is not refused")

    def deploy(name: str, *edits: tuple[str, str], parameters: dict[str, str] | None = None) -> LocalStack:
        template = altered_app(tmp_path / name, *edits)
        stack = fresh_stack(
            embedded_aws, _deployed, key=f"wrong-template:{name}", parameters=parameters, template_path=template
        )
        return stack

    return deploy


def _order(order_id: str) -> dict[str, Any]:
    return {"order_id": order_id, "customer_id": "customer-1", "amount": 12.5, "currency": "EUR"}


def _denials(aws: EmbeddedAws) -> list[tuple[str, str, str, str]]:
    return [(d.principal, d.action, d.resource, d.reason) for d in aws.iam.denials.all()]


def _queue_arn(stack: LocalStack, output: str) -> str:
    name = stack.outputs[output].rsplit("/", 1)[-1]
    return f"arn:aws:sqs:us-east-1:123456789012:{name}"


def _messages(stack: LocalStack, queue_url: str) -> list[dict[str, Any]]:
    sqs = stack.client("sqs")
    return sqs.receive_message(
        QueueUrl=queue_url, MaxNumberOfMessages=10, MessageAttributeNames=["All"], VisibilityTimeout=0
    ).get("Messages", [])


def _status(stack: LocalStack, event_id: str) -> str:
    item = stack.client("dynamodb").get_item(TableName=stack.processed_events_table, Key={"event_id": {"S": event_id}})[
        "Item"
    ]
    return str(item["status"]["S"])


def test_a_state_machine_role_without_sns_publish_dead_letters_the_event_with_aws_cause(
    embedded_aws: EmbeddedAws, deploy_altered: Callable[..., LocalStack]
) -> None:
    """Publish notification is refused as SNS refuses it; the Catch sees the error name and cause
    Step Functions gives an optimized integration's service error
    (https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html: `SNS.` and the
    exception's name; https://docs.aws.amazon.com/sns/latest/api/API_Publish.html: AuthorizationError,
    HTTP 403), worded as IAM words an implicit deny
    (https://docs.aws.amazon.com/IAM/latest/UserGuide/troubleshoot_access-denied.html). The workflow's
    Catch sends the event to the dead-letter queue with that reason; the state record stays pending,
    so a redrive resumes at Publish once the role is fixed."""
    stack = deploy_altered("no-sns-publish", (PUBLISH_GRANT, ""))
    pipeline = LocalPipeline(embedded_aws, stack)
    pipeline.send([_order("order-unpublished")])
    pipeline.process(timeout=60)

    ((principal, action, resource, reason),) = _denials(embedded_aws)
    assert principal.startswith("arn:aws:sts::123456789012:assumed-role/onceflow-local-PipelineStateMachineRole-")
    assert (action, resource) == ("sns:Publish", stack.notification_topic_arn)
    assert reason == "because no identity-based policy allows the sns:Publish action"

    sfn = stack.client("stepfunctions")
    (execution,) = sfn.list_executions(stateMachineArn=stack.state_machine_arn)["executions"]
    assert execution["status"] == "FAILED"
    failed = [e["taskFailedEventDetails"] for e in history(sfn, execution["executionArn"]) if e["type"] == "TaskFailed"]
    cause = (
        f"User: {principal} is not authorized to perform: sns:Publish on resource: {stack.notification_topic_arn} "
        "because no identity-based policy allows the sns:Publish action (Service: AmazonSNS; Status Code: 403; "
        "Error Code: AuthorizationError; Request ID: onceflow-iam; Proxy: null)"
    )
    assert failed == [
        {"resourceType": "sns", "resource": "publish", "error": "SNS.AuthorizationErrorException", "cause": cause}
    ]
    described = sfn.describe_execution(executionArn=execution["executionArn"])
    assert described["error"] == "Onceflow.DeadLettered"

    (letter,) = _messages(stack, stack.dead_letter_queue_url)
    attributes = {name: value["StringValue"] for name, value in letter["MessageAttributes"].items()}
    assert json.loads(letter["Body"]) == _order("order-unpublished")
    assert (attributes["error"], attributes["cause"], attributes["event_id"]) == (
        "SNS.AuthorizationErrorException",
        cause,
        "order-unpublished",
    )
    assert _status(stack, "order-unpublished") == "pending"
    assert pipeline.inbox.by_event_id() == {}


def test_a_subscriber_queue_policy_for_another_topic_refuses_sns_and_names_it(
    embedded_aws: EmbeddedAws, deploy_altered: Callable[..., LocalStack]
) -> None:
    """The queue policy's Allow for sns.amazonaws.com holds only when aws:SourceArn is the publishing
    topic (https://docs.aws.amazon.com/sns/latest/dg/subscribe-sqs-queue-to-sns-topic.html, step 2):
    with another topic's ARN nothing admits SNS, on the queue nor on the subscription's dead-letter
    queue (the same policy), so the delivery is a client-side error that SNS neither retries nor can
    park (https://docs.aws.amazon.com/sns/latest/dg/sns-dead-letter-queues.html). The event itself
    is recorded, published and marked sent: the denial is the subscriber's."""
    wrong = (SUBSCRIBER_SOURCE_ARN, SUBSCRIBER_SOURCE_ARN.replace("!Ref NotificationTopic", "!Ref AlarmTopic"))
    stack = deploy_altered("subscriber-policy-other-topic", wrong, parameters=SUBSCRIBER)
    pipeline = LocalPipeline(embedded_aws, stack)
    pipeline.send([_order("order-undelivered")])
    pipeline.process(timeout=60)

    refused = "because no resource-based policy allows the sqs:SendMessage action"
    assert _denials(embedded_aws) == [
        ("sns.amazonaws.com", "sqs:SendMessage", _queue_arn(stack, "SubscriberQueueUrl"), refused),
        ("sns.amazonaws.com", "sqs:SendMessage", _queue_arn(stack, "SubscriberDeadLetterQueueUrl"), refused),
    ]
    assert embedded_aws.iam.denials.all()[0].line == (
        f"AccessDenied: sns.amazonaws.com is not authorized to perform sqs:SendMessage on "
        f"{_queue_arn(stack, 'SubscriberQueueUrl')} ({refused})"
    )
    assert _status(stack, "order-undelivered") == "sent"
    assert pipeline.inbox.by_event_id() == {"order-undelivered": 1}
    assert _messages(stack, stack.outputs["SubscriberQueueUrl"]) == []
    assert _messages(stack, stack.outputs["SubscriberDeadLetterQueueUrl"]) == []


def test_a_subscriber_queue_policy_without_the_source_arn_condition_is_accepted_as_aws_accepts_it(
    embedded_aws: EmbeddedAws, deploy_altered: Callable[..., LocalStack]
) -> None:
    """Without the condition the Allow admits SNS deliveries from any topic: AWS delivers (the condition
    is the confused-deputy guard AWS recommends, not a requirement:
    https://docs.aws.amazon.com/IAM/latest/UserGuide/confused-deputy.html), so nothing is refused
    here either; the static checks are where an over-broad resource policy shows."""
    stack = deploy_altered("subscriber-policy-no-condition", (SUBSCRIBER_SOURCE_ARN, ""), parameters=SUBSCRIBER)
    pipeline = LocalPipeline(embedded_aws, stack)
    pipeline.send([_order("order-delivered")])
    pipeline.process(timeout=60)

    assert _denials(embedded_aws) == []
    tally = stack.client("dynamodb").scan(TableName=stack.outputs["SubscriberTallyTableName"])["Items"]
    assert [(i["tally_key"]["S"], i["event_count"]["N"]) for i in tally] == [("customer-1", "1")]


@pytest.mark.parametrize("sns_admitted", [False, True], ids=["key-policy-without-sns", "key-policy-with-sns"])
def test_a_key_policy_without_the_sns_principal_refuses_the_encrypted_subscriber_queue(
    embedded_aws: EmbeddedAws, deploy_altered: Callable[..., LocalStack], sns_admitted: bool
) -> None:
    """The template has no KMS-encrypted resource a local service principal uses (its key serves
    CloudWatch Logs and alarms, not emulated), so the subscriber queue is given a customer managed key
    here. SNS must be allowed kms:GenerateDataKey and kms:Decrypt on it by the key policy
    (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-key-management.html,
    "Enable compatibility between event sources from AWS services and encrypted queues"); a key
    policy that only delegates to the account's IAM admits no service. Refused, the notification is
    redriven to the subscription's dead-letter queue (SQS-managed encryption: SNS may send there).
    With the statement the SQS guide gives, it is delivered and applied."""
    edits = [
        (
            SUBSCRIBER_QUEUE_ENCRYPTION,
            SUBSCRIBER_QUEUE_ENCRYPTION.replace(
                "SqsManagedSseEnabled: true", "KmsMasterKeyId: !Ref SubscriberQueueKey"
            ),
        ),
        (
            SUBSCRIBER_DEAD_LETTER_QUEUE,
            (KEY_WITHOUT_SNS + (SNS_MAY_USE_THE_KEY if sns_admitted else "")) + "\n" + SUBSCRIBER_DEAD_LETTER_QUEUE,
        ),
        (SUBSCRIBER_ROLE_GRANTS, SUBSCRIBER_DECRYPTS + SUBSCRIBER_ROLE_GRANTS),
    ]
    name = "subscriber-key-with-sns" if sns_admitted else "subscriber-key-without-sns"
    stack = deploy_altered(name, *edits, parameters=SUBSCRIBER)
    pipeline = LocalPipeline(embedded_aws, stack)
    pipeline.send([_order("order-encrypted")])
    pipeline.process(timeout=60)

    tally = stack.client("dynamodb").scan(TableName=stack.outputs["SubscriberTallyTableName"])["Items"]
    if sns_admitted:
        assert _denials(embedded_aws) == []
        assert [(i["tally_key"]["S"], i["event_count"]["N"]) for i in tally] == [("customer-1", "1")]
        return
    key = f"arn:aws:kms:us-east-1:123456789012:key/{_queue_key(stack)}"  # the template's Ref: the key id
    assert _denials(embedded_aws) == [
        (
            "sns.amazonaws.com",
            "kms:GenerateDataKey",
            key,
            "because no resource-based policy allows the kms:GenerateDataKey action",
        )
    ]
    assert tally == []
    (parked,) = _messages(stack, stack.outputs["SubscriberDeadLetterQueueUrl"])
    assert json.loads(parked["Body"])["order_id"] == "order-encrypted"
    assert _status(stack, "order-encrypted") == "sent"


def _queue_key(stack: LocalStack) -> str:
    attributes = stack.client("sqs").get_queue_attributes(
        QueueUrl=stack.outputs["SubscriberQueueUrl"], AttributeNames=["KmsMasterKeyId"]
    )["Attributes"]
    return str(attributes["KmsMasterKeyId"])
