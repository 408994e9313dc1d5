"""One check that the installed moto is the version, and has the shape, the embedded engine's
patches were written for. A different moto fails loudly here, before anything is patched.

Each module that patches moto declares what it relies on in a `moto_needs()` function (the
attributes it replaces or calls, and the parameters it passes by name); `check_engine()` checks
every module of onceflow.engine that declares them (a module of registry.PATCH_ORDER must), and a
module outside the engine (a devtool) calls `check()` with its own.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import moto

PINNED_MOTO_VERSION = "5.2.5"


class MotoShapeError(RuntimeError):
    """The installed moto is not the one the patches were checked against."""


@dataclass(frozen=True)
class Need:
    """`owner.attribute` must exist and, when it is callable, accept `parameters` by name."""

    owner: Any
    attribute: str
    parameters: tuple[str, ...] = ()

    def missing(self) -> str | None:
        """What is wrong, or None."""
        name = f"{getattr(self.owner, '__name__', self.owner)}.{self.attribute}"
        if not hasattr(self.owner, self.attribute):
            return f"{name} is gone"
        if not self.parameters:
            return None
        try:
            accepted = inspect.signature(getattr(self.owner, self.attribute)).parameters
        except (TypeError, ValueError):
            return f"{name} has no inspectable signature"
        lost = [p for p in self.parameters if p not in accepted]
        return f"{name} lost the parameters {lost}" if lost else None


def need(owner: Any, attribute: str, *parameters: str) -> Need:
    return Need(owner, attribute, tuple(parameters))


def check_version(patched_by: str) -> None:
    if moto.__version__ != PINNED_MOTO_VERSION:
        raise MotoShapeError(
            f"{patched_by} patches moto {PINNED_MOTO_VERSION} but moto {moto.__version__} is installed; "
            f"install the pinned version (pip install -e .) or re-check the patches in {patched_by}"
        )


def check(needs: Iterable[Need], patched_by: str) -> None:
    """Raise MotoShapeError naming everything `patched_by` relies on that this moto lacks."""
    check_version(patched_by)
    problems = [problem for problem in (n.missing() for n in needs) if problem]
    if problems:
        raise MotoShapeError(f"moto changed shape: {'; '.join(problems)}; re-check {patched_by}")


def check_engine() -> None:
    """Check every engine module's declared needs (the version first: an import may already fail)."""
    check_version("onceflow.engine")
    from onceflow.engine import registry

    patching = {f"onceflow.engine.{name}" for name in registry.PATCH_ORDER}
    for name in engine_modules():
        module = importlib.import_module(name)
        if name in patching or declares_needs(module):
            check(declared_needs(module), name)


@functools.cache
def engine_modules() -> tuple[str, ...]:
    """Every module of onceflow.engine but its command-line entry points (`__main__`)."""
    import onceflow.engine

    found = pkgutil.walk_packages(onceflow.engine.__path__, "onceflow.engine.")
    return tuple(module.name for module in found if not module.name.endswith(".__main__"))


def declares_needs(module: Any) -> bool:
    return hasattr(module, "moto_needs") or hasattr(module, "check_shape")


def declared_needs(module: Any) -> list[Need]:
    """A module's `moto_needs()`, or its `check_shape()` (owner, attribute) pairs; a patch module
    that declares neither is an error, not an unchecked patch."""
    if hasattr(module, "moto_needs"):
        return list(module.moto_needs())
    if hasattr(module, "check_shape"):
        return [Need(owner, attribute) for owner, attribute in module.check_shape()]
    raise MotoShapeError(f"{module.__name__} patches moto but declares no moto_needs(); add one")
