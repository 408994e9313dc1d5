"""State machine aliases as AWS keeps them (moto 5.2.5 has the five alias APIs, but checks the
routing configuration in its own words, lets an alias route to a state machine ARN or be created
twice over with another configuration, and fails on a missing alias with other errors).

https://docs.aws.amazon.com/step-functions/latest/dg/concepts-state-machine-alias.html and the API
reference pages of CreateStateMachineAlias, DescribeStateMachineAlias, UpdateStateMachineAlias,
DeleteStateMachineAlias and ListStateMachineAliases:

- An alias routes to one or two versions of one state machine, with weights summing to 100; its
  ARN is the machine's with `:<name>`. The checks, in AWS's words: the API model's constraints
  (the name's pattern and length, at most 2 routes, a weight up to 100: "1 validation error
  detected: Value ... at 'routingConfiguration' failed to satisfy constraint: ..."; the name's length
  and the description's are request_constraints.py's), then "Routing
  configuration must contain distinct state machine version ARNs. Received: [...]", "... must
  contain state machine version ARNs. Received: [...]", "Sum of routing configuration weights must
  equal 100. Received: [70, 29]".
- CreateStateMachineAlias is idempotent for the same name, description and routing; another
  description or routing under the name is ConflictException "Failed to create alias because an
  alias with the same name and a different routing configuration already exists.". Up to 100
  aliases a machine, then ServiceQuotaExceededException.
- UpdateStateMachineAlias/DescribeStateMachineAlias of an alias that is gone: ResourceNotFound
  "Request references a resource that does not exist."; DeleteStateMachineAlias of one: a success.
- ListStateMachineAliases lists in creation order, page by page (InvalidToken "Invalid Token:
  'Invalid token'" for a token it did not give).

AWS's recording: LocalStack's test_sfn_api_aliasing.snapshot.json. Tests:
tests/engine/test_conformance_versions.py.
"""

from __future__ import annotations

import re
from typing import Any

from moto.core.exceptions import AWSError
from moto.core.responses import ActionResult, EmptyResult
from moto.stepfunctions.exceptions import ValidationException
from moto.stepfunctions.models import StateMachineAlias, StepFunctionBackend
from moto.stepfunctions.responses import StepFunctionResponse

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.stepfunctions.api import qualified_arns
from onceflow.engine.stepfunctions.api.versions import ConflictException, ServiceQuotaExceededException

Patch = tuple[Any, str, Any]
MAX_ALIASES = 100  # per state machine (CreateStateMachineAlias's page)
NAME_PATTERN = r"^(?=.*[a-zA-Z_\-\.])[a-zA-Z0-9_\-\.]+$"  # the API model's, as AWS's message quotes it
MAX_ROUTES = 2
MAX_WEIGHT = 100
NOT_FOUND = "Request references a resource that does not exist."


class ResourceNotFound(AWSError):
    """moto's ResourceNotFound words every message "Resource not found: '<arn>'"."""

    TYPE = "ResourceNotFound"
    STATUS = 400


def moto_needs() -> list[Need]:
    return [
        need(StateMachineAlias, "__init__", "name", "statemachine_arn", "routing_configuration", "description"),
        need(StateMachineAlias, "update"),
        need(StepFunctionBackend, "_validate_machine_arn", "machine_arn"),
        need(StepFunctionResponse, "_get_param"),
        need(StepFunctionResponse, "_get_int_param"),
        need(StepFunctionResponse, "stepfunction_backend"),
        need(StepFunctionResponse, "create_state_machine_alias"),
        need(StepFunctionResponse, "describe_state_machine_alias"),
        need(StepFunctionResponse, "update_state_machine_alias"),
        need(StepFunctionResponse, "delete_state_machine_alias"),
        need(StepFunctionResponse, "list_state_machine_aliases"),
    ]


def patches() -> list[Patch]:
    return [
        (StepFunctionResponse, "create_state_machine_alias", _create),
        (StepFunctionResponse, "describe_state_machine_alias", _describe),
        (StepFunctionResponse, "update_state_machine_alias", _update),
        (StepFunctionResponse, "delete_state_machine_alias", _delete),
        (StepFunctionResponse, "list_state_machine_aliases", _list),
    ]


def _model_constraints(name: str | None, routes: list[dict[str, Any]] | None) -> None:
    problems = []
    if name is not None and not re.match(NAME_PATTERN, name):
        problems.append(
            f"Value '{name}' at 'name' failed to satisfy constraint: Member must satisfy regular expression pattern: {NAME_PATTERN}"
        )
    if routes is not None:
        if len(routes) > MAX_ROUTES:
            shown = ", ".join(
                f"RoutingConfigurationListItem(stateMachineVersionArn={r.get('stateMachineVersionArn')}, weight={r.get('weight')})"
                for r in routes
            )
            problems.append(
                f"Value '[{shown}]' at 'routingConfiguration' failed to satisfy constraint: "
                f"Member must have length less than or equal to {MAX_ROUTES}"
            )
        for number, route in enumerate(routes, start=1):
            if isinstance(route.get("weight"), int) and route["weight"] > MAX_WEIGHT:
                problems.append(
                    f"Value '{route['weight']}' at 'routingConfiguration.{number}.member.weight' failed to satisfy "
                    f"constraint: Member must have value less than or equal to {MAX_WEIGHT}"
                )
    if problems:
        count = len(problems)
        raise ValidationException(f"{count} validation error{'s' if count > 1 else ''} detected: {'; '.join(problems)}")


