"""The resource policies AWS reads for a request: an SQS queue's `Policy` attribute, an SNS topic's
policy (SNS gives every topic a default one), a KMS key's key policy."""

from __future__ import annotations

from typing import Any

from moto.kms.models import kms_backends
from moto.sns.models import sns_backends
from moto.sqs.models import sqs_backends

from onceflow.engine.iam.policy import Statement, statements


def _queue(arn: str) -> Any:
    _, _, _, region, account, name = arn.split(":", 5)
    return sqs_backends[account][region].queues.get(name)


def policy_of(arn: str) -> tuple[list[Statement], bool]:
    """The resource's policy statements, and whether it is a key policy (KMS's own rules)."""
    parts = arn.split(":", 5)
    if len(parts) != 6:
        return [], False
    _, _, service, region, account, rest = parts
    if service == "sqs":
        queue = _queue(arn)
        return (statements(queue.policy, arn) if queue is not None and queue.policy else []), False
    if service == "sns":
        topic = sns_backends[account][region].topics.get(arn)
        return (statements(topic.policy, arn) if topic is not None else []), False
    if service == "kms" and rest.startswith("key/"):
        key = kms_backends[account][region].keys.get(rest[len("key/") :])
        return (statements(key.policy, arn) if key is not None else []), True
    return [], False


def key_arn(account: str, region: str, key_id: str) -> str:
    """A KMS key id, ARN, alias name or alias ARN, as the key's ARN."""
    backend = kms_backends[account][region]
    try:
        return str(backend.describe_key(key_id).arn)
    except Exception:
        return key_id if key_id.startswith("arn:") else f"arn:aws:kms:{region}:{account}:key/{key_id}"
