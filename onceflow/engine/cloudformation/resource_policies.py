"""AWS::SQS::QueuePolicy and AWS::SNS::TopicPolicy, which moto 5.2.5's CloudFormation skips ("No
Moto CloudFormation support"): their PolicyDocument is set on each queue (`Policy` attribute) and
topic, as AWS does, so the IAM enforcement (engine/iam/) reads the policies the template writes.
https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-resource-sqs-queuepolicy.html
https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-resource-sns-topicpolicy.html
"""

from __future__ import annotations

import json
from typing import Any

from moto.cloudformation import parsing
from moto.sns.models import sns_backends
from moto.sqs.models import sqs_backends

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import Patch, current


def moto_needs() -> list[Need]:
    return [need(parsing, "resource_class_from_type", "resource_type")]


def _document(properties: dict[str, Any]) -> str:
    document = properties.get("PolicyDocument", {})
    return document if isinstance(document, str) else json.dumps(document)


class _ResourcePolicy:
    """What CloudFormation keeps of a policy resource: the targets it set and its id."""

    def __init__(self, physical_resource_id: str, targets: list[str]):
        self.physical_resource_id = physical_resource_id
        self.targets = targets

    @classmethod
    def has_cfn_attr(cls, attr: str) -> bool:
        return attr == "Id"

    def is_created(self) -> bool:
        return True


class QueuePolicy(_ResourcePolicy):
    @classmethod
    def create_from_cloudformation_json(
        cls, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str, **_: Any
    ) -> QueuePolicy:
        properties = cloudformation_json.get("Properties", {})
        backend = sqs_backends[account_id][region_name]
        urls = [str(url) for url in properties.get("Queues", [])]
        for url in urls:
            backend.set_queue_attributes(url.rstrip("/").rsplit("/", 1)[-1], {"Policy": _document(properties)})
        return cls(resource_name, urls)

    @classmethod
    def delete_from_cloudformation_json(
        cls, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str
    ) -> None:
        backend = sqs_backends[account_id][region_name]
        for url in cloudformation_json.get("Properties", {}).get("Queues", []):
            name = str(url).rstrip("/").rsplit("/", 1)[-1]
            if name in backend.queues:
                backend.set_queue_attributes(name, {"Policy": ""})


class TopicPolicy(_ResourcePolicy):
    @classmethod
    def create_from_cloudformation_json(
        cls, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str, **_: Any
    ) -> TopicPolicy:
        properties = cloudformation_json.get("Properties", {})
        backend = sns_backends[account_id][region_name]
        arns = [str(arn) for arn in properties.get("Topics", [])]
        for arn in arns:
            backend.set_topic_attribute(arn, "Policy", _document(properties))
        return cls(resource_name, arns)

    @classmethod
    def delete_from_cloudformation_json(cls, *args: Any, **kwargs: Any) -> None:
        pass  # SNS gives the topic back its default policy on AWS; the topic is usually deleted with it


MODELS: dict[str, Any] = {"AWS::SQS::QueuePolicy": QueuePolicy, "AWS::SNS::TopicPolicy": TopicPolicy}


def patches(before: list[Patch]) -> list[Patch]:
    moto_lookup = current(before, parsing, "resource_class_from_type")

    def resource_class_from_type(resource_type: str) -> Any:
        return MODELS.get(resource_type) or moto_lookup(resource_type)

    return [(parsing, "resource_class_from_type", resource_class_from_type)]
