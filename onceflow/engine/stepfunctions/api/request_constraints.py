"""The Step Functions list APIs refuse what their API model's constraints refuse, as AWS does:
a `maxResults` over 1000, a `nextToken` longer than the model allows, a `statusFilter` that is not
one of the enum's values, each a ValidationException "1 validation error detected: Value 'x' at
'field' failed to satisfy constraint: Member must ..." (several: "N validation errors detected: ...;
..."). moto checks none of them (boto3 checks only the minimums, client-side).

The constraints are botocore's service model of Step Functions (the one AWS publishes), read per
action; only the List* actions, GetExecutionHistory and the version and alias actions
(VERSIONS_AND_ALIASES: descriptions over 256 characters, alias names over 80, ARNs too long) are
checked (the others have their own checks in stepfunctions/strict.py, sync_execution.py and
stepfunctions/test_state/request.py, worded as AWS words them; aliases.py adds what the model says
and this does not read: the name's pattern, the routing configuration's length and weights).
An enum is listed in the order AWS's message gives it where a recording shows it, else the model's.
AWS's recordings: LocalStack's test_sfn_api.snapshot.json (test_list_sms_pagination,
test_list_executions_pagination, test_state_machine_status_filter).
"""

from __future__ import annotations

import functools
from typing import Any

from moto.stepfunctions.exceptions import ValidationException
from moto.stepfunctions.responses import StepFunctionResponse

from onceflow.engine.bookkeeping.service_models import service_model
from onceflow.engine.moto_shape import Need, need

Patch = tuple[Any, str, Any]
VERSIONS_AND_ALIASES = frozenset(
    {
        "PublishStateMachineVersion",
        "DeleteStateMachineVersion",
        "CreateStateMachineAlias",
        "DescribeStateMachineAlias",
        "UpdateStateMachineAlias",
        "DeleteStateMachineAlias",
    }
)
# AWS's own order in its message (LocalStack's test_state_machine_status_filter recording).
ENUM_ORDER_AS_AWS_WORDS_IT = {
    "ExecutionStatus": ["SUCCEEDED", "TIMED_OUT", "PENDING_REDRIVE", "ABORTED", "FAILED", "RUNNING"],
}


def moto_needs() -> list[Need]:
    return [need(StepFunctionResponse, "call_action"), need(StepFunctionResponse, "_get_param")]


def patches() -> list[Patch]:
    def call_action(self: StepFunctionResponse) -> Any:
        action = self._get_action()
        if action.startswith("List") or action == "GetExecutionHistory" or action in VERSIONS_AND_ALIASES:
            problems = violations(action, lambda name: self._get_param(name))
            if problems:
                count = len(problems)
                raise ValidationException(
                    f"{count} validation error{'s' if count > 1 else ''} detected: {'; '.join(problems)}"
                )
        # BaseResponse's, looked up now: whoever wraps it later (the cost run's call recorder) is
        # still called for Step Functions' requests, as for every other service's.
        return super(StepFunctionResponse, self).call_action()

    return [(StepFunctionResponse, "call_action", call_action)]


@functools.lru_cache(maxsize=64)
def _members(action: str) -> tuple[tuple[str, Any], ...]:
    try:
        shape = service_model("stepfunctions").operation_model(action).input_shape
    except Exception:  # an action the model does not have: nothing to check
        return ()
    return tuple(shape.members.items()) if shape is not None else ()


def violations(action: str, value_of: Any) -> list[str]:
    """AWS's words for each member of `action`'s request that breaks the model's constraints."""
    problems = []
    for name, shape in _members(action):
        value = value_of(name)
        if value is None:
            continue
        rule = _broken_rule(shape, value)
        if rule:
            shown = "Value" if shape.metadata.get("sensitive") else f"Value '{value}'"
            problems.append(f"{shown} at '{name}' failed to satisfy constraint: {rule}")
    return problems


def _broken_rule(shape: Any, value: Any) -> str | None:
    metadata = shape.metadata
    if shape.type_name == "integer" and isinstance(value, int) and "max" in metadata and value > metadata["max"]:
        return f"Member must have value less than or equal to {metadata['max']}"
    if shape.type_name != "string" or not isinstance(value, str):
        return None
    if shape.enum and value not in shape.enum:
        order = ENUM_ORDER_AS_AWS_WORDS_IT.get(shape.name, shape.enum)
        return f"Member must satisfy enum value set: [{', '.join(order)}]"
    if "max" in metadata and len(value) > metadata["max"]:
        return f"Member must have length less than or equal to {metadata['max']}"
    return None
