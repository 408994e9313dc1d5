"""Which tests need the embedded engine itself, and why (the reason is the skip message elsewhere).

A test is embedded-only when it is marked `@pytest.mark.embedded_only`, when it uses the
`embedded_aws` fixture (directly or through another fixture: its delay clock, its reset, the mock
configuration patch), or when its code, or a helper it calls from the test modules (a function, or
a class's methods), uses fault injection (`onceflow.local.faults`), the execution interrupts
(`onceflow.devtools.schedules.hooks`) or moto itself: those patch moto in this process, and an
external endpoint never sees them.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Iterator
from typing import Any

import pytest

MARKER = "embedded_only"
MARKER_HELP = f"{MARKER}(reason): needs the embedded engine (moto in-process); skipped against external endpoints"
EMBEDDED_FIXTURE = "embedded_aws"
# Modules whose use means the test patches or drives moto in this process, and what that is.
_IN_PROCESS_MODULES = {
    "onceflow.local.faults": "injects faults by patching moto in this process",
    "moto": "patches moto in this process",
    "onceflow.engine.server": "runs the embedded engine",
    "onceflow.local.pipeline": "runs the local pipeline on the embedded engine",
    "onceflow.devtools.schedules.hooks": "stops or times out executions at a state by patching moto in this process",
}
_OWN_CODE = "tests"


def _module_of(value: Any) -> str:
    if isinstance(value, types.ModuleType):
        return value.__name__
    return str(getattr(value, "__module__", "") or "")


def _is_under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _names(code: types.CodeType) -> Iterator[str]:
    yield from code.co_names
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            yield from _names(constant)


def _in_process_use(function: Any, seen: set[Any]) -> str | None:
    """What the first in-process name reached from `function` does (following helpers in the tests)."""
    function = inspect.unwrap(function)
    code = getattr(function, "__code__", None)
    if code is None or function in seen:
        return None
    seen.add(function)
    namespace = getattr(function, "__globals__", {})
    for name in _names(code):
        value = namespace.get(name)
        if value is None:
            continue
        module = _module_of(value)
        for package, what in _IN_PROCESS_MODULES.items():
            if _is_under(module, package):
                used = module if isinstance(value, types.ModuleType) else f"{module}.{getattr(value, '__name__', name)}"
                return f"{what} ({used})"
        if _is_under(module, _OWN_CODE):
            for helper in _helpers(value):
                found = _in_process_use(helper, seen)
                if found:
                    return found
    return None


def _helpers(value: Any) -> list[Any]:
    """The code a name of the test modules stands for: a function, or a class's methods."""
    if inspect.isfunction(value):
        return [value]
    if inspect.isclass(value):
        return [member for member in vars(value).values() if inspect.isfunction(member)]
    return []


def _fixture_definitions(item: pytest.Item) -> dict[str, Any]:
    info = getattr(item, "_fixtureinfo", None)
    return {name: definitions[-1] for name, definitions in getattr(info, "name2fixturedefs", {}).items() if definitions}


def _fixture_functions(item: pytest.Item) -> Iterator[Any]:
    for definition in _fixture_definitions(item).values():
        if _is_under(_module_of(definition.func), _OWN_CODE):
            yield definition.func


def _route_to_engine(item: pytest.Item) -> str:
    """How the test reaches `embedded_aws`: directly, or through which of its fixtures."""
    definitions = _fixture_definitions(item)

    def reaches(name: str, seen: frozenset[str]) -> bool:
        definition = definitions.get(name)
        arguments = getattr(definition, "argnames", ()) if definition is not None else ()
        return name == EMBEDDED_FIXTURE or any(reaches(a, seen | {name}) for a in arguments if a not in seen)

    direct = getattr(getattr(item, "_fixtureinfo", None), "argnames", ())
    if EMBEDDED_FIXTURE in direct:
        return EMBEDDED_FIXTURE
    via = [name for name in direct if reaches(name, frozenset())]
    return f"{EMBEDDED_FIXTURE} via {', '.join(via)}" if via else EMBEDDED_FIXTURE


def embedded_only_reason(item: pytest.Item) -> str | None:
    """Why `item` can only run on the embedded engine, or None if it runs on any endpoint."""
    marker = item.get_closest_marker(MARKER)
    if marker is not None:
        return str(marker.kwargs.get("reason") or (marker.args[0] if marker.args else "marked embedded_only"))
    if EMBEDDED_FIXTURE in getattr(item, "fixturenames", ()):
        return f"uses the embedded engine itself (fixture {_route_to_engine(item)})"
    seen: set[Any] = set()
    for function in (getattr(item, "function", None), *_fixture_functions(item)):
        found = _in_process_use(function, seen) if function is not None else None
        if found:
            return found
    return None
