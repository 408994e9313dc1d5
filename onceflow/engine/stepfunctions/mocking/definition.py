"""The states of an Amazon States Language definition, nested ones included (Parallel branches, Map processors)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any


def parse_definition(definition: str | Mapping[str, Any]) -> Mapping[str, Any]:
    """Accept the ASL as text (`${...}` substitutions may still be in it) or already parsed."""
    return json.loads(definition) if isinstance(definition, str) else definition


def _walk(states: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    for name, state in states.items():
        state_type = state.get("Type", "") if isinstance(state, Mapping) else ""
        yield name, state_type
        if not isinstance(state, Mapping):
            continue
        for branch in state.get("Branches", []) or []:
            yield from _walk(branch.get("States", {}))
        for key in ("Iterator", "ItemProcessor"):
            if isinstance(state.get(key), Mapping):
                yield from _walk(state[key].get("States", {}))


def state_types(definition: str | Mapping[str, Any]) -> dict[str, str]:
    """State name -> its Type, for every state at any depth."""
    return dict(_walk(parse_definition(definition).get("States", {})))
