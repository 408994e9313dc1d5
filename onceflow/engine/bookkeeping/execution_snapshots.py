"""One snapshot of a state machine shared by the executions that started on the same revision.

moto's StartExecution deep-copies the state machine for every execution ("the clone only acts as
a snapshot of the state machine definition for this execution": its definition, role, logging,
tracing and encryption configurations, versions, aliases and tags, without its executions), and
the execution keeps that copy for as long as the process lives: a long `onceflow start` run kept
one per execution (issue 21). DescribeStateMachineForExecution answers from it, as AWS answers the
definition the execution ran
(https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeStateMachineForExecution.html).

Here the copy is taken once and shared until the state machine changes: a fingerprint of what the
copy holds (every attribute, values compared as they are, other objects by identity and their own
attributes, executions and the backend left out as moto leaves them out) says whether the last
copy is still the state machine as it is now; if not (UpdateStateMachine, a tag, a published
version, an alias), a new copy is taken and shared from then on. Executions read their snapshot
and nothing in the engine writes to a shared one (stepfunctions/api/sync_execution.py, which sets its snapshot's
type, takes its own). Memory: one copy per revision instead of one per execution.

Patched in moto: `stepfunctions.parser.models.copy` (the module moto's StartExecution copies with).
"""

from __future__ import annotations

import copy
import datetime
import enum
from typing import Any

from moto.stepfunctions import models as sfn_models
from moto.stepfunctions.parser import models as sfn_parser_models

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import Patch

_SNAPSHOT = "_onceflow_snapshot"
_LEFT_OUT = frozenset({"executions", "backend", _SNAPSHOT})  # moto's memo leaves out executions, backend
_PLAIN = (str, bytes, int, float, bool, type(None), datetime.datetime, datetime.date, enum.Enum)
_DEPTH = 8  # beyond it, objects by identity only (nothing in a state machine nests that deep)


def moto_needs() -> list[Need]:
    return [
        need(sfn_parser_models, "copy"),  # its StartExecution: copy.deepcopy(state_machine, memo)
        need(sfn_parser_models.StepFunctionsParserBackend, "start_execution", "state_machine_arn", "name"),
        need(sfn_models, "StateMachineInstance"),
    ]


class _Snapshot:
    """A state machine's last snapshot, with the fingerprint of the state machine it was taken of."""

    def __init__(self, fingerprint: Any, snapshot: Any):
        self.fingerprint, self.snapshot = fingerprint, snapshot

    def __deepcopy__(self, memo: dict[int, Any]) -> None:
        return None  # a snapshot does not carry the one before it


def fingerprint(value: Any, depth: int = 0) -> Any:
    """What a deep copy of `value` would hold, as a comparable value."""
    if isinstance(value, _PLAIN):
        return value
    if depth >= _DEPTH:
        return (type(value), id(value))
    if isinstance(value, dict):
        return (dict, tuple((key, fingerprint(item, depth + 1)) for key, item in value.items()))
    if isinstance(value, list | tuple | set | frozenset):
        return (type(value), tuple(fingerprint(item, depth + 1) for item in value))
    attributes = getattr(value, "__dict__", None)
    if attributes is None or hasattr(value, "__deepcopy__"):  # copied as it says (execution_index's: not)
        return (type(value), id(value))
    return (
        type(value),
        id(value),
        tuple((key, fingerprint(item, depth + 1)) for key, item in attributes.items() if key not in _LEFT_OUT),
    )


class _SharingCopy:
    """What moto's parser models see as `copy`: a state machine's snapshot is shared while it is
    unchanged; everything else is the copy module's."""

    def deepcopy(self, value: Any, memo: dict[int, Any] | None = None) -> Any:
        if not isinstance(value, sfn_models.StateMachineInstance):
            return copy.deepcopy(value, memo)
        now = fingerprint(value)
        last: _Snapshot | None = value.__dict__.get(_SNAPSHOT)
        if last is not None and last.fingerprint == now:
            return last.snapshot
        snapshot = copy.deepcopy(value, memo)
        value.__dict__[_SNAPSHOT] = _Snapshot(now, snapshot)
        return snapshot

    def __getattr__(self, name: str) -> Any:
        return getattr(copy, name)


def patches() -> list[Patch]:
    return [(sfn_parser_models, "copy", _SharingCopy())]
