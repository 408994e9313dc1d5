"""TestState's `context`: the request's Context object is `$$` exactly as given. AWS adds nothing of
its own: an empty section stays empty and `{}` is `{}` (AWS's recording: LocalStack's
test_state/test_state_context_object.snapshot.json, test_state_context_object_edge_cases
[EMPTY_OBJECTS] and [EMPTY]; test_state_task_context_object shows the full object unchanged).

The engine still needs its own context underneath (moto builds a frame's States from
`Execution.Input`, and reads `Execution.Id` and `StateMachine`), so that one is kept and the
given object is what a `$$` path (a payload template's `"x.$": "$$..."`, an intrinsic function's
argument) reads. The given object is found through the engine's `Execution` section, which every
frame of the state shares by reference.
Conformance test: tests/engine/test_test_state_api.py::test_a_given_context_object_is_dollar_dollar_as_given.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from moto.stepfunctions.parser.asl.component.common.string.string_expression import StringContextPath
from moto.stepfunctions.parser.asl.component.intrinsic.argument.argument import ArgumentContextPath

Patch = tuple[Any, str, Any]

# id() of the engine's Execution section -> the Context object the TestState request gave.
_GIVEN: dict[int, dict[str, Any]] = {}
_GIVEN_LOCK = threading.Lock()


@contextmanager
def given(engine_context: dict[str, Any], context: dict[str, Any]) -> Iterator[None]:
    """While open, `$$` of the state whose engine context is `engine_context` reads `context`."""
    key = id(engine_context["Execution"])
    with _GIVEN_LOCK:
        _GIVEN[key] = context
    try:
        yield
    finally:
        with _GIVEN_LOCK:
            _GIVEN.pop(key, None)


@contextmanager
def _reading_given(env: Any) -> Iterator[None]:
    context_object = env.states.context_object
    engine_context = context_object.context_object_data
    execution = engine_context.get("Execution") if isinstance(engine_context, dict) else None
    given_context = _GIVEN.get(id(execution)) if execution is not None else None
    if given_context is None:
        yield
        return
    context_object.context_object_data = given_context
    try:
        yield
    finally:
        context_object.context_object_data = engine_context


def moto_needs() -> list[Any]:
    from onceflow.engine.moto_shape import need

    return [need(StringContextPath, "_eval_body", "env"), need(ArgumentContextPath, "_eval_argument", "env")]


def patches() -> list[Patch]:
    eval_body, eval_argument = StringContextPath._eval_body, ArgumentContextPath._eval_argument

    def string_context_path(self: StringContextPath, env: Any) -> None:
        with _reading_given(env):
            eval_body(self, env)

    def argument_context_path(self: ArgumentContextPath, env: Any) -> Any:
        with _reading_given(env):
            return eval_argument(self, env)

    return [
        (StringContextPath, "_eval_body", string_context_path),
        (ArgumentContextPath, "_eval_argument", argument_context_path),
    ]
