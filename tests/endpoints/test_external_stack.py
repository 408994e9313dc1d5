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
from onceflow.devtools.external_stack import ExternalDeployment, _Intrinsics, deploy_external
from onceflow.local.stack import render_definition
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
    assert int(source["VisibilityTimeout"]) == declared["VisibilityTimeout"] == stack.event_source.visibility_timeout
    assert json.loads(source["RedrivePolicy"]) == {
        "deadLetterTargetArn": dead_letter_arn,
        "maxReceiveCount": max_receive_count,
    }
    for table in (stack.processed_events_table, stack.order_records_table):
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
    stack = deploy_by_api().stack
    events, sqs = stack.client("events"), stack.client("sqs")
    rule = events.describe_rule(Name=stack.outputs["SafetyNetRuleName"])
    [target] = events.list_targets_by_rule(Rule=rule["Name"])["Targets"]
    assert json.loads(rule["EventPattern"])["detail"]["stateMachineArn"] == [stack.state_machine_arn]
    dead_letter_arn = sqs.get_queue_attributes(QueueUrl=stack.dead_letter_queue_url, AttributeNames=["QueueArn"])
    assert target["Arn"] == dead_letter_arn["Attributes"]["QueueArn"]


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
    template = {
        "Conditions": {
            "HasPath": {"Fn::Not": [{"Fn::Equals": [{"Ref": "Path"}, ""]}]},
            "Both": {"Fn::And": [{"Condition": "HasPath"}, {"Fn::Equals": ["a", "a"]}]},
        }
    }
    intrinsics = _Intrinsics(template, {"Path": ""}, {"AWS::Region": "eu-west-1", "AWS::StackName": "s"})
    intrinsics.refs["Queue"] = "https://queue"
    intrinsics.attributes["Queue.Arn"] = "arn:queue"
    node = {
        "Name": {"Fn::Sub": ["${AWS::StackName}-${Queue.Arn}-${!Literal}-${Extra}", {"Extra": "x"}]},
        "Extra": {"Fn::Sub": ["${Extra}", {"Extra": {"Ref": "Queue"}}]},
        "Joined": {"Fn::Join": ["/", ["a", {"Ref": "AWS::Region"}, {"Fn::Select": [1, ["x", "y"]]}]]},
        "Dropped": {"Fn::If": ["HasPath", {"Ref": "Path"}, {"Ref": "AWS::NoValue"}]},
        "List": ["kept", {"Ref": "AWS::NoValue"}],
        "Both": {"Fn::If": ["Both", "yes", "no"]},
    }

    assert intrinsics.resolve(node) == {
        "Name": "s-arn:queue-${Literal}-x",
        "Extra": "https://queue",
        "Joined": "a/eu-west-1/y",
        "List": ["kept"],
        "Both": "no",
    }
