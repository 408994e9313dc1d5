"""The `json_copies` speed-up: the Step Functions interpreter copies state data as the JSON it is.

moto's interpreter (a port of LocalStack's) hands state data on by `copy.deepcopy`: the input a state
reads (`States.get_input`, `reset`), every JSONPath or context reference a payload template resolves,
a task's parameters and result, the stack a task's frame starts with, the ResultPath merge: about 70
copies per pipeline execution, most of them of the execution's input. `copy.deepcopy` dispatches on
the type of every value, keeps a memo of every object it copied and a list to keep them alive: about a
tenth of an execution's interpreter time. State data is JSON (dicts, lists, strings, numbers, booleans,
null) parsed from the input or built by the interpreter; here the modules that copy it call
`json_deepcopy`, which rebuilds dicts and lists by a walk, returns the values `copy.deepcopy` returns
themselves (str, int, float, bool, None), makes the interpreter's program state (ProgramRunning and
its kin, about eight copies per execution at 20 µs each by `copy.deepcopy`) as `copy.deepcopy` makes a
plain object (a new instance of its class, its attributes copied), and hands anything else (a
datetime of a service's result, a subclass of dict) to `copy.deepcopy`.

What differs from `copy.deepcopy`, and why it cannot show: deepcopy copies an object met twice in one
value once and links both places to that copy; here each place gets its own copy. JSON has no shared
parts (a value parsed from text has none, and the interpreter builds new containers), and every copy
is made so that the copy can be changed without touching the original, which both give.
"""

from __future__ import annotations

import copy
import types
from typing import Any

from moto.stepfunctions.parser.asl.component.common.path import result_path
from moto.stepfunctions.parser.asl.component.common.string import string_expression
from moto.stepfunctions.parser.asl.component.intrinsic.function.statesfunction.json_manipulation import json_merge
from moto.stepfunctions.parser.asl.component.state.exec import execute_state
from moto.stepfunctions.parser.asl.component.state.exec.state_map import state_map
from moto.stepfunctions.parser.asl.component.state.exec.state_parallel import state_parallel
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service import state_task_service
from moto.stepfunctions.parser.asl.eval import environment, program_state, states
from moto.stepfunctions.parser.asl.eval.event import event_manager

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.speedups import JSON_COPIES, inline_tasks

Patch = tuple[Any, str, Any]
SPEEDUPS = (JSON_COPIES,)
# The modules whose `copy.deepcopy` copies state data (inline_tasks: its task frame's stack).
COPYING_STATE_DATA: tuple[types.ModuleType, ...] = (
    states,
    environment,
    event_manager,
    string_expression,
    result_path,
    json_merge,
    execute_state,
    state_task_service,
    state_parallel,
    state_map,
    inline_tasks,
)
_SHARED = frozenset({str, int, float, bool, type(None)})  # what copy.deepcopy returns as it is
# Classes copy.deepcopy copies through __reduce_ex__ as plain objects: no __slots__, __deepcopy__,
# __reduce__ or __getstate__/__setstate__ of their own (test_json_copies checks it).
PLAIN_OBJECTS = frozenset(
    {
        program_state.ProgramRunning,
        program_state.ProgramEnded,
        program_state.ProgramStopped,
        program_state.ProgramError,
        program_state.ProgramTimedOut,
    }
)


def moto_needs() -> list[Need]:
    return [
        *(need(module, "copy") for module in COPYING_STATE_DATA if module is not inline_tasks),
        *(need(program_state, kind.__name__) for kind in PLAIN_OBJECTS),
    ]


def json_deepcopy(value: Any, memo: dict[int, Any] | None = None) -> Any:
    """A copy of `value` that shares nothing that can change with it, as `copy.deepcopy(value)`."""
    if memo is not None:  # a copy under way of copy.deepcopy's: its memo decides
        return copy.deepcopy(value, memo)
    kind = type(value)
    if kind is dict:
        return {key: item if type(item) in _SHARED else json_deepcopy(item) for key, item in value.items()}
    if kind is list:
        return [item if type(item) in _SHARED else json_deepcopy(item) for item in value]
    if kind in _SHARED:
        return value
    if kind in PLAIN_OBJECTS:
        plain = object.__new__(kind)
        plain.__dict__.update(json_deepcopy(value.__dict__))
        return plain
    return copy.deepcopy(value)


def _copy_module() -> types.ModuleType:
    """The `copy` module as these modules see it: copy.deepcopy replaced, everything else as it is."""
    module = types.ModuleType("copy", copy.__doc__)
    module.__dict__.update({k: v for k, v in vars(copy).items() if not k.startswith("__")})
    module.deepcopy = json_deepcopy  # type: ignore[attr-defined]
    return module


def patches() -> list[Patch]:
    replacement = _copy_module()
    return [(module, "copy", replacement) for module in COPYING_STATE_DATA]
