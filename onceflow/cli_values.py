"""Option values the commands take as they come, without importing pydantic for them.

typer (from 0.16) coerces every option's value, the defaults included, through a pydantic
TypeAdapter built on first use: the first option a command reads imports pydantic (about 0.15 s of
CPU) and builds an adapter per option, on every start of every command (issue 21: `status` under
1 s). Most values need no coercion: a default that already has its option's type, a string for a
string option, an integer written in decimal for an integer option. Those are returned here as
they are, which is what typer's adapter returns for them; any other value (a Path, an enum, a
list, a bound, a value to convert or to refuse) goes to typer's own coercion, built then, so its
result and its error messages are typer's. Where typer has no such hook (other versions), nothing
is changed.
"""

from __future__ import annotations

import re
from typing import Any

_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]{0,17})")  # what int() and pydantic read alike, nothing else
_DECIMAL = re.compile(r"-?(?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,15})?")


def _plain(annotation: Any, value: Any) -> bool:
    """Whether typer's adapter for `annotation` would return `value` (or int/float of it) unchanged."""
    if annotation is str:
        return type(value) is str and _encodable(value)
    if annotation is int:
        return type(value) is int or (type(value) is str and _INTEGER.fullmatch(value) is not None)
    if annotation is float:
        return type(value) is float or (type(value) is str and _DECIMAL.fullmatch(value) is not None)
    return False


def _encodable(text: str) -> bool:
    """pydantic refuses a string it cannot read as UTF-8 (an argument with undecodable bytes)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class PlainValues:
    """What typer asks a parameter's runtime coercion for (`coerce`): plain values here, the rest
    to typer's coercion for the parameter (built on first need, then kept on the parameter)."""

    def __init__(self, build: Any) -> None:
        self._build = build

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        many = param.multiple or param.nargs == -1
        if value is None:  # as typer's RuntimeParam.coerce: nothing given, nothing to coerce
            return () if many else None
        described = param.type_descriptor
        info = described.parameter_info
        bounded = info.min is not None or info.max is not None or info.parser is not None
        if not many and not bounded and described.file_annotation is None and _plain(described.annotation, value):
            return value if type(value) is not str or described.annotation is str else described.annotation(value)
        real = param._runtime_param = self._build(described)
        return real.coerce(value, param=param, ctx=ctx)


def install() -> bool:
    """Every typer parameter's coercion starts as PlainValues (its help option's too); idempotent.
    False where this typer has no lazily built coercion to stand in for (before 0.16, no pydantic),
    or when switched off (onceflow/ops/client_speedups.py)."""
    from onceflow.ops import client_speedups

    if not client_speedups.enabled("plain_values"):
        return False
    try:
        from typer.core import _TyperParameter, build_runtime_param
    except ImportError:
        return False
    original = getattr(_TyperParameter, "get_runtime_param", None)
    if original is None or getattr(original, "plain_values", False):
        return original is not None

    def get_runtime_param(self: Any) -> Any:
        if self._runtime_param is None:
            self._runtime_param = PlainValues(build_runtime_param)
        return self._runtime_param

    get_runtime_param.plain_values = True  # type: ignore[attr-defined]
    _TyperParameter.get_runtime_param = get_runtime_param  # type: ignore[method-assign]
    return True
