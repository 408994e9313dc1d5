"""The stack made through the service APIs (no CloudFormation) is the template's stack.

These run on whichever endpoint the session uses: the embedded one by default (it has the APIs
too), the external ones when configured.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from onceflow.devtools.endpoints import Endpoints, from_environment
from onceflow.devtools.external_stack import ExternalDeployment, _Intrinsics, _Unresolved, deploy_external
from onceflow.engine import ACCOUNT_ID, REGION
from onceflow.local.stack import LocalStack, deploy, render_definition
from onceflow.local.template import plan_local_stack

Deploy = Callable[..., ExternalDeployment]


@pytest.fixture
def api_endpoints(request: pytest.FixtureRequest, endpoints: Endpoints | None) -> Endpoints:
    if endpoints is not None:
        return endpoints
    embedded = request.getfixturevalue("embedded_aws")  # looked up here: these tests run on any endpoint
    resolved = from_environment({"AWS_ENDPOINT_URL": embedded.endpoint_url})
    assert resolved is not None
    return resolved


@pytest.fixture
def deploy_by_api(api_endpoints: Endpoints) -> Iterator[Deploy]:
    made: list[ExternalDeployment] = []

    def deploy(**parameters: Any) -> ExternalDeployment:
        deployment = deploy_external(api_endpoints, f"onceflow-{uuid.uuid4().hex[:10]}", parameters or None)
        made.append(deployment)
        return deployment

    yield deploy
    for deployment in made:
        deployment.delete()


def _template(stack_name: str) -> dict[str, Any]:
    return plan_local_stack(stack_name, "us-east-1", "123456789012").cloudformation


def test_queues_tables_and_topic_follow_the_translated_template(deploy_by_api):
    stack = deploy_by_api().stack
    template = _template(stack.stack_name)
    resources = template["Resources"]
    max_receive_count = int(template["Parameters"]["MaxReceiveCount"]["Default"])
    sqs, dynamodb = stack.client("sqs"), stack.client("dynamodb")

    source = sqs.get_queue_attributes(QueueUrl=stack.source_queue_url, AttributeNames=["All"])["Attributes"]
    dead_letter_arn = sqs.get_queue_attributes(QueueUrl=stack.dead_letter_queue_url, AttributeNames=["QueueArn"])[
        "Attributes"
    ]["QueueArn"]
    declared = resources["SourceQueue"]["Properties"]
    visibility = declared["VisibilityTimeout"]
    if isinstance(
        visibility, dict
    ):  # {"Fn::If": ["StarterWaits", <EXPRESS or FIFO>, <STANDARD>]}; deployed as STANDARD
        condition, _, standard = visibility["Fn::If"]
        assert condition == "StarterWaits"
        visibility = standard
    assert int(source["VisibilityTimeout"]) == visibility == stack.event_source.visibility_timeout
    assert json.loads(source["RedrivePolicy"]) == {
        "deadLetterTargetArn": dead_letter_arn,
        "maxReceiveCount": max_receive_count,
    }
    for table in (stack.processed_events_table, stack.business_table):
        logical_id = table.removeprefix(f"{stack.stack_name}-")
        described = dynamodb.describe_table(TableName=table)["Table"]
        assert described["KeySchema"] == resources[logical_id]["Properties"]["KeySchema"]
    ttl = dynamodb.describe_time_to_live(TableName=stack.processed_events_table)["TimeToLiveDescription"]
    assert (ttl["TimeToLiveStatus"], ttl["AttributeName"]) == ("ENABLED", "ttl")
    topics = [t["TopicArn"] for t in stack.client("sns").list_topics()["Topics"]]
    assert stack.notification_topic_arn in topics


def test_parameters_reach_the_queue_and_the_starter(deploy_by_api):
    stack = deploy_by_api(MaxReceiveCount=3, EventFormat="sns", BatchSize=4).stack
    assert stack.event_source.max_receive_count == 3
    assert stack.event_source.batch_size == 4
    assert stack.starter_environment["EVENT_FORMAT"] == "sns"
    assert stack.starter_environment["STATE_MACHINE_ARN"] == stack.state_machine_arn
    assert "EVENT_ID_PATH" not in stack.starter_environment, "Fn::If chose AWS::NoValue"

    with_path = deploy_by_api(EventIdPath="detail.id").stack
    assert with_path.starter_environment["EVENT_ID_PATH"] == "detail.id"


def test_state_machine_is_the_asl_with_its_substitutions(deploy_by_api):
    stack = deploy_by_api().stack
    sfn = stack.client("stepfunctions")
    definition = sfn.describe_state_machine(stateMachineArn=stack.state_machine_arn)["definition"]
    assert definition == render_definition(stack.definition_path, stack.substitutions)
    assert "${" not in definition
    assert stack.substitutions["ProcessedEventsTable"] == stack.processed_events_table
    assert stack.substitutions["DeadLetterQueueUrl"] == stack.dead_letter_queue_url


def test_the_safety_net_rule_watches_this_state_machine(deploy_by_api, api_endpoints):
    if not api_endpoints.has("events"):
        pytest.skip("no events endpoint configured")
    deployment = deploy_by_api()
    stack = deployment.stack
    events = stack.client("events")
    rule = events.describe_rule(Name=stack.outputs["SafetyNetRuleName"])
    [target] = events.list_targets_by_rule(Rule=rule["Name"])["Targets"]
    assert json.loads(rule["EventPattern"])["detail"]["stateMachineArn"] == [stack.state_machine_arn]
    # The target the template names: an emulated function's ARN (a literal in the plan) or a queue made here.
    region, account_id = stack.state_machine_arn.split(":")[3:5]
    template = plan_local_stack(stack.stack_name, region, account_id).cloudformation
    declared = template["Resources"]["SafetyNetRule"]["Properties"]["Targets"][0]["Arn"]
    if isinstance(declared, dict):
        [logical_id, _] = declared["Fn::GetAtt"]
        queue_url = deployment.physical_ids[logical_id]
        declared = stack.client("sqs").get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])[
            "Attributes"
        ]["QueueArn"]
    assert target["Arn"] == declared


def test_clients_go_to_each_services_own_endpoint(deploy_by_api):
    stack = deploy_by_api().stack
    elsewhere = dataclasses.replace(stack, service_endpoints={**stack.service_endpoints, "sqs": "http://sqs.invalid:9"})
    assert elsewhere.client("sqs").meta.endpoint_url == "http://sqs.invalid:9"
    assert elsewhere.client("dynamodb").meta.endpoint_url == stack.service_endpoints["dynamodb"]
    assert dataclasses.replace(stack, service_endpoints={}).client("sqs").meta.endpoint_url == stack.endpoint_url


def test_delete_removes_everything_it_made(deploy_by_api):
    deployment = deploy_by_api()
    stack = deployment.stack
    deployment.delete()

    prefix = f"{stack.stack_name}-"
    assert stack.client("sqs").list_queues(QueueNamePrefix=prefix).get("QueueUrls", []) == []
    assert [t for t in stack.client("dynamodb").list_tables()["TableNames"] if t.startswith(prefix)] == []
    assert [t for t in stack.client("sns").list_topics()["Topics"] if prefix in t["TopicArn"]] == []
    machines = stack.client("stepfunctions").list_state_machines()["stateMachines"]
    assert [m for m in machines if m["name"].startswith(prefix)] == []
    deployment.delete()  # twice: what is gone already is fine


def test_intrinsic_functions_resolve_as_cloudformation_does():
    """moto's resolver, over the parameters, conditions and what was made: Ref, Fn::GetAtt, Fn::Sub
    (with variables and ${!Literal}), Fn::Join, Fn::Select, Fn::If and AWS::NoValue in a property:
    https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/intrinsic-function-reference.html"""
    template = {
        "Parameters": {"Path": {"Type": "String", "Default": ""}, "Count": {"Type": "Number", "Default": 5}},
        "Conditions": {
            "HasPath": {"Fn::Not": [{"Fn::Equals": [{"Ref": "Path"}, ""]}]},
            "Both": {"Fn::And": [{"Condition": "HasPath"}, {"Fn::Equals": ["a", "a"]}]},
        },
        "Resources": {"Queue": {"Type": "AWS::SQS::Queue"}, "Later": {"Type": "AWS::SQS::Queue"}},
    }
    intrinsics = _Intrinsics(template, {"Count": "3"}, "s", "eu-west-1", "123456789012")
    intrinsics.made("Queue", "https://queue", Arn="arn:queue")
    node = {
        "Name": {"Fn::Sub": ["${AWS::StackName}-${Queue.Arn}-${!Literal}-${Extra}", {"Extra": "x"}]},
        "Extra": {"Fn::Sub": ["${Extra}", {"Extra": {"Ref": "Queue"}}]},
        "Joined": {"Fn::Join": ["/", ["a", {"Ref": "AWS::Region"}, {"Fn::Select": [1, ["x", "y"]]}]]},
        "Dropped": {"Fn::If": ["HasPath", {"Ref": "Path"}, {"Ref": "AWS::NoValue"}]},
        "Both": {"Fn::If": ["Both", "yes", "no"]},
        "Count": {"Ref": "Count"},
    }

    assert intrinsics.resolve(node) == {
        "Name": "s-arn:queue-${Literal}-x",
        "Extra": "https://queue",
        "Joined": "a/eu-west-1/y",
        "Both": "no",
        "Count": 3,
    }
    with pytest.raises(_Unresolved):
        intrinsics.resolve({"Ref": "Later"})
    with pytest.raises(_Unresolved):
        intrinsics.resolve({"Fn::GetAtt": ["Later", "Arn"]})


_COMPARED_TYPES = ("AWS::SQS::Queue", "AWS::DynamoDB::Table", "AWS::SNS::Topic", "AWS::Events::Rule")
_QUEUE_ATTRIBUTES = (
    "VisibilityTimeout",
    "MessageRetentionPeriod",
    "DelaySeconds",
    "MaximumMessageSize",
    "ReceiveMessageWaitTimeSeconds",
    "FifoQueue",
    "ContentBasedDeduplication",
    "RedrivePolicy",
)


def _described(stack: LocalStack, logical_id: str, kind: str, physical: str) -> Any:
    """What the service APIs say about one resource, in the parts that shape a local run."""
    if kind == "AWS::SQS::Queue":
        attributes = stack.client("sqs").get_queue_attributes(QueueUrl=physical, AttributeNames=["All"])["Attributes"]
        found = {key: attributes[key] for key in _QUEUE_ATTRIBUTES if key in attributes}
        if "RedrivePolicy" in found:
            found["RedrivePolicy"] = json.loads(found["RedrivePolicy"])
        return found
    if kind == "AWS::DynamoDB::Table":
        dynamodb = stack.client("dynamodb")
        table = dynamodb.describe_table(TableName=physical)["Table"]
        ttl = dynamodb.describe_time_to_live(TableName=physical)["TimeToLiveDescription"]
        indexes = [
            {key: index[key] for key in ("IndexName", "KeySchema", "Projection")}
            for index in table.get("GlobalSecondaryIndexes", [])
        ]
        return {
            "KeySchema": table["KeySchema"],
            "AttributeDefinitions": sorted(table["AttributeDefinitions"], key=lambda a: a["AttributeName"]),
            "GlobalSecondaryIndexes": sorted(indexes, key=lambda i: i["IndexName"]),
            "BillingMode": table.get("BillingModeSummary", {}).get("BillingMode"),
            "TimeToLive": (ttl.get("TimeToLiveStatus"), ttl.get("AttributeName")),
        }
    if kind == "AWS::SNS::Topic":
        attributes = stack.client("sns").get_topic_attributes(TopicArn=physical)["Attributes"]
        return {key: attributes.get(key) for key in ("FifoTopic", "ContentBasedDeduplication")}
    events = stack.client("events")
    rule = events.describe_rule(Name=physical)
    targets = events.list_targets_by_rule(Rule=physical)["Targets"]
    return {
        "EventPattern": json.loads(rule.get("EventPattern") or "null"),
        "ScheduleExpression": rule.get("ScheduleExpression"),
        "State": rule["State"],
        "Targets": sorted(({"Id": t["Id"], "Arn": t["Arn"]} for t in targets), key=lambda t: t["Id"]),
    }


def _named_by_logical_id(value: Any, names: dict[str, str]) -> Any:
    """Replace every physical name, URL and ARN of the stack by `<LogicalId>` (the two paths name things differently)."""
    text = json.dumps(value, sort_keys=True, default=str)
    for physical, logical_id in sorted(names.items(), key=lambda item: -len(item[0])):
        text = text.replace(physical, f"<{logical_id}>")
    return json.loads(text)


def _physical_names(stack: LocalStack, resources: dict[str, str], types: dict[str, str]) -> dict[str, str]:
    """Every name a resource is known by (URL, name, ARN) -> its logical id."""
    # The stack name last (longest names are replaced first): emulated resources are named after it.
    names: dict[str, str] = {stack.state_machine_arn: "StateMachine", stack.stack_name: "StackName"}
    for logical_id, physical in resources.items():
        names[physical] = logical_id
        if types.get(logical_id) == "AWS::SQS::Queue":
            arn = stack.client("sqs").get_queue_attributes(QueueUrl=physical, AttributeNames=["QueueArn"])
            names[arn["Attributes"]["QueueArn"]] = logical_id
        if types.get(logical_id) == "AWS::DynamoDB::Table":
            names[stack.client("dynamodb").describe_table(TableName=physical)["Table"]["TableArn"]] = logical_id
    return names


def test_moto_cloudformation_and_the_service_apis_make_the_same_resources(embedded_aws):
    """The two ways the suite makes the template's stack agree, resource by resource: moto's
    CloudFormation (the embedded endpoint) and the service APIs (external endpoints), for every
    queue, table, topic and rule of template.yaml, and for what the local run reads from them."""
    embedded_aws.reset()
    by_cloudformation = deploy(embedded_aws.endpoint_url, stack_name="onceflow-by-cfn")
    api_endpoints = from_environment({"AWS_ENDPOINT_URL": embedded_aws.endpoint_url})
    assert api_endpoints is not None
    by_api = deploy_external(api_endpoints, stack_name="onceflow-by-api")
    try:
        template = _template("onceflow-by-cfn")
        conditions = _Intrinsics(template, {}, "onceflow-by-cfn", REGION, ACCOUNT_ID)
        types = {
            logical_id: resource["Type"]
            for logical_id, resource in template["Resources"].items()
            if resource["Type"] in _COMPARED_TYPES
            and ("Condition" not in resource or conditions.condition(resource["Condition"]))
        }
        left_out = {i for i, r in template["Resources"].items() if r["Type"] in _COMPARED_TYPES} - set(types)
        assert left_out, "the defaults leave the optional subscriber out: its queues and tables are made by neither"
        summaries = by_cloudformation.client("cloudformation").list_stack_resources(StackName="onceflow-by-cfn")
        cfn_resources = {
            s["LogicalResourceId"]: s["PhysicalResourceId"]
            for s in summaries["StackResourceSummaries"]
            if s["LogicalResourceId"] in types
        }
        api_resources = {
            logical_id: physical for logical_id, physical in by_api.physical_ids.items() if logical_id in types
        }
        assert set(api_resources) == set(cfn_resources) == set(types)

        cfn_names = _physical_names(by_cloudformation, cfn_resources, types)
        api_names = _physical_names(by_api.stack, api_resources, types)
        for logical_id, kind in types.items():
            made_by_cfn = _described(by_cloudformation, logical_id, kind, cfn_resources[logical_id])
            made_by_api = _described(by_api.stack, logical_id, kind, api_resources[logical_id])
            assert _named_by_logical_id(made_by_api, api_names) == _named_by_logical_id(made_by_cfn, cfn_names), (
                logical_id
            )

        for field_name in ("starter_environment", "substitutions", "event_source", "starter_timeout"):
            from_api = _named_by_logical_id(dataclasses.asdict(by_api.stack).get(field_name), api_names)
            from_cfn = _named_by_logical_id(dataclasses.asdict(by_cloudformation).get(field_name), cfn_names)
            assert from_api == from_cfn, field_name
        # Outputs of what the APIs path leaves out (log groups, key, dashboard) are missing there, by design.
        shared = set(by_api.stack.outputs) & set(by_cloudformation.outputs)
        assert {"SourceQueueUrl", "DeadLetterQueueUrl", "NotificationTopicArn", "SafetyNetRuleName"} <= shared
        assert _named_by_logical_id({key: by_api.stack.outputs[key] for key in shared}, api_names) == (
            _named_by_logical_id({key: by_cloudformation.outputs[key] for key in shared}, cfn_names)
        )
    finally:
        by_api.delete()
