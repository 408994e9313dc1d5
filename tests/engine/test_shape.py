"""One check of moto's version and shape (onceflow/engine/moto_shape.py): a moto other than the
pinned one, or one whose internals moved, stops the embedded engine before anything is patched."""

from __future__ import annotations

import importlib

import moto
import pytest

from onceflow.engine import EmbeddedAws, moto_shape, registry
from onceflow.engine.moto_shape import (
    MotoShapeError,
    Need,
    check,
    declared_needs,
    declares_needs,
    engine_modules,
    need,
)


class _Owner:
    def method(self, env: object, value: object) -> None: ...


def _declaring() -> list[str]:
    return [name for name in engine_modules() if declares_needs(importlib.import_module(name))]


def test_every_engine_module_declares_what_it_needs_and_this_moto_has_it():
    declaring = _declaring()
    assert {module.__name__ for module in registry.patch_modules()} <= set(declaring)
    # Modules that patch moto outside the patch list are found too.
    assert {"onceflow.engine.server", "onceflow.engine.bookkeeping.baseline"} <= set(declaring)
    for name in declaring:
        needs = declared_needs(importlib.import_module(name))
        assert needs, f"{name} declares nothing"
        assert [n.missing() for n in needs if n.missing()] == [], name


def test_a_different_moto_version_is_refused_before_anything_is_patched(monkeypatch):
    monkeypatch.setattr(moto, "__version__", "5.3.0")
    with pytest.raises(MotoShapeError, match=r"patches moto 5\.2\.5 but moto 5\.3\.0 is installed"):
        EmbeddedAws()


def test_a_missing_attribute_is_named_with_the_module_that_needs_it():
    with pytest.raises(MotoShapeError, match=r"_Owner\.gone is gone; re-check onceflow\.example"):
        check([need(_Owner, "method"), need(_Owner, "gone")], "onceflow.example")


def test_a_lost_parameter_is_named():
    with pytest.raises(MotoShapeError, match=r"_Owner\.method lost the parameters \['raw_parameters'\]"):
        check([need(_Owner, "method", "env", "raw_parameters")], "onceflow.example")
    check([need(_Owner, "method", "env", "value")], "onceflow.example")


def test_a_patch_module_that_declares_nothing_is_an_error():
    undeclared = type(importlib)("onceflow.engine.undeclared")
    with pytest.raises(MotoShapeError, match="declares no moto_needs"):
        declared_needs(undeclared)


def test_the_engine_check_fails_on_a_module_whose_moto_moved(monkeypatch):
    from onceflow.engine.stepfunctions import strict

    monkeypatch.setattr(strict, "moto_needs", lambda: [Need(_Owner, "moved_away")])
    with pytest.raises(MotoShapeError, match=r"re-check onceflow\.engine\.stepfunctions\.strict"):
        moto_shape.check_engine()


def test_devtools_that_patch_moto_use_the_same_check():
    from onceflow.devtools.schedules import hooks

    assert [n.missing() for n in hooks.moto_needs() if n.missing()] == []
    hooks.check_moto_shape()


def test_every_module_with_patches_of_its_own_is_checked():
    """A patch whose replacement is defined in onceflow belongs to a module the shape check covers."""
    import threading

    defined_in = {
        getattr(replacement, "__module__", "") for _, _, replacement in registry.patches(request_lock=threading.RLock())
    }
    ours = {name for name in defined_in if name.startswith("onceflow.")}
    assert ours, "the engine applies patches of its own"
    assert ours <= set(_declaring()), f"declare no moto_needs(): {sorted(ours - set(_declaring()))}"