def _routed_machine(backend: Any, routes: list[dict[str, Any]]) -> Any:
    """The one state machine whose versions `routes` name (ValidationException/ResourceNotFound)."""
    arns = [route["stateMachineVersionArn"] for route in routes]
    if len(set(arns)) != len(arns):
        raise ValidationException(
            f"Routing configuration must contain distinct state machine version ARNs. Received: [{', '.join(arns)}]"
        )
    for arn in arns:
        backend._validate_machine_arn(arn)
    if not all(qualified_arns.is_version(qualified_arns.split(arn)[1]) for arn in arns):
        raise ValidationException(
            f"Routing configuration must contain state machine version ARNs. Received: [{', '.join(arns)}]"
        )
    if len({qualified_arns.split(arn)[0] for arn in arns}) > 1:
        raise ValidationException(
            f"Routing configuration must contain versions of one state machine. Received: [{', '.join(arns)}]"
        )
    weights = [route["weight"] for route in routes]
    if sum(weights) != MAX_WEIGHT:
        raise ValidationException(
            f"Sum of routing configuration weights must equal 100. Received: [{', '.join(str(w) for w in weights)}]"
        )
    found = [qualified_arns.resolve(backend, arn) for arn in arns]
    if any(f is None or f[1] is None for f in found):
        raise ResourceNotFound(NOT_FOUND)
    return found[0][0]


def _routes(routes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"stateMachineVersionArn": r["stateMachineVersionArn"], "weight": r["weight"]} for r in routes]


def _create(self: StepFunctionResponse) -> ActionResult:
    name, description = self._get_param("name"), self._get_param("description")
    routes = self._get_param("routingConfiguration") or []
    _model_constraints(name, routes)
    machine = _routed_machine(self.stepfunction_backend, routes)
    existing = machine.aliases.get(name)
    if existing is not None:
        if existing.description != description or existing.routing_configuration != _routes(routes):
            raise ConflictException(
                "Failed to create alias because an alias with the same name and a different routing "
                "configuration already exists."
            )
        alias = existing
    else:
        if len(machine.aliases) >= MAX_ALIASES:
            raise ServiceQuotaExceededException(
                f"The maximum number of aliases ({MAX_ALIASES}) for state machine '{machine.arn}' has been reached"
            )
        alias = machine.aliases[name] = StateMachineAlias(name, machine.arn, _routes(routes), description)
    return ActionResult({"stateMachineAliasArn": alias.arn, "creationDate": alias.creation_date})


def alias_for(self: StepFunctionResponse, arn: str) -> StateMachineAlias | None:
    self.stepfunction_backend._validate_machine_arn(arn)
    found = qualified_arns.resolve(self.stepfunction_backend, arn)
    return found[2] if found is not None else None


def _describe(self: StepFunctionResponse) -> ActionResult:
    alias = alias_for(self, self._get_param("stateMachineAliasArn"))
    if alias is None:
        raise ResourceNotFound(NOT_FOUND)
    response = {
        "stateMachineAliasArn": alias.arn,
        "name": alias.name,
        "routingConfiguration": alias.routing_configuration,
        "creationDate": alias.creation_date,
        "updateDate": alias.update_date,
    }
    if alias.description is not None:
        response["description"] = alias.description
    return ActionResult(response)


def _update(self: StepFunctionResponse) -> ActionResult:
    description, routes = self._get_param("description"), self._get_param("routingConfiguration")
    if description is None and routes is None:
        raise ValidationException("You must provide at least one of routingConfiguration or description")
    _model_constraints(None, routes)
    alias = alias_for(self, self._get_param("stateMachineAliasArn"))
    if alias is None:
        raise ResourceNotFound(NOT_FOUND)
    if routes is not None:
        machine = _routed_machine(self.stepfunction_backend, routes)
        if machine.arn != alias.statemachine_arn:
            raise ValidationException(
                f"Routing configuration must contain versions of one state machine. Received: "
                f"[{', '.join(r['stateMachineVersionArn'] for r in routes)}]"
            )
    alias.update(routing_configuration=_routes(routes) if routes is not None else None, description=description)
    return ActionResult({"updateDate": alias.update_date})


def _delete(self: StepFunctionResponse) -> EmptyResult:
    arn = self._get_param("stateMachineAliasArn")
    alias = alias_for(self, arn)
    if alias is not None:
        found = qualified_arns.resolve(self.stepfunction_backend, arn)
        del found[0].aliases[alias.name]
    return EmptyResult()


def _list(self: StepFunctionResponse) -> ActionResult:
    machine = qualified_arns.existing_machine(self.stepfunction_backend, self._get_param("stateMachineArn"))
    return ActionResult(
        qualified_arns.listed(
            self,
            sorted(machine.aliases.values(), key=lambda a: a.creation_date),
            lambda a: a.arn,
            "stateMachineAliases",
            lambda a: {"stateMachineAliasArn": a.arn, "creationDate": a.creation_date},
        )
    )
