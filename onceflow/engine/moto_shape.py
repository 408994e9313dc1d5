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
    "onceflow.engine.server",
    "onceflow.engine.speedups.parse_cache",
    "onceflow.engine.speedups.integration_clients",
    "onceflow.engine.speedups.jsonpath_cache",
    "onceflow.engine.speedups.sqs_fast_paths",
    "onceflow.engine.speedups.dispatch_cache",
    "onceflow.engine.speedups.item_rollback",
    "onceflow.engine.speedups.backend_lookup",
    "onceflow.engine.bookkeeping.baseline",
    "onceflow.engine.speedups.direct_transport",
    "onceflow.engine.speedups.keep_alive",
    "onceflow.engine.speedups.serializer_fast_paths",
    "onceflow.engine.speedups.idle_gates",
    "onceflow.engine.speedups.request_headers",
    "onceflow.engine.speedups.json_lane",
    "onceflow.engine.stepfunctions.strict",
    "onceflow.engine.bookkeeping.retention",
    "onceflow.engine.stepfunctions.api.stop_execution",
    "onceflow.engine.speedups.execution_index",
    "onceflow.engine.sqs.receipts",
    "onceflow.engine.bookkeeping.execution_snapshots",
    "onceflow.engine.bookkeeping.log_budget",
    "onceflow.engine.speedups.index_query",
    "onceflow.engine.dynamodb.transact_get",
    "onceflow.engine.dynamodb.responses",
    "onceflow.engine.sns.fifo",
    "onceflow.engine.stepfunctions.interpreter.asl_strings",
    "onceflow.engine.stepfunctions.jsonata.expressions",
    "onceflow.engine.stepfunctions.interpreter.variables",
    "onceflow.engine.stepfunctions.test_state.action",
    "onceflow.engine.stepfunctions.test_state.context",
    "onceflow.engine.stepfunctions.api.redrive_execution",
    "onceflow.engine.stepfunctions.api.sync_execution",
    "onceflow.engine.stepfunctions.interpreter.context_object",
    "onceflow.engine.stepfunctions.interpreter.execution_input_text",
    "onceflow.engine.stepfunctions.interpreter.map_run_events",
    "onceflow.engine.stepfunctions.api.executions",
    "onceflow.engine.stepfunctions.api.state_machines",
    "onceflow.engine.stepfunctions.api.versions",
    "onceflow.engine.stepfunctions.api.aliases",
    "onceflow.engine.stepfunctions.api.qualified_executions",
    "onceflow.engine.stepfunctions.api.logging_configuration",
    "onceflow.engine.logs.execution_logs",
    "onceflow.engine.stepfunctions.api.express_executions",
    "onceflow.engine.stepfunctions.api.definition_validation",
    "onceflow.engine.stepfunctions.api.request_constraints",
    "onceflow.engine.stepfunctions.integrations.sdk_shapes",
    "onceflow.engine.stepfunctions.integrations.service_errors",
    "onceflow.engine.dynamodb.validation",
    "onceflow.engine.secretsmanager.secret_names",
    "onceflow.engine.stepfunctions.integrations.response_metadata",
    "onceflow.engine.cloudformation.state_machines",
    "onceflow.engine.sqs.fifo",
    "onceflow.engine.sqs.long_poll",
    "onceflow.engine.sqs.visibility",
    "onceflow.engine.speedups.sqs_counts",
    "onceflow.engine.cloudwatch.execution_metrics",
    "onceflow.engine.events.status_events",
    "onceflow.engine.bookkeeping.quotas",
    "onceflow.engine.stepfunctions.mocking.moto_engine",
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
    check_version("onceflow.engine")
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
