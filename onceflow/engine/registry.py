"""Which patches of moto the engine applies, in which order, and what each is given.

A patch module (a behaviour of AWS, a speed-up, some bookkeeping) lives in the folder of what it
emulates and has:
- `moto_needs()`: what it replaces or calls in the pinned moto; moto_shape.py checks every engine
  module's before anything is patched;
- `patches(...)`: its (owner, attribute, replacement) triples. Its parameters name what it needs of
  the engine (ENGINE_OFFERS): `before`, the patches listed ahead of it, whose replacements it may
  wrap (`current(before, owner, name)`); `request_lock`, the server's request lock; `speedups`, the
  speed-ups switched on; `quotas`, the QuotaSwitch of `EmbeddedAws(quotas=...)`; `clock`, the
  server's DelayClock (its `time_scale`); `iam`, the IamSwitch of `EmbeddedAws(iam=...)` (iam/decide.py);
- a speed-up also has `SPEEDUPS`, the switches that turn it on; it is left out when none is on.

PATCH_ORDER lists the patch modules in the order `EmbeddedAws.start()` applies them (and restores
them in reverse on stop). The order matters where two modules patch the same attribute: the later
one wraps the earlier one's replacement, read from `before`. A new behaviour is a module in its
folder and a line here; tests/engine/test_registry.py fails on a patch module that is not listed.
"""

from __future__ import annotations

import importlib
import inspect
import threading
from collections.abc import Iterable
from types import ModuleType
from typing import Any

from onceflow.engine import speedups as engine_speedups

Patch = tuple[Any, str, Any]
ENGINE_OFFERS = frozenset({"before", "request_lock", "speedups", "quotas", "clock", "iam"})

# Module paths under onceflow.engine. "then X wraps" notes an attribute a later module wraps.
PATCH_ORDER = (
    # Always on, first: StartExecution, DescribeExecution and StopExecution as strict as AWS (then
    # executions, qualified_executions, express_executions and quotas wrap them).
    "stepfunctions.strict",
    # A JSON-protocol body is the request's parameters, never a query string (every service).
    "protocols.json_bodies",
    # Task states call as the state machine's role (then integration_clients replaces the same names,
    # with clients signed the same way).
    "iam.task_credentials",
    # The speed-ups, each switched by EmbeddedAws(speedups=...): speedups/__init__.py.
    "speedups.parse_cache",
    "speedups.integration_clients",
    "speedups.jsonpath_cache",
    "speedups.sqs_fast_paths",
    "speedups.dispatch_cache",
    "speedups.item_rollback",
    "speedups.direct_transport",
    "speedups.unsigned_local_calls",
    "speedups.execution_index",
    "speedups.plain_updates",  # then index_query and key_schema wrap its DynamoDBBackend.update_item
    "speedups.index_query",
    "speedups.serializer_fast_paths",
    "speedups.idle_gates",
    "speedups.request_headers",
    "speedups.backend_lookup",
    "speedups.json_lane",
    "speedups.inline_tasks",
    "speedups.update_expressions",
    "speedups.update_validation",  # wraps update_expressions' UpdateExpressionParser.make
    "speedups.name_cases",
    "speedups.condition_expressions",
    "speedups.request_plans",
    "speedups.json_copies",
    "speedups.request_reads",
    "speedups.sns_signing",
    "speedups.item_sizes",
    # S3 (the REST protocols): structures written through moto's path, not serializer_fast_paths'.
    "s3.rest_bodies",
    # Marks executions whose history a history budget may prune (then execution_metrics and
    # status_events wrap its `terminated`).
    "bookkeeping.retention",
    "bookkeeping.execution_snapshots",
    # The evaluation environment (then context_object, execution_input_text, qualified_executions wrap it).
    "stepfunctions.api.stop_execution",
    # Step Functions Local's mocked integrations, `stateMachineArn#TestCase` (then executions and
    # qualified_executions wrap its StartExecution).
    "stepfunctions.mocking.moto_engine",
    "dynamodb.transact_get",
    "dynamodb.responses",
    "sns.fifo",  # SNS publish (then quotas wraps it)
    "stepfunctions.interpreter.asl_strings",
    "stepfunctions.jsonata.expressions",  # the history's add_event (then qualified_executions wraps it)
    "stepfunctions.interpreter.variables",
    "stepfunctions.test_state.action",
    "stepfunctions.test_state.context",
    "stepfunctions.api.redrive_execution",
    "stepfunctions.api.sync_execution",  # StartSyncExecution (then quotas wraps it)
    "stepfunctions.interpreter.context_object",
    "stepfunctions.interpreter.execution_input_text",
    "stepfunctions.interpreter.map_run_events",
    "stepfunctions.interpreter.item_reader_s3",
    "stepfunctions.interpreter.parallel_aborts",
    # Execution, task and heartbeat deadlines on one time line, whatever the time scale (wraps the
    # server's Wait).
    "stepfunctions.interpreter.deadlines",
    "stepfunctions.jsonata.retried_states",
    "stepfunctions.api.executions",  # (then qualified_executions, express_executions wrap its answers)
    "stepfunctions.api.activities",
    "stepfunctions.api.task_tokens",
    "stepfunctions.api.state_machines",  # Create/UpdateStateMachine (then versions, logging_configuration wrap them)
    "stepfunctions.api.versions",
    "stepfunctions.api.aliases",
    "stepfunctions.api.qualified_executions",
    "stepfunctions.api.logging_configuration",
    "logs.execution_logs",  # Execution.start (then express_executions, execution_metrics, status_events wrap it)
    "stepfunctions.api.express_executions",
    "stepfunctions.api.request_constraints",
    "stepfunctions.api.definition_validation",
    "stepfunctions.integrations.sdk_shapes",
    "stepfunctions.integrations.sync_executions",  # wraps sdk_shapes' _normalise_response
    "stepfunctions.integrations.service_errors",  # the SQS task (then response_metadata wraps it)
    "dynamodb.validation",  # the DynamoDB task (then response_metadata wraps it)
    "dynamodb.key_schema",  # wraps validation's DynamoHandler.call_action and item_rollback's transactions
    "stepfunctions.integrations.events_task",
    "stepfunctions.integrations.s3_task",  # wraps integration_clients' boto_client_for
    "events.put_events",
    "secretsmanager.secret_names",
    "stepfunctions.integrations.response_metadata",
    "cloudformation.state_machines",
    "cloudformation.json_templates",
    "s3.defaults",
    "sqs.fifo",
    "sqs.long_poll",
    "sqs.receipts",  # ChangeMessageVisibility (then visibility, sqs_counts wrap it)
    "sqs.visibility",
    "speedups.sqs_counts",  # the sqs_fast_paths switch's queue counts, after sqs.visibility
    "cloudwatch.execution_metrics",
    "events.status_events",
    # AWS::SQS::QueuePolicy and AWS::SNS::TopicPolicy, which moto's CloudFormation skips.
    "cloudformation.resource_policies",
    # IAM as AWS enforces it: every request authorized (then quotas wraps nothing of it), SNS's
    # deliveries to SQS as sns.amazonaws.com against the queue's policy.
    "iam.enforcement",
    "iam.sns_delivery",
    # Last: the throughput quotas wrap the engine's own StartExecution, StartSyncExecution and Publish.
    "bookkeeping.quotas",
)


