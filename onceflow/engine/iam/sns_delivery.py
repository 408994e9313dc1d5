"""SNS delivers to an SQS subscription as the service principal `sns.amazonaws.com`, admitted only
by the queue's policy, with `aws:SourceArn` the topic's ARN and `aws:SourceAccount` its account
(https://docs.aws.amazon.com/sns/latest/dg/subscribe-sqs-queue-to-sns-topic.html: "the Amazon SQS
queue must have a policy that allows the Amazon SNS topic to send messages").

A delivery the queue's policy refuses is a client-side error: SNS does not retry it; a
subscription with a redrive policy sends it to its dead-letter queue instead (as SNS, checked
against that queue's policy), else it is lost
(https://docs.aws.amazon.com/sns/latest/dg/sns-dead-letter-queues.html). Either way the denial is
recorded (decide.record). moto delivered whatever the queue's policy said.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from moto.sns.models import Subscription
from moto.sqs.models import sqs_backends

from onceflow.engine.iam import resource_policies
from onceflow.engine.iam.actions import Asked
from onceflow.engine.iam.decide import IamSwitch, decide, record
from onceflow.engine.iam.policy import Principal
from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import Patch, current

SNS_PRINCIPAL = "sns.amazonaws.com"


def moto_needs() -> list[Need]:
    return [need(Subscription, "publish", "message", "message_id"), need(Subscription, "__init__", "endpoint")]


def admitted(switch: IamSwitch, subscription: Any, queue_arn: str) -> bool:
    """Whether the queue's policy lets the subscription's topic send to it, and, for a queue encrypted
    with a KMS key, whether the key policy lets SNS use the key (kms:GenerateDataKey and kms:Decrypt:
    https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-key-management.html
    "Enable compatibility between event sources from AWS services and encrypted queues");
    a refusal is recorded."""
    account, region = subscription.account_id, queue_arn.split(":")[3]
    principal = Principal(arn=SNS_PRINCIPAL, account=account, service=SNS_PRINCIPAL)
    context = {"aws:SourceArn": subscription.topic.arn, "aws:SourceAccount": account}
    wanted = [Asked("sqs:SendMessage", queue_arn)]
    queue = sqs_backends[account][region].queues.get(queue_arn.rsplit(":", 1)[-1])
    key = getattr(queue, "kms_master_key_id", None)
    if key and not str(key).startswith("alias/aws/"):
        arn = resource_policies.key_arn(account, region, str(key))
        wanted += [Asked("kms:GenerateDataKey", arn), Asked("kms:Decrypt", arn)]
    for asked in wanted:
        decision = decide(principal, asked, context)
        if not decision.allowed:
            record(switch, principal, asked, decision, region)
            return False
        switch.note_use(principal, asked, decision)
    return True


def dead_letter_arn(subscription: Any) -> str | None:
    policy = subscription.attributes.get("RedrivePolicy")
    if not policy:
        return None
    parsed = json.loads(policy) if isinstance(policy, str) else policy
    return parsed.get("deadLetterTargetArn")


def patches(before: list[Patch], iam: IamSwitch) -> list[Patch]:
    moto_publish = current(before, Subscription, "publish")

    def publish(self: Any, message: str, message_id: str, *args: Any, **kwargs: Any) -> None:
        if not iam.on or self.protocol != "sqs" or admitted(iam, self, self.endpoint):
            return moto_publish(self, message, message_id, *args, **kwargs)
        target = dead_letter_arn(self)
        if target is None or not admitted(iam, self, target):
            return None
        redriven = copy.copy(self)
        redriven.endpoint = target
        return moto_publish(redriven, message, message_id, *args, **kwargs)

    return [(Subscription, "publish", publish)]
