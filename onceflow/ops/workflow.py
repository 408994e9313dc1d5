"""The pipeline workflow's states by their role (statemachine/pipeline.asl.json, the same shape in
every app). The tools find the Record and Publish tasks by what they call, so an app that renames
them is still read right; the other states keep the skeleton's names."""

from __future__ import annotations

from typing import Any

RECORD_RESOURCE = "arn:aws:states:::aws-sdk:dynamodb:transactWriteItems"
PUBLISH_RESOURCE = "arn:aws:states:::sns:publish"

RECORD = "Record event and business item"
LOOK_UP = "Look up earlier record"
LEFT_TO_DO = "What is left to do?"
PUBLISH = "Publish notification"
MARK_SENT = "Mark as sent"
ALREADY_SENT = "Already sent"
ALREADY_DONE_EXPIRED = "Already done, record expired"
DEAD_LETTERED = "Dead-lettered"
CONFLICT_PREFIX = "Describe payload conflict"


class WorkflowShapeError(ValueError):
    """The definition lacks a state the pipeline needs."""


def state_calling(definition: dict[str, Any], resource: str) -> str:
    """The name of the one top-level Task whose Resource is `resource`."""
    names = [
        name
        for name, state in (definition.get("States") or {}).items()
        if state.get("Type") == "Task" and state.get("Resource") == resource
    ]
    if len(names) != 1:
        raise WorkflowShapeError(f"the workflow has {len(names)} Task states calling {resource}; the pipeline has one")
    return names[0]


def record_state(definition: dict[str, Any]) -> str:
    """The state that writes the event's state record and its business item in one transaction."""
    return state_calling(definition, RECORD_RESOURCE)


def publish_state(definition: dict[str, Any]) -> str:
    return state_calling(definition, PUBLISH_RESOURCE)
