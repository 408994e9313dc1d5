"""An AWS::StepFunctions::StateMachine that CloudFormation creates is a state machine of the Step
Functions API, as on AWS.

moto 5.2.5's resource creates, updates and deletes it in the plain stepfunctions backend, while the
API the embedded engine serves (moto's `execute_state_machine`) reads the parser backend: the
stack was CREATE_COMPLETE, and ListStateMachines, DescribeStateMachine and StartExecution did not
know its machine. moto also reads only `DefinitionString`; `Definition`, the ASL as an object of
the template (JSON or YAML), gave an empty definition.
https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-resource-stepfunctions-statemachine.html
AWS's recordings: LocalStack's test_sfn_api.snapshot.json (test_cloudformation_definition_create_describe,
test_cloudformation_definition_string_create_describe).
"""

from __future__ import annotations

import json
from typing import Any

from moto.stepfunctions.models import StateMachine, StepFunctionBackend
from moto.stepfunctions.responses import get_backend
from moto.stepfunctions.utils import cfn_to_api_tags
from moto.utilities.tagging_service import TaggingService

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import Patch


def moto_needs() -> list[Need]:
    return [
        need(StateMachine, "create_from_cloudformation_json"),
        need(StateMachine, "delete_from_cloudformation_json"),
        need(StateMachine, "update_from_cloudformation_json"),
        need(StateMachine, "get_cfn_properties"),
        need(StepFunctionBackend, "create_state_machine", "name", "definition", "roleArn", "tags"),
        need(StepFunctionBackend, "update_state_machine", "arn", "definition", "role_arn"),
        need(StepFunctionBackend, "delete_state_machine", "arn"),
        need(TaggingService, "tag_resource"),
    ]


def definition_of(properties: dict[str, Any]) -> str | None:
    """The ASL text: `Definition` (an object) written as JSON, else `DefinitionString`."""
    if isinstance(properties.get("Definition"), dict):
        return json.dumps(properties["Definition"])
    return properties.get("DefinitionString")


def create_from_cloudformation_json(
    cls: type[StateMachine], resource_name: str, cloudformation_json: Any, account_id: str, region_name: str, **_: Any
) -> StateMachine:
    properties = cloudformation_json["Properties"]
    return get_backend(account_id, region_name).create_state_machine(
        name=properties.get("StateMachineName", resource_name),
        definition=definition_of(properties) or "",
        roleArn=properties.get("RoleArn", ""),
        tags=cfn_to_api_tags(properties.get("Tags", [])),
    )


def delete_from_cloudformation_json(
    cls: type[StateMachine], resource_name: str, cloudformation_json: Any, account_id: str, region_name: str
) -> None:
    get_backend(account_id, region_name).delete_state_machine(arn=resource_name)


def update_from_cloudformation_json(
    cls: type[StateMachine],
    original_resource: StateMachine,
    new_resource_name: str,
    cloudformation_json: Any,
    account_id: str,
    region_name: str,
) -> StateMachine:
    properties = cloudformation_json.get("Properties", {})
    name = properties.get("StateMachineName", original_resource.name)
    if name != original_resource.name:  # a new name replaces the machine
        cloudformation_json["Properties"] = original_resource.get_cfn_properties(properties)
        replacement = cls.create_from_cloudformation_json(name, cloudformation_json, account_id, region_name)
        cls.delete_from_cloudformation_json(original_resource.arn, cloudformation_json, account_id, region_name)
        return replacement
    backend = get_backend(account_id, region_name)
    machine = backend.update_state_machine(
        arn=original_resource.arn, definition=definition_of(properties), role_arn=properties.get("RoleArn")
    )
    backend.tagger.tag_resource(machine.arn, cfn_to_api_tags(properties.get("Tags", [])))
    return machine


def patches() -> list[Patch]:
    return [
        (StateMachine, "create_from_cloudformation_json", classmethod(create_from_cloudformation_json)),
        (StateMachine, "delete_from_cloudformation_json", classmethod(delete_from_cloudformation_json)),
        (StateMachine, "update_from_cloudformation_json", classmethod(update_from_cloudformation_json)),
    ]
