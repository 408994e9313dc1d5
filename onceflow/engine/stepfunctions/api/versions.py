"""State machine versions as AWS keeps them (moto 5.2.5 numbers a new version on every publish, has
no PublishStateMachineVersion, ListStateMachineVersions or DeleteStateMachineVersion, and lets
UpdateStateMachine change a version).

https://docs.aws.amazon.com/step-functions/latest/dg/concepts-state-machine-version.html and the API
reference pages of PublishStateMachineVersion, ListStateMachineVersions, DeleteStateMachineVersion,
CreateStateMachine and UpdateStateMachine:

- A version is a snapshot of the machine's current revision (definition, role, logging, tracing,
  encryption), numbered from 1; numbers are never reused after a delete. Its ARN is the machine's
  with `:<number>`; DescribeStateMachine on it answers the snapshot (its `description`, and the
  `revisionId` it was published from).
- Publishing (PublishStateMachineVersion, or `publish` on CreateStateMachine/UpdateStateMachine) is
  idempotent: when a version of the current revision exists, that version is the answer. With
  `revisionId`, PublishStateMachineVersion publishes only if it is the current revision (INITIAL for
  a machine never updated), else ConflictException "Failed to publish the State Machine version for
  revision <given>. The current State Machine revision is <current>.". Up to 1000 versions, then
  ServiceQuotaExceededException.
- ListStateMachineVersions lists newest first, page by page; DeleteStateMachineVersion of a version
  an alias routes to is ConflictException "Version to be deleted must not be referenced by an alias.
  Current list of aliases referencing this version: [<names>]"; of one that is gone, a success.
- UpdateStateMachine and TagResource take the machine's ARN only: a version's is
  StateMachineDoesNotExist / ResourceNotFound.

AWS's recordings: LocalStack's test_sfn_api_versioning.snapshot.json, test_sfn_api_aliasing.snapshot.json
(test_delete_version_with_alias), test_sfn_api_tagging.snapshot.json (test_tag_state_machine_version).
Tests: tests/engine/test_conformance_versions.py.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from moto.core.exceptions import AWSError
from moto.core.responses import ActionResult, EmptyResult
from moto.stepfunctions.exceptions import ResourceNotFound, StateMachineDoesNotExist
from moto.stepfunctions.models import StateMachine, StateMachineVersion, StepFunctionBackend
from moto.stepfunctions.parser.models import StepFunctionsParserBackend
from moto.stepfunctions.responses import StepFunctionResponse

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import current
from onceflow.engine.stepfunctions.api import qualified_arns
from onceflow.engine.stepfunctions.api.state_machines import REVISION_ATTRIBUTE, revision_of

Patch = tuple[Any, str, Any]
MAX_VERSIONS = 1000  # per state machine (PublishStateMachineVersion's page)
INITIAL_REVISION = "INITIAL"  # the revisionId of a machine never updated (PublishStateMachineVersion's page)


class ConflictException(AWSError):
    TYPE = "ConflictException"
    STATUS = 409


class ServiceQuotaExceededException(AWSError):
    TYPE = "ServiceQuotaExceededException"
    STATUS = 400


def moto_needs() -> list[Need]:
    return [
        need(StateMachine, "publish", "description"),
        need(StateMachine, "_handle_name_input_idempotency", "name", "execution_input"),
        need(StateMachineVersion, "__init__", "source", "version", "description"),
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
        need(StepFunctionBackend, "tag_resource", "arn", "tags"),
        need(StepFunctionBackend, "_validate_machine_arn", "machine_arn"),
        need(StepFunctionResponse, "_get_param"),
        need(StepFunctionResponse, "_get_int_param"),
        need(StepFunctionResponse, "stepfunction_backend"),
    ]


def patches(before: Sequence[Patch] = ()) -> list[Patch]:
    """`before`: the patches listed ahead of these; UpdateStateMachine's there is the one wrapped."""
    return [
        (StateMachine, "publish", publish_version),
        # A version runs as moto runs its machine: its name check is the machine's (qualified_executions.py).
        (StateMachineVersion, "_handle_name_input_idempotency", _version_name_check),
        (StepFunctionsParserBackend, "update_state_machine", _update(before)),
        (StepFunctionBackend, "tag_resource", _tag(before)),
        (StepFunctionResponse, "publish_state_machine_version", _publish_action),
        (StepFunctionResponse, "list_state_machine_versions", _list_action),
        (StepFunctionResponse, "delete_state_machine_version", _delete_action),
    ]


