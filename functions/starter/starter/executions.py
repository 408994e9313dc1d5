"""Start one execution per delivery; a delivery that was already handed over is a success."""

from __future__ import annotations

from typing import Any, Literal

from starter.messages import PipelineEvent
from starter.naming import execution_name

Outcome = Literal["started", "already_started"]


def start_execution(sfn: Any, state_machine_arn: str, event: PipelineEvent, message_id: str) -> tuple[str, Outcome]:
    name = execution_name(event.event_id, message_id)
    try:
        sfn.start_execution(stateMachineArn=state_machine_arn, name=name, input=event.execution_input)
    except sfn.exceptions.ExecutionAlreadyExists:
        return name, "already_started"
    return name, "started"
