"""JSONata for the embedded Step Functions, evaluated as AWS does (JSONata 2.0.6 with Step Functions'
own functions), with `jsonata-python` (a port of the reference implementation; README, "Dependencies
and why", says why this one).

moto ships the interpreter's JSONata components (`QueryLanguage`, `Arguments`, `Output`, `Assign`,
`{% %}` in every field that takes one) but no evaluator: `eval_jsonata_expression` calls `None`
("'NoneType' object is not callable"). Its design also splices every variable and `$states` into
the expression's text as JSON literals (strings unescaped) and evaluates that text; here each
expression is compiled once and evaluated with its variables bound, as JSONata's own API intends.

What AWS does and this module follows ("Transforming data with JSONata in Step Functions",
https://docs.aws.amazon.com/step-functions/latest/dg/transforming-data.html):
- `$states` (`input`, `context`, `result`, `errorOutput`) and the workflow's variables are bound;
- Step Functions' functions: `$partition`, `$range`, `$hash`, `$random` (with an optional seed),
  `$uuid`, `$parse`; `$eval` is not available (calling it is calling a non-function, T1006, as
  calling any unknown function is on AWS: LocalStack's snapshot of `$randomSeeded`);
- an expression that returns nothing (undefined) or a function fails with
  `States.QueryEvaluationError`, and so does one that raises: the cause names the expression, the
  field it is in (`Output/result`, as the history's `location`) and the error (`T1006: Attempted to
  invoke a non-function`), as LocalStack's recordings of AWS show (tests/aws/services/stepfunctions/
  v2/assign, intrinsic_functions/test_math_operations_jsonata, scenarios/test_base_scenarios).
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
import uuid
from collections.abc import Callable, Mapping
from typing import Any

import jsonata
from jsonata.jexception import JException
from jsonata.utils import Utils

# A result that is nothing (JSONata's undefined); None is JSON null.
UNDEFINED: Any = type("Undefined", (), {"__repr__": lambda self: "undefined", "__bool__": lambda self: False})()


class JSONataError(Exception):
    """An expression that does not compile or raised while evaluating: `detail` is what AWS appends
    to "threw an error during evaluation." (the JSONata error code and message)."""

    def __init__(self, detail: str):
        super().__init__(detail)
        self.detail = detail


# -- Step Functions' own functions ----------------------------------------------------------------


class FunctionArgumentError(ValueError):
    """A Step Functions function called with arguments it does not take."""


def _sequence(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else [value]


def _partition(array: Any, size: Any) -> list[list[Any]]:
    if not isinstance(size, (int, float)) or isinstance(size, bool) or size <= 0 or int(size) != size:
        raise FunctionArgumentError("The chunk size argument must be a positive integer.")
    items, size = _sequence(array), int(size)
    return [items[start : start + size] for start in range(0, len(items), size)]


def _range(start: Any, end: Any, step: Any = 1) -> Any:
    for value in (start, end, step):
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise FunctionArgumentError("The start, end and step arguments must be numbers.")
    if step == 0:
        raise FunctionArgumentError("The step argument must not be zero.")
    values, current = [], start
    while (step > 0 and current <= end) or (step < 0 and current >= end):
        values.append(current)
        current += step
    # A range of one value is that value, as a JSONata sequence of one is (AWS's recording:
    # LocalStack's intrinsic_functions/test_array_jsonata, test_array_range: $range(1, 9, 9) is 1).
    return values[0] if len(values) == 1 else values


_HASHES = {"MD5": "md5", "SHA-1": "sha1", "SHA-256": "sha256", "SHA-384": "sha384", "SHA-512": "sha512"}


def _hash(value: Any, algorithm: Any) -> str:
    if algorithm not in _HASHES:
        raise FunctionArgumentError(f"The hash algorithm must be one of {', '.join(_HASHES)}.")
    if not isinstance(value, str):
        raise FunctionArgumentError("The value to hash must be a string.")
    return hashlib.new(_HASHES[algorithm], value.encode("utf-8")).hexdigest()


def _random(seed: Any = None) -> float:
    return random.random() if seed is None else random.Random(seed).random()


def _uuid() -> str:
    return str(uuid.uuid4())


def _parse(text: Any) -> Any:
    if not isinstance(text, str):
        raise FunctionArgumentError("The argument of $parse must be a string.")
    try:
        return _to_jsonata(json.loads(text))
    except ValueError as error:
        raise FunctionArgumentError(f"Unable to parse JSON text: {error}") from None


def _lambda(function: Callable[..., Any]) -> Any:
    return jsonata.Jsonata.JLambda(function)


# `$eval` is bound to nothing: calling it is calling a non-function (T1006), as on AWS.
STEP_FUNCTIONS_FUNCTIONS: dict[str, Any] = {
    "partition": _lambda(_partition),
    "range": _lambda(_range),
    "hash": _lambda(_hash),
    "random": _lambda(_random),
    "uuid": _lambda(_uuid),
    "parse": _lambda(_parse),
    "eval": None,
}


# -- evaluation ------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def _compiled(expression: str) -> jsonata.Jsonata:
    compiled = jsonata.Jsonata(expression)
    compiled.set_output_convert_nulls(False)
    return compiled


def compile_expression(expression: str) -> None:
    """Raise JSONataError if `expression` is not JSONata."""
    try:
        _compiled(expression)
    except JException as error:
        raise JSONataError(_describe(error)) from None


def _to_jsonata(value: Any) -> Any:
    """A JSON value as JSONata reads it: a top-level null is JSONata null, not undefined."""
    return Utils.NULL_VALUE if value is None else value


def _to_json(value: Any) -> Any:
    """JSONata's result as plain JSON values (its lists are subclasses, its null a sentinel)."""
    if value is Utils.NULL_VALUE:
        return None
    if isinstance(value, dict):
        return {key: _to_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_to_json(item) for item in value]
    return value


def is_function(value: Any) -> bool:
    return value is not UNDEFINED and not isinstance(value, (dict, list, str, int, float, bool, type(None)))


def _describe(error: BaseException) -> str:
    code = getattr(error, "error", None)
    message = getattr(error, "message", None) or str(error)
    return f"{code}: {message}" if code else message


def evaluate(expression: str, bindings: Mapping[str, Any]) -> Any:
    """The value of `expression` with `bindings` (name without `$` -> JSON value) and Step Functions'
    functions bound: JSON values, UNDEFINED, or a function object (callers refuse the last two)."""
    try:
        compiled = _compiled(expression)
    except JException as error:
        raise JSONataError(_describe(error)) from None
    # jsonata-python keeps an evaluation's context on the instance and in a thread-local "current"
    # instance ($now, higher-order functions read it): one shallow copy per evaluation, so that
    # executions on other threads never share one.
    instance = _copy(compiled)
    values = dict(STEP_FUNCTIONS_FUNCTIONS)
    values.update((name, _to_jsonata(value)) for name, value in bindings.items())
    try:
        result = instance.evaluate(None, values)
    except RecursionError:
        raise JSONataError("U1001: Stack overflow error: Check for non-terminating recursive function.") from None
    except Exception as error:
        raise JSONataError(_describe(error)) from None
    if result is None:
        return UNDEFINED
    if result is Utils.NULL_VALUE:
        return None
    return _to_json(result) if not is_function(result) else result


def _copy(compiled: jsonata.Jsonata) -> jsonata.Jsonata:
    instance = object.__new__(type(compiled))
    instance.__dict__.update(compiled.__dict__)
    jsonata.Jsonata.CURRENT.jsonata = instance
    return instance
