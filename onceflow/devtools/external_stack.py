"""Deploy template.yaml onto external endpoints (AWS Step Functions Local, LocalStack, a moto
server): there may be no CloudFormation there, so the translated template's queues, tables,
topics and rules are created through the service APIs.

The intrinsic functions are not resolved here: moto's CloudFormation resolves them (its
`clean_json` and `parse_condition`, the code that runs when `onceflow.local.stack.deploy` creates
the stack on the embedded endpoint), over a map that holds the template's parameters and
conditions and, as each is made, the resources created through the APIs. So one implementation
of the template's meaning serves both paths; tests/endpoints/test_external_stack.py checks that
they make the same resources with the same properties.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from botocore.exceptions import ClientError
from moto.cloudformation.exceptions import ValidationError
from moto.cloudformation.parsing import ResourceMap, clean_json

from onceflow.devtools.endpoints import Endpoints
from onceflow.engine import ACCOUNT_ID, REGION
from onceflow.local.stack import (
    DEFAULT_STACK_NAME,
    LocalStack,
    StackError,
    build_local_stack,
    client,
    definition_substitutions,
    render_definition,
)
from onceflow.local.template import LocalPlan, plan_local_stack

_NOT_FOUND_CODES = {
    "ResourceNotFoundException",
    "NotFound",
    "NotFoundException",
    "QueueDoesNotExist",
    "AWS.SimpleQueueService.NonExistentQueue",
    "StateMachineDoesNotExist",
}
# SQS attributes that change behaviour locally (encryption and policies do not).
_QUEUE_ATTRIBUTES = (
    "DelaySeconds",
    "MaximumMessageSize",
    "MessageRetentionPeriod",
    "ReceiveMessageWaitTimeSeconds",
    "VisibilityTimeout",
    "FifoQueue",
    "ContentBasedDeduplication",
)
_TABLE_SETTINGS = (
    "AttributeDefinitions",
    "KeySchema",
    "GlobalSecondaryIndexes",
    "LocalSecondaryIndexes",
    "ProvisionedThroughput",
    "StreamSpecification",
)


class _Unresolved(Exception):
    """A reference to a resource that is not (yet) created on the external endpoints."""


@dataclass
class _Made:
    """A resource made through the APIs, as moto's resolver reads one: Ref and Fn::GetAtt."""

    logical_id: str
    physical_resource_id: str
    attributes: dict[str, str] = field(default_factory=dict)

    def get_cfn_attribute(self, name: str) -> str:
        if name not in self.attributes:
            raise _Unresolved(f"{self.logical_id}.{name}")
        return self.attributes[name]


class _Intrinsics:
    """moto's CloudFormation resolution over the parameters, conditions and the resources made so far.

    moto's ResourceMap creates a resource in its own in-process backends when a reference names one
    it has not made; this map is given no resources to make (they are on the external endpoints),
    so such a reference raises, and is reported as _Unresolved (the referring resource waits).
    """

    def __init__(
        self, template: dict[str, Any], parameters: dict[str, str], stack_name: str, region: str, account_id: str
    ):
        self.template = template
        self.parameters = parameters
        self.stack_name = stack_name
        self.map = self._resource_map(region, account_id)

    def _resource_map(self, region: str, account_id: str) -> ResourceMap:
        without_resources = {key: value for key, value in self.template.items() if key != "Resources"}
        resource_map = ResourceMap(
            stack_id=f"arn:aws:cloudformation:{region}:{account_id}:stack/{self.stack_name}/local",
            stack_name=self.stack_name,
            parameters=self.parameters,
            tags={},
            region_name=region,
            account_id=account_id,
            template={**without_resources, "Resources": {}},
            cross_stack_resources={},
        )
        resource_map.load_parameters()
        resource_map.load_conditions()
        return resource_map

    def retarget(self, template: dict[str, Any], region: str, account_id: str) -> None:
        """Resolve for another account and region from now on, keeping what was made."""
        made = {key: value for key, value in self.map._parsed_resources.items() if isinstance(value, _Made)}
        self.template = template
        self.map = self._resource_map(region, account_id)
        self.map._parsed_resources.update(made)

    def made(self, logical_id: str, physical_id: str, **attributes: str) -> None:
        self.map._parsed_resources[logical_id] = _Made(logical_id, physical_id, dict(attributes))

    def physical_ids(self) -> dict[str, str]:
        return {
            logical_id: made.physical_resource_id
            for logical_id, made in self.map._parsed_resources.items()
            if isinstance(made, _Made)
        }

    def condition(self, name: str) -> bool:
        return bool(self.map.lazy_condition_map[name])

    def resolve(self, node: Any) -> Any:
        try:
            return clean_json(node, self.map)
        except KeyError as missing:
            raise _Unresolved(str(missing.args[0])) from None
        except ValidationError as error:  # Fn::GetAtt of a resource that is not made (yet)
            raise _Unresolved(str(error)) from None