class PatchModuleError(TypeError):
    """A patch module asks for something the engine does not offer."""


def current(before: Iterable[Patch], owner: Any, name: str) -> Any:
    """`owner.name` as the patches in `before` leave it (they are applied together, after the list is
    built): the last replacement there, else moto's own attribute (None when there is none)."""
    replaced = [value for patched, attribute, value in before if patched is owner and attribute == name]
    return replaced[-1] if replaced else getattr(owner, name, None)


def patch_modules() -> list[ModuleType]:
    """The modules of PATCH_ORDER, in that order."""
    return [importlib.import_module(f"{__package__}.{name}") for name in PATCH_ORDER]


def asked(module: ModuleType) -> list[str]:
    """What the module's `patches` asks the engine for, by its parameters' names."""
    names = list(inspect.signature(module.patches).parameters)
    unknown = sorted(set(names) - ENGINE_OFFERS)
    if unknown:
        raise PatchModuleError(
            f"{module.__name__}.patches asks for {unknown}; the engine offers {sorted(ENGINE_OFFERS)}"
        )
    return names


def patches(
    speedups: bool | str | Iterable[str] = True,
    request_lock: threading.RLock | None = None,
    quotas: Any = None,
    clock: Any = None,
    iam: Any = None,
) -> list[Patch]:
    """Every module's patches, in PATCH_ORDER; `before` is the list as it stands when a module's turn
    comes, the same list object throughout."""
    selected: list[Patch] = []
    chosen = engine_speedups.resolve(speedups)
    offered = {
        "before": selected,
        "request_lock": request_lock,
        "speedups": chosen,
        "quotas": quotas,
        "clock": clock,
        "iam": iam,
    }
    for module in patch_modules():
        switches = getattr(module, "SPEEDUPS", None)
        if switches is not None and not chosen.intersection(switches):
            continue
        selected += module.patches(**{name: offered[name] for name in asked(module)})
    return selected
