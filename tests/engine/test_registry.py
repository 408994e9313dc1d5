"""How the engine's patch modules register (onceflow/engine/registry.py): every module with patches
is in PATCH_ORDER once, asks only for what the engine offers, and a speed-up names its switches."""

from __future__ import annotations

import importlib
import threading
from types import ModuleType

import pytest

from onceflow.engine import registry, speedups
from onceflow.engine.moto_shape import engine_modules


def _modules_with_patches() -> set[str]:
    found = set()
    for name in engine_modules():
        module = importlib.import_module(name)
        if callable(getattr(module, "patches", None)) and name != registry.__name__:
            found.add(name)
    return found


def test_every_module_with_patches_is_in_the_order_once():
    listed = [f"onceflow.engine.{name}" for name in registry.PATCH_ORDER]
    assert len(listed) == len(set(listed))
    assert set(listed) == _modules_with_patches()


def test_each_module_asks_only_for_what_the_engine_offers():
    for module in registry.patch_modules():
        assert set(registry.asked(module)) <= registry.ENGINE_OFFERS


def test_an_unknown_request_is_refused_naming_the_module():
    module = ModuleType("onceflow.engine.example")
    module.patches = lambda calendar: []  # type: ignore[attr-defined]
    with pytest.raises(registry.PatchModuleError, match=r"onceflow\.engine\.example\.patches asks for \['calendar'\]"):
        registry.asked(module)


def test_speed_ups_and_only_they_name_their_switches():
    """Every switch is named by a module of speedups/: a patch module, or one the engine calls itself
    because it patches nothing (collector_thresholds: the garbage collector is not an attribute)."""
    switched = {}
    for module in registry.patch_modules():
        is_speedup = module.__name__.startswith(speedups.__name__ + ".")
        assert hasattr(module, "SPEEDUPS") == is_speedup, module.__name__
    for name in engine_modules():
        module = importlib.import_module(name)
        if name.startswith(speedups.__name__ + ".") and hasattr(module, "SPEEDUPS"):
            switched[name] = set(module.SPEEDUPS)
    assert set().union(*switched.values()) == set(speedups.NAMES)
    unpatched = set(switched) - {module.__name__ for module in registry.patch_modules()}
    assert unpatched == {"onceflow.engine.speedups.collector_thresholds"}


def test_a_speed_up_switched_off_contributes_nothing():
    lock = threading.RLock()
    every = registry.patches(speedups=True, request_lock=lock)
    without = registry.patches(speedups=set(speedups.NAMES) - {speedups.PARSE_CACHE}, request_lock=lock)
    parse_cache = importlib.import_module("onceflow.engine.speedups.parse_cache")
    assert len(every) - len(without) == len(parse_cache.patches())


def test_a_later_module_wraps_what_the_earlier_ones_left():
    """`before` is the list as it stands at the module's turn: StartExecution, patched first by
    stepfunctions.strict, is wrapped last by bookkeeping.quotas."""
    from moto.stepfunctions.responses import StepFunctionResponse

    from onceflow.engine.bookkeeping.quotas import QuotaSwitch

    applied = registry.patches(request_lock=threading.RLock(), quotas=QuotaSwitch(None))
    starts = [value for owner, name, value in applied if owner is StepFunctionResponse and name == "start_execution"]
    assert [value.__module__ for value in starts] == [
        "onceflow.engine.stepfunctions.strict",
        "onceflow.engine.bookkeeping.quotas",
    ]