@dataclass(frozen=True)
class ExternalDeployment:
    """A stack made through the service APIs; `delete()` removes what was made (there is no stack to delete)."""

    stack: LocalStack
    # (boto3 client name, kind, identifier), in creation order
    resources: tuple[tuple[str, str, str], ...]
    # logical id -> physical id (what Ref gives) of each resource made, as a stack's resource list has it
    physical_ids: dict[str, str] = field(default_factory=dict)

    def delete(self) -> None:
        _delete_resources(self.stack.service_endpoints, self.resources)


def _delete_resources(endpoints: dict[str, str], resources: tuple[tuple[str, str, str], ...]) -> None:
    """Delete in reverse creation order; what is already gone is fine, any other failure is reported."""
    problems: list[str] = []
    for service, kind, identifier in reversed(resources):
        try:
            _delete_one(client(endpoints[service], service), kind, identifier)
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") not in _NOT_FOUND_CODES:
                problems.append(f"{kind} {identifier}: {error}")
    if problems:
        raise StackError("could not delete: " + "; ".join(problems))


def _delete_one(service_client: Any, kind: str, identifier: str) -> None:
    if kind == "rule":
        targets = service_client.list_targets_by_rule(Rule=identifier)["Targets"]
        if targets:
            service_client.remove_targets(Rule=identifier, Ids=[t["Id"] for t in targets])
        service_client.delete_rule(Name=identifier)
    elif kind == "state_machine":
        service_client.delete_state_machine(stateMachineArn=identifier)
    elif kind == "topic":
        service_client.delete_topic(TopicArn=identifier)
    elif kind == "queue":
        service_client.delete_queue(QueueUrl=identifier)
    elif kind == "table":
        service_client.delete_table(TableName=identifier)


class _Maker(NamedTuple):
    create: Callable[[_ExternalDeployer, str, dict[str, Any]], None]
    reads: tuple[str, ...]  # the properties `create` uses


