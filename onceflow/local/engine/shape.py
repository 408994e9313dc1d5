"""One check that the installed moto is the version, and has the shape, the embedded engine's
patches were written for. A different moto fails loudly here, before anything is patched.

Each module that patches moto declares what it relies on in a `moto_needs()` function (the
attributes it replaces or calls, and the parameters it passes by name); `check_engine()` checks the
engine's own modules, and a module outside the engine (a devtool) calls `check()` with its own.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import moto

PINNED_MOTO_VERSION = "5.2.5"

# The modules whose `moto_needs()` EmbeddedAws checks before it starts.
ENGINE_MODULES = (
    "onceflow.local.embedded",
    "onceflow.local.engine.speedups",
    "onceflow.local.engine.direct_transport",
    "onceflow.local.engine.keep_alive",
    "onceflow.local.engine.serializer_fast_paths",
    "onceflow.local.engine.idle_gates",
    "onceflow.local.engine.request_headers",
    "onceflow.local.engine.json_lane",
    "onceflow.local.engine.strict",
    "onceflow.local.engine.retention",
    "onceflow.local.engine.stop_execution",
    "onceflow.local.engine.execution_index",
    "onceflow.local.engine.sqs_receipts",
    "onceflow.local.engine.execution_snapshots",
    "onceflow.local.engine.log_budget",
    "onceflow.local.engine.index_query",
    "onceflow.local.engine.transact_get",
    "onceflow.local.engine.dynamodb_responses",
    "onceflow.local.engine.sns_fifo",
    "onceflow.local.engine.asl_strings",
    "onceflow.local.engine.jsonata_states",
    "onceflow.local.engine.variables",
    "onceflow.local.engine.test_state",
    "onceflow.local.engine.test_state_context",
    "onceflow.local.engine.redrive_execution",
    "onceflow.local.engine.sync_execution",
    "onceflow.local.engine.context_object",
    "onceflow.local.engine.execution_input_text",
    "onceflow.local.engine.map_run_events",
    "onceflow.local.engine.execution_api",
    "onceflow.local.engine.state_machine_api",
    "onceflow.local.engine.versions",
    "onceflow.local.engine.aliases",
    "onceflow.local.engine.qualified_executions",
    "onceflow.local.engine.logging_configuration",
    "onceflow.local.engine.execution_logs",
    "onceflow.local.engine.express_executions",
    "onceflow.local.engine.definition_validation",
    "onceflow.local.engine.request_constraints",
    "onceflow.local.engine.sdk_shapes",
    "onceflow.local.engine.service_errors",
    "onceflow.local.engine.dynamodb_validation",
    "onceflow.local.engine.secret_names",
    "onceflow.local.engine.integration_metadata",
    "onceflow.local.engine.cloudformation_state_machines",
    "onceflow.local.engine.sqs_fifo",
    "onceflow.local.engine.sqs_long_poll",
    "onceflow.local.engine.sqs_visibility",
    "onceflow.local.engine.sqs_counts",
    "onceflow.local.engine.execution_metrics",
    "onceflow.local.engine.status_events",
    "onceflow.local.engine.quotas",
    "onceflow.local.mocking.moto_engine",
)


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


def check_engine(modules: Iterable[str] = ENGINE_MODULES) -> None:
    """Check every engine module's declared needs (the version first: an import may already fail)."""
    check_version("onceflow.local.engine")
    for name in modules:
        # A module not (yet) in this tree patches nothing; one that is must declare its needs.
        if importlib.util.find_spec(name) is not None:
            check(declared_needs(importlib.import_module(name)), name)


def declared_needs(module: Any) -> list[Need]:
    """A module's `moto_needs()`, or its `check_shape()` (owner, attribute) pairs; a patch module
    that declares neither is an error, not an unchecked patch."""
    if hasattr(module, "moto_needs"):
        return list(module.moto_needs())
    if hasattr(module, "check_shape"):
        return [Need(owner, attribute) for owner, attribute in module.check_shape()]
    raise MotoShapeError(f"{module.__name__} patches moto but declares no moto_needs(); add one")