def publish_version(machine: StateMachine, description: str | None = None) -> StateMachineVersion:
    """The version of the machine's current revision: the existing one, else a new one."""
    revision = revision_of(machine)
    for number in sorted(machine.versions, reverse=True):
        if revision_of(machine.versions[number]) == revision:
            machine.latest_version = machine.versions[number]  # what Create/UpdateStateMachine answer
            return machine.versions[number]
    if len(machine.versions) >= MAX_VERSIONS:
        raise ServiceQuotaExceededException(
            f"The maximum number of versions ({MAX_VERSIONS}) for state machine '{machine.arn}' has been reached"
        )
    number = machine.latest_version_number + 1
    version = StateMachineVersion(source=machine, version=number, description=description)
    # A snapshot: later updates of the machine replace these, they never change the version's.
    for attribute in ("loggingConfiguration", "tracingConfiguration", "encryptionConfiguration"):
        setattr(version, attribute, copy.deepcopy(getattr(machine, attribute)))
    setattr(version, REVISION_ATTRIBUTE, revision)
    version.sm_type = machine.sm_type
    version.backend = machine.backend
    machine.versions[number] = version
    machine.latest_version = version
    machine.latest_version_number = number
    return version


def _version_name_check(self: StateMachineVersion, name: str, execution_input: str) -> Any:
    source = qualified_arns.machine(self.backend, self.source_arn)
    return source._handle_name_input_idempotency(name, execution_input) if source is not None else None


def _update(before: Sequence[Patch]) -> Any:
    original = current(before, StepFunctionsParserBackend, "update_state_machine")  # state_machine_api's

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
        if qualified_arns.split(arn)[1] is not None:
            raise StateMachineDoesNotExist(f"State Machine Does Not Exist: '{arn}'")
        machine = original(
            self,
            arn,
            definition=definition,
            role_arn=role_arn,
            logging_configuration=logging_configuration,
            tracing_configuration=tracing_configuration,
            encryption_configuration=encryption_configuration,
            publish=False,  # published here, once the update's revision is known
            version_description=None,
        )
        if publish:
            publish_version(machine, version_description)
        return machine

    return update_state_machine


def _tag(before: Sequence[Patch]) -> Any:
    original = current(before, StepFunctionBackend, "tag_resource")

    def tag_resource(self: StepFunctionBackend, arn: str, tags: Any) -> None:
        if qualified_arns.split(arn)[1] is not None:
            raise ResourceNotFound(arn)  # "Resource not found: '<arn>'"
        original(self, arn, tags)

    return tag_resource


def _publish_action(self: StepFunctionResponse) -> ActionResult:
    machine = qualified_arns.existing_machine(self.stepfunction_backend, self._get_param("stateMachineArn"))
    wanted = self._get_param("revisionId")
    revision = revision_of(machine) or INITIAL_REVISION
    if wanted is not None and wanted != revision:
        raise ConflictException(
            f"Failed to publish the State Machine version for revision {wanted}. "
            f"The current State Machine revision is {revision}."
        )
    version = publish_version(machine, self._get_param("description"))
    return ActionResult({"creationDate": version.creation_date, "stateMachineVersionArn": version.arn})


def _list_action(self: StepFunctionResponse) -> ActionResult:
    machine = qualified_arns.existing_machine(self.stepfunction_backend, self._get_param("stateMachineArn"))
    newest_first = [machine.versions[number] for number in sorted(machine.versions, reverse=True)]
    return ActionResult(
        qualified_arns.listed(
            self,
            newest_first,
            lambda v: v.arn,
            "stateMachineVersions",
            lambda v: {"stateMachineVersionArn": v.arn, "creationDate": v.creation_date},
        )
    )


def _delete_action(self: StepFunctionResponse) -> EmptyResult:
    arn = self._get_param("stateMachineVersionArn")
    self.stepfunction_backend._validate_machine_arn(arn)
    found = qualified_arns.resolve(self.stepfunction_backend, arn)
    if found is None or found[1] is None:
        return EmptyResult()  # nothing (left) to delete: AWS answers 200
    machine, version, _ = found
    routing = [
        alias.name
        for alias in machine.aliases.values()
        if any(route["stateMachineVersionArn"] == arn for route in alias.routing_configuration)
    ]
    if routing:
        raise ConflictException(
            "Version to be deleted must not be referenced by an alias. "
            f"Current list of aliases referencing this version: [{', '.join(routing)}]"
        )
    del machine.versions[version.version]
    return EmptyResult()