class _ExternalDeployer:
    """Creates the template's data resources on external endpoints, in dependency order."""

    def __init__(self, endpoints: Endpoints, plan: LocalPlan, parameters: dict[str, Any]):
        self.endpoints = endpoints
        self.plan = plan
        self.clients = {service: client(url, service) for service, url in endpoints.urls.items()}
        self.intrinsics = _Intrinsics(plan.cloudformation, parameters, plan.stack_name, REGION, ACCOUNT_ID)
        self.created: list[tuple[str, str, str]] = []

    def name(self, logical_id: str, limit: int, properties: dict[str, Any], key: str) -> str:
        """The template's name for it, or one made as CloudFormation makes them (without the suffix)."""
        return str(properties.get(key) or f"{self.plan.stack_name}-{logical_id}"[:limit])

    def register_roles(self) -> None:
        """IAM is not emulated: roles are names, so that the state machine gets a role ARN."""
        for logical_id, resource in self.plan.cloudformation["Resources"].items():
            if resource["Type"] == "AWS::IAM::Role":
                name = f"{self.plan.stack_name}-{logical_id}"[:64]
                self.intrinsics.made(logical_id, name, Arn=f"arn:aws:iam::{ACCOUNT_ID}:role/{name}")

    def create_all(self, types: dict[str, _Maker]) -> None:
        """Create every resource of these types; a resource waits for the resources it references.

        Only the properties the maker reads are resolved: the others may name resources (keys,
        log groups) that are not made locally.
        """
        resources = self.plan.cloudformation["Resources"]
        pending = [
            logical_id
            for logical_id, resource in resources.items()
            if resource["Type"] in types
            and ("Condition" not in resource or self.intrinsics.condition(resource["Condition"]))
        ]
        while pending:
            waiting: list[str] = []
            for logical_id in pending:
                resource = resources[logical_id]
                maker = types[resource["Type"]]
                given = resource.get("Properties", {})
                try:
                    properties = self.intrinsics.resolve({key: given[key] for key in maker.reads if key in given})
                except _Unresolved as missing:
                    if not any(waiting_for in str(missing) for waiting_for in pending):
                        raise StackError(f"{logical_id} refers to {missing}, which is not made locally") from None
                    waiting.append(logical_id)
                    continue
                maker.create(self, logical_id, properties)
            if waiting == pending:
                raise StackError(f"circular references between {waiting}")
            pending = waiting

    def table(self, logical_id: str, properties: dict[str, Any]) -> None:
        dynamodb = self.clients["dynamodb"]
        name = self.name(logical_id, 255, properties, "TableName")
        settings = {key: properties[key] for key in _TABLE_SETTINGS if key in properties}
        dynamodb.create_table(TableName=name, BillingMode=properties.get("BillingMode", "PROVISIONED"), **settings)
        self.created.append(("dynamodb", "table", name))
        described = _wait_for_table(dynamodb, name)
        ttl = properties.get("TimeToLiveSpecification")
        if ttl and ttl.get("Enabled"):
            dynamodb.update_time_to_live(
                TableName=name, TimeToLiveSpecification={"AttributeName": ttl["AttributeName"], "Enabled": True}
            )
        self.intrinsics.made(
            logical_id, name, Arn=described["TableArn"], StreamArn=described.get("LatestStreamArn", "")
        )

    def queue(self, logical_id: str, properties: dict[str, Any]) -> None:
        sqs = self.clients["sqs"]
        fifo = str(properties.get("FifoQueue", "")).lower() == "true"
        name = self.name(logical_id, 75 if fifo else 80, properties, "QueueName") + (".fifo" if fifo else "")
        attributes = {key: _attribute(properties[key]) for key in _QUEUE_ATTRIBUTES if key in properties}
        if "RedrivePolicy" in properties:
            policy = dict(properties["RedrivePolicy"])
            policy["maxReceiveCount"] = int(policy["maxReceiveCount"])
            attributes["RedrivePolicy"] = json.dumps(policy)
        url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
        self.created.append(("sqs", "queue", url))
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        self.intrinsics.made(logical_id, url, Arn=arn, QueueName=name, QueueUrl=url)

    def topic(self, logical_id: str, properties: dict[str, Any]) -> None:
        name = self.name(logical_id, 256, properties, "TopicName")
        attributes = {
            key: _attribute(properties[key]) for key in ("FifoTopic", "ContentBasedDeduplication") if key in properties
        }
        arn = self.clients["sns"].create_topic(Name=name, Attributes=attributes)["TopicArn"]
        self.created.append(("sns", "topic", arn))
        self.intrinsics.made(logical_id, arn, TopicArn=arn, TopicName=name)

    def rule(self, logical_id: str, properties: dict[str, Any]) -> None:
        events = self.clients["events"]
        name = self.name(logical_id, 64, properties, "Name")
        # A rule matches events (EventPattern) or runs on a schedule (ScheduleExpression), or both.
        trigger = {"EventPattern": json.dumps(properties["EventPattern"])} if "EventPattern" in properties else {}
        if "ScheduleExpression" in properties:
            trigger["ScheduleExpression"] = properties["ScheduleExpression"]
        arn = events.put_rule(
            Name=name,
            State=properties.get("State", "ENABLED"),
            Description=properties.get("Description", ""),
            **trigger,
        )["RuleArn"]
        self.created.append(("events", "rule", name))
        targets = [
            {key: value for key, value in target.items() if key in ("Id", "Arn", "Input", "InputPath", "RetryPolicy")}
            for target in properties.get("Targets", [])
        ]
        if targets:
            events.put_targets(Rule=name, Targets=targets)
        self.intrinsics.made(logical_id, name, Arn=arn)

    def outputs(self) -> dict[str, str]:
        """The outputs whose values exist locally (the others name resources that are not made)."""
        resolved: dict[str, str] = {}
        for key, output in self.plan.cloudformation.get("Outputs", {}).items():
            if "Condition" in output and not self.intrinsics.condition(output["Condition"]):
                continue
            try:
                value = self.intrinsics.resolve(output["Value"])
            except _Unresolved:
                continue
            if value is not None:  # AWS::NoValue
                resolved[key] = str(value)
        return resolved


