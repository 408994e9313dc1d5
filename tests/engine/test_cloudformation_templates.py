"""A JSON template is read as JSON, as CloudFormation reads it
(https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/template-formats.html); moto read
every template as YAML 1.1 (engine/cloudformation/json_templates.py)."""

from __future__ import annotations

import json

import pytest
from moto.cloudformation.models import Stack

from onceflow.engine import EmbeddedAws
from tests.engine.harness import Account

pytestmark = pytest.mark.embedded_only(reason="reads the embedded engine's template parser")

JSON_TEMPLATE = """ {
  "Parameters": {"Timeout": {"Type": "Number", "Default": 3e1}},
  "Resources": {"Queue": {"Type": "AWS::SQS::Queue", "Properties": {"VisibilityTimeout": {"Ref": "Timeout"}}}}
}"""

YAML_TEMPLATE = """
Parameters:
  Timeout: {Type: Number, Default: 30}
Resources:
  Queue:
    Type: AWS::SQS::Queue
    Properties:
      VisibilityTimeout: !Ref Timeout
"""


def test_a_json_template_is_read_as_json(embedded_aws: EmbeddedAws) -> None:
    read = Stack.parse_template(JSON_TEMPLATE)
    assert read == json.loads(JSON_TEMPLATE)
    assert read["Parameters"]["Timeout"]["Default"] == 30.0  # YAML 1.1 reads `3e1` as the text "3e1"


def test_a_yaml_template_is_still_read_as_yaml_with_its_short_form_tags(embedded_aws: EmbeddedAws) -> None:
    read = Stack.parse_template(YAML_TEMPLATE)
    assert read["Resources"]["Queue"]["Properties"]["VisibilityTimeout"] == {"Ref": "Timeout"}
    assert read["Parameters"]["Timeout"]["Default"] == 30


def test_a_stack_from_a_json_template_takes_its_numbers_as_json_numbers(account: Account) -> None:
    cloudformation = account.client("cloudformation")
    cloudformation.create_stack(StackName="json-template", TemplateBody=JSON_TEMPLATE)
    assert cloudformation.describe_stacks(StackName="json-template")["Stacks"][0]["StackStatus"] == "CREATE_COMPLETE"
    queue = cloudformation.describe_stack_resource(StackName="json-template", LogicalResourceId="Queue")
    url = queue["StackResourceDetail"]["PhysicalResourceId"]
    attributes = account.client("sqs").get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])
    assert attributes["Attributes"]["VisibilityTimeout"] == "30"
