"""The state machine APIs answered as AWS answers them, where moto 5.2.5 differs in ways a caller sees.

- idempotent_create: CreateStateMachine with the name of an existing state machine returns it only
  when the request is the same one (definition text, type, logging, tracing and encryption
  configuration; a different roleArn or tags are ignored); otherwise StateMachineAlreadyExists
  (moto returned the existing machine whatever the request).
  https://docs.aws.amazon.com/step-functions/latest/apireference/API_CreateStateMachine.html
  ("CreateStateMachine's idempotency check is based on the state machine name, definition, type,
  LoggingConfiguration, TracingConfiguration, and EncryptionConfiguration").
- revisions: UpdateStateMachine answers a `revisionId` (a new one when the update changes the
  machine, the same one when it changes nothing; none while nothing ever changed), which
  DescribeStateMachine then carries (versions.py publishes versions of these revisions).
  https://docs.aws.amazon.com/step-functions/latest/apireference/API_UpdateStateMachine.html
- definitions: CreateStateMachine and UpdateStateMachine refuse what AWS's own checks refuse, in
  AWS's words (definition_validation.py).
- listed_by_name: ListStateMachines lists the machines in the order of their ARNs (names), as
  AWS's recording shows (test_list_sms_pagination: statemachine_0_, _10_, _11_, _12_, _1_, ...);
  moto listed them by creation date.
- described_fields: DescribeStateMachine's `loggingConfiguration` has `includeExecutionData`
  (false unless asked); DescribeStateMachineForExecution answers its own fields (`updateDate`,
  `revisionId`; no `creationDate`, `status` or `type`).
  https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeStateMachineForExecution.html

AWS's recordings: LocalStack's test_sfn_api.snapshot.json (test_create_duplicate_definition_format_sm,
test_create_duplicate_sm_name, test_create_update_state_machine_*, test_describe_state_machine_for_execution).
Each has a conformance test in tests/engine/test_conformance_api.py.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from moto.core.exceptions import AWSError
from moto.stepfunctions.exceptions import StateMachineDoesNotExist
from moto.stepfunctions.models import StepFunctionBackend
from moto.stepfunctions.parser.models import StepFunctionsParserBackend
from moto.stepfunctions.responses import StepFunctionResponse
from moto.stepfunctions.utils import PAGINATION_MODEL
from moto.utilities.paginator import paginate

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.stepfunctions.api import definition_validation

Patch = tuple[Any, str, Any]
DEFAULT_LOGGING = {"level": "OFF", "includeExecutionData": False}
DEFAULT_TRACING = {"enabled": False}
DEFAULT_ENCRYPTION = {"type": "AWS_OWNED_KEY"}
# What DescribeStateMachineForExecution answers (its API reference's response elements).
FOR_EXECUTION_FIELDS = (
    "stateMachineArn",
    "name",
    "definition",
    "roleArn",
    "updateDate",
    "loggingConfiguration",
    "tracingConfiguration",
    "encryptionConfiguration",
    "mapRunArn",
    "label",
    "revisionId",
    "variableReferences",
)


class StateMachineAlreadyExists(AWSError):
    TYPE = "StateMachineAlreadyExists"
    STATUS = 400


class InvalidDefinition(AWSError):
    TYPE = "InvalidDefinition"
    STATUS = 400


def moto_needs() -> list[Need]:
    return [
        need(
            StepFunctionsParserBackend,
            "create_state_machine",
            "name",
            "definition",
            "roleArn",
            "tags",
            "publish",
            "loggingConfiguration",
            "tracingConfiguration",
            "encryptionConfiguration",
            "version_description",
            "sm_type",
        ),
        need(StepFunctionsParserBackend, "describe_state_machine", "arn"),
        need(
            StepFunctionsParserBackend,
            "update_state_machine",
            "arn",
            "definition",
            "role_arn",
            "logging_configuration",
            "tracing_configuration",
            "encryption_configuration",
            "publish",
            "version_description",
        ),
        need(StepFunctionBackend, "list_state_machines"),
        need(StepFunctionResponse, "update_state_machine"),
        need(StepFunctionResponse, "describe_state_machine"),
        need(StepFunctionResponse, "describe_state_machine_for_execution"),
        need(StepFunctionResponse, "_describe_state_machine", "state_machine_arn"),
        need(StepFunctionResponse, "_get_param"),
    ]


def patches() -> list[Patch]:
    return [*idempotent_create(), *revisions(), *listed_by_name(), *described_fields()]


def listed_by_name() -> list[Patch]:
    @paginate(pagination_model=PAGINATION_MODEL)  # moto's own paginator and model, as moto's listing
    def list_state_machines(self: StepFunctionBackend) -> list[Any]:
        return sorted(self.state_machines, key=lambda machine: machine.arn)

    return [(StepFunctionBackend, "list_state_machines", list_state_machines)]


def _logging(configuration: dict[str, Any] | None) -> dict[str, Any]:
    return {**DEFAULT_LOGGING, **(configuration or {})}


def _same_request(
    machine: Any, definition: str, sm_type: str | None, logging: Any, tracing: Any, encryption: Any
) -> bool:
    return (
        machine.definition == definition
        and machine.type == (sm_type or "STANDARD")
        and _logging(machine.loggingConfiguration) == _logging(logging)
        and machine.tracingConfiguration == (tracing or DEFAULT_TRACING)
        and machine.encryptionConfiguration == (encryption or DEFAULT_ENCRYPTION)
    )


def idempotent_create() -> list[Patch]:
    original = StepFunctionsParserBackend.create_state_machine

    def create_state_machine(
        self: StepFunctionsParserBackend,
        name: str,
        definition: str,
        roleArn: str,  # noqa: N803 (moto's parameter name)
        tags: Any = None,
        publish: bool | None = None,
        loggingConfiguration: Any = None,  # noqa: N803
        tracingConfiguration: Any = None,  # noqa: N803
        encryptionConfiguration: Any = None,  # noqa: N803
        version_description: str | None = None,
        sm_type: str | None = None,
    ) -> Any:
        refused = definition_validation.refusal(definition, sm_type or "STANDARD")
        if refused:
            raise InvalidDefinition(refused)
        existing = next((m for m in self.state_machines if m.name == name), None)
        if existing is not None and not _same_request(
            existing, definition, sm_type, loggingConfiguration, tracingConfiguration, encryptionConfiguration
        ):
            raise StateMachineAlreadyExists(f"State Machine Already Exists: '{existing.arn}'")
        return original(
            self,
            name=name,
            definition=definition,
            roleArn=roleArn,
            tags=tags,
            publish=publish,
            loggingConfiguration=loggingConfiguration,
            tracingConfiguration=tracingConfiguration,
            encryptionConfiguration=encryptionConfiguration,
            version_description=version_description,
            sm_type=sm_type,
        )

    return [(StepFunctionsParserBackend, "create_state_machine", create_state_machine)]


REVISION_ATTRIBUTE = "_onceflow_revision_id"


def revision_of(machine: Any) -> str | None:
    """The machine's (or a version's) revisionId; None while it was never updated (AWS's INITIAL)."""
    return getattr(machine, REVISION_ATTRIBUTE, None)


_revision = revision_of


def _settings(machine: Any) -> tuple[Any, ...]:
    return (
        machine.definition,
        machine.roleArn,
        json.dumps(_logging(machine.loggingConfiguration), sort_keys=True),
        json.dumps(machine.tracingConfiguration, sort_keys=True),
        json.dumps(machine.encryptionConfiguration, sort_keys=True),
    )


def revisions() -> list[Patch]:
    original_update = StepFunctionsParserBackend.update_state_machine
    original_action = StepFunctionResponse.update_state_machine

    def update_state_machine(
        self: StepFunctionsParserBackend,
        arn: str,
        definition: Any = None,
        role_arn: Any = None,
        logging_configuration: Any = None,
        tracing_configuration: Any = None,
        encryption_configuration: Any = None,
        publish: bool | None = None,
        version_description: str | None = None,
    ) -> Any:
        try:
            current_machine = self.describe_state_machine(arn)
        except StateMachineDoesNotExist:
            current_machine = None
        before = _settings(current_machine) if current_machine is not None else None
        if definition is not None and current_machine is not None:
            refused = definition_validation.refusal(definition, current_machine.type)
            if refused:
                raise InvalidDefinition(refused)
        machine = original_update(
            self,
            arn,
            definition=definition,
            role_arn=role_arn,
            logging_configuration=logging_configuration,
            tracing_configuration=tracing_configuration,
            encryption_configuration=encryption_configuration,
            publish=publish,
            version_description=version_description,
        )
        if _settings(machine) != before:  # an update that changes nothing keeps the revision (or none)
            setattr(machine, REVISION_ATTRIBUTE, str(uuid.uuid4()))
        return machine

    def update_state_machine_action(self: StepFunctionResponse) -> Any:
        result = original_action(self)
        machine = self.stepfunction_backend.describe_state_machine(self._get_param("stateMachineArn"))
        if isinstance(result.result, dict) and _revision(machine):
            result.result["revisionId"] = _revision(machine)
        return result

    return [
        (StepFunctionsParserBackend, "update_state_machine", update_state_machine),
        (StepFunctionResponse, "update_state_machine", update_state_machine_action),
    ]


def _completed(self: StepFunctionResponse, result: Any, machine_arn: str) -> dict[str, Any] | None:
    response = getattr(result, "result", None)
    if not isinstance(response, dict):
        return None
    response["loggingConfiguration"] = _logging(response.get("loggingConfiguration"))
    revision = _revision(self.stepfunction_backend.describe_state_machine(machine_arn))
    if revision:
        response["revisionId"] = revision
    return response


def described_fields() -> list[Patch]:
    original_describe = StepFunctionResponse.describe_state_machine

    def describe_state_machine(self: StepFunctionResponse) -> Any:
        result = original_describe(self)
        _completed(self, result, self._get_param("stateMachineArn"))
        return result

    def describe_state_machine_for_execution(self: StepFunctionResponse) -> Any:
        machine = self.stepfunction_backend.describe_state_machine_for_execution(self._get_param("executionArn"))
        result = self._describe_state_machine(machine.arn)
        response = _completed(self, result, machine.arn)
        if response is not None:
            response["updateDate"] = machine.update_date
            for field in set(response) - set(FOR_EXECUTION_FIELDS):
                del response[field]
        return result

    return [
        (StepFunctionResponse, "describe_state_machine", describe_state_machine),
        (StepFunctionResponse, "describe_state_machine_for_execution", describe_state_machine_for_execution),
    ]