def _attribute(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _wait_for_table(dynamodb: Any, name: str, timeout: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        described = dynamodb.describe_table(TableName=name)["Table"]
        if described["TableStatus"] == "ACTIVE":
            return described
        if time.monotonic() > deadline:
            raise StackError(f"table {name} still {described['TableStatus']} after {timeout}s")
        time.sleep(0.05)


_DATA_RESOURCES = {
    "AWS::DynamoDB::Table": _Maker(
        _ExternalDeployer.table, (*_TABLE_SETTINGS, "TableName", "BillingMode", "TimeToLiveSpecification")
    ),
    "AWS::SQS::Queue": _Maker(_ExternalDeployer.queue, (*_QUEUE_ATTRIBUTES, "QueueName", "RedrivePolicy")),
    "AWS::SNS::Topic": _Maker(_ExternalDeployer.topic, ("TopicName", "FifoTopic", "ContentBasedDeduplication")),
}
_RULES = {
    "AWS::Events::Rule": _Maker(
        _ExternalDeployer.rule, ("Name", "EventPattern", "ScheduleExpression", "State", "Description", "Targets")
    )
}


def _template_parameters(overrides: dict[str, Any] | None) -> dict[str, str]:
    """Parameter values as CloudFormation receives them (strings); defaults and types are moto's to apply."""
    return {name: str(value) for name, value in (overrides or {}).items()}


def deploy_external(
    endpoints: Endpoints,
    stack_name: str = DEFAULT_STACK_NAME,
    parameter_overrides: dict[str, Any] | None = None,
) -> ExternalDeployment:
    """Create the stack from template.yaml on external endpoints, through the service APIs.

    Made from the same translation as `deploy`: queues (with their redrive policy), tables (with
    TTL), topics, and, where an EventBridge endpoint is configured, rules. Encryption, IAM,
    logs, alarms and dashboards are left out: they change nothing in a local run. The state
    machine is created from the ASL file with its DefinitionSubstitutions resolved.
    """
    plan = plan_local_stack(stack_name, REGION, ACCOUNT_ID, parameter_overrides)
    deployer = _ExternalDeployer(endpoints, plan, _template_parameters(parameter_overrides))
    try:
        deployer.register_roles()
        deployer.create_all(_DATA_RESOURCES)
        outputs = deployer.outputs()
        substitutions = definition_substitutions(plan, outputs)
        state_machine_arn = deployer.clients["stepfunctions"].create_state_machine(
            name=plan.state_machine_name,
            definition=render_definition(plan.state_machine.definition_path, substitutions),
            roleArn=outputs["LocalStateMachineRoleArn"],
            type=outputs.get("LocalStateMachineType", "STANDARD"),
        )["stateMachineArn"]
        deployer.created.append(("stepfunctions", "state_machine", state_machine_arn))
        region, account_id = state_machine_arn.split(":")[3:5]
        if (region, account_id) != (REGION, ACCOUNT_ID):
            # The endpoint's own account (LocalStack: 000000000000): ARNs in the plan must name it.
            plan = plan_local_stack(stack_name, region, account_id, parameter_overrides)
            deployer.plan = plan
            deployer.intrinsics.retarget(plan.cloudformation, region, account_id)
        if endpoints.has("events"):
            deployer.create_all(_RULES)
        outputs = deployer.outputs()
    except BaseException as error:
        try:
            _delete_resources(dict(endpoints.urls), tuple(deployer.created))
        except Exception as cleanup:
            error.add_note(f"and cleaning up what was made failed: {cleanup}")
        raise
    stack = build_local_stack(
        endpoints.primary,
        plan,
        outputs,
        service_endpoints=dict(endpoints.urls),
        state_machine_arn=state_machine_arn,
        parameters={key: str(value) for key, value in (parameter_overrides or {}).items()},
    )
    return ExternalDeployment(stack, tuple(deployer.created), deployer.intrinsics.physical_ids())
