"""Patches of moto's Step Functions, DynamoDB, SNS and SQS engines, each checked against the pinned
moto version before it is applied. `patches()` is the one list `EmbeddedAws.start()` applies (and
restores on stop); each module below contributes its own (owner, attribute, replacement) triples.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

Patch = tuple[Any, str, Any]


def current(before: Iterable[Patch], owner: Any, name: str) -> Any:
    """`owner.name` as the patches in `before` leave it (they are applied together, after the list is
    built): the last replacement there, else moto's own attribute (None when there is none)."""
    replaced = [value for patched, attribute, value in before if patched is owner and attribute == name]
    return replaced[-1] if replaced else getattr(owner, name, None)


def patches(
    speedups: bool | str | Iterable[str] = True,
    request_lock: threading.RLock | None = None,
    quotas: Any = None,
) -> list[Patch]:
    from onceflow.engine import speedups as speedup_patches
    from onceflow.engine.bookkeeping import retention
    from onceflow.engine.stepfunctions import mocking

    selected: list[Patch] = []
    selected += __import__(
        "onceflow.engine.stepfunctions.strict", fromlist=["patches"]
    ).patches()  # always on: strict.py
    # Each switchable (EmbeddedAws(speedups=...), ONCEFLOW_SPEEDUPS_OFF): onceflow/engine/speedups/__init__.py.
    chosen = speedup_patches.resolve(speedups)
    selected += speedup_patches.patches(chosen, request_lock)
    selected += retention.patches()  # marks executions whose history a history budget may prune
    # One snapshot of a state machine per revision, not a deep copy per execution: execution_snapshots.py.
    selected += __import__("onceflow.engine.bookkeeping.execution_snapshots", fromlist=["patches"]).patches()
    # StopExecution's ExecutionAborted is in the history however early it comes: stop_execution.py.
    selected += __import__("onceflow.engine.stepfunctions.api.stop_execution", fromlist=["patches"]).patches()
    # Step Functions Local's mocked integrations: start `stateMachineArn#TestCase` (SFN_MOCK_CONFIG).
    selected += mocking.moto_patches()
    # TransactGetItems honours ProjectionExpression (the workflow's look-up): onceflow/engine/dynamodb/transact_get.py.
    from onceflow.engine.dynamodb import transact_get

    selected += transact_get.patches()
    # UpdateItem answers ConsumedCapacity only when asked: onceflow/engine/dynamodb/responses.py.
    from onceflow.engine.dynamodb import responses as dynamodb_responses

    selected += dynamodb_responses.patches()
    # SNS FIFO topics drop duplicates within 5 minutes and take SQS subscribers only: sns_fifo.py.
    from onceflow.engine.sns import fifo as sns_fifo

    selected += sns_fifo.patches()
    # Assign's string literals with JSON escapes read as JSON reads them: onceflow/engine/stepfunctions/interpreter/asl_strings.py.
    from onceflow.engine.stepfunctions.interpreter import asl_strings

    selected += asl_strings.patches()
    # JSONata ({% %}, $states, variables) evaluated as AWS does: onceflow/engine/stepfunctions/jsonata/expressions.py.
    from onceflow.engine.stepfunctions.jsonata import expressions as jsonata_states

    selected += jsonata_states.patches()
    # assignedVariables as JSON text in the history: onceflow/engine/stepfunctions/interpreter/variables.py.
    from onceflow.engine.stepfunctions.interpreter import variables

    selected += variables.patches()
    # TestState (single state or stateName, mocks, Retry/Catch outcomes): onceflow/engine/stepfunctions/test_state/action.py.
    from onceflow.engine.stepfunctions.test_state import action as test_state

    selected += test_state.moto_patches(request_lock)
    # TestState's `context` is `$$` as given: onceflow/engine/stepfunctions/test_state/context.py.
    from onceflow.engine.stepfunctions.test_state import context as test_state_context

    selected += test_state_context.patches()
    # RedriveExecution (resume at the unsuccessful state, history kept, redrive fields): redrive_execution.py.
    from onceflow.engine.stepfunctions.api import redrive_execution

    selected += redrive_execution.moto_patches()
    # StartSyncExecution (Express, returns when the execution ends): onceflow/engine/stepfunctions/api/sync_execution.py.
    from onceflow.engine.stepfunctions.api import sync_execution

    selected += sync_execution.moto_patches(request_lock)
    # $$.Execution.StartTime as ISO text, $$.Execution.RedriveCount: onceflow/engine/stepfunctions/interpreter/context_object.py.
    from onceflow.engine.stepfunctions.interpreter import context_object

    selected += context_object.patches(selected)
    # ExecutionStarted's input is the caller's text, not re-serialised: execution_input_text.py.
    from onceflow.engine.stepfunctions.interpreter import execution_input_text

    selected += execution_input_text.patches(selected)
    # A Distributed Map's MapStateExited links to its MapRunStarted, as AWS records it: map_run_events.py.
    from onceflow.engine.stepfunctions.interpreter import map_run_events

    selected += map_run_events.patches(selected)
    # The execution APIs as AWS answers them (unnamed executions, ...): onceflow/engine/stepfunctions/api/executions.py.
    from onceflow.engine.stepfunctions.api import executions as execution_api

    selected += execution_api.patches(selected)
    # Create/Update/DescribeStateMachine as AWS answers them (idempotency, revisionId): state_machine_api.py.
    from onceflow.engine.stepfunctions.api import state_machines as state_machine_api

    selected += state_machine_api.patches()
    # Versions and aliases (Publish/List/DeleteStateMachineVersion, the alias APIs), and executions
    # started with their ARNs: versions.py, aliases.py, qualified_executions.py.
    from onceflow.engine.stepfunctions.api import aliases, qualified_executions, versions

    selected += versions.patches(selected)
    selected += aliases.patches()
    selected += qualified_executions.patches(selected)
    # Create/UpdateStateMachine refuse a loggingConfiguration AWS refuses: logging_configuration.py.
    from onceflow.engine.stepfunctions.api import logging_configuration

    selected += logging_configuration.patches(selected)
    # An execution logs its history events to the configured log group: execution_logs.py.
    from onceflow.engine.logs import execution_logs

    selected += execution_logs.patches(selected)
    # StartExecution of an Express machine answers an Express execution ARN: express_executions.py.
    from onceflow.engine.stepfunctions.api import express_executions

    selected += express_executions.patches(selected)
    # List* / GetExecutionHistory refuse what the API model's constraints refuse: request_constraints.py.
    from onceflow.engine.stepfunctions.api import request_constraints

    selected += request_constraints.patches()
    # ValidateStateMachineDefinition with AWS's diagnostics: onceflow/engine/stepfunctions/api/definition_validation.py.
    from onceflow.engine.stepfunctions.api import definition_validation

    selected += definition_validation.patches()
    # Task parameters and results in the casing of the service's API model: sdk_shapes.py.
    from onceflow.engine.stepfunctions.integrations import sdk_shapes

    selected += sdk_shapes.patches()
    # A service's errors under its own error name (SQS.AmazonSQSException, ...): service_errors.py.
    from onceflow.engine.stepfunctions.integrations import service_errors

    selected += service_errors.patches()
    # DynamoDB's table-name and required-member validation, its unmodeled errors' name: dynamodb_validation.py.
    from onceflow.engine.dynamodb import validation as dynamodb_validation

    selected += dynamodb_validation.patches()
    # Secrets Manager refuses a secret name outside its character set: secret_names.py.
    from onceflow.engine.secretsmanager import secret_names

    selected += secret_names.patches()
    # Optimised SQS/SNS/DynamoDB results carry SdkHttpMetadata/SdkResponseMetadata: integration_metadata.py.
    from onceflow.engine.stepfunctions.integrations import response_metadata as integration_metadata

    selected += integration_metadata.patches(selected)
    # CloudFormation's AWS::StepFunctions::StateMachine in the backend the API reads: cloudformation_state_machines.py.
    from onceflow.engine.cloudformation import state_machines as cloudformation_state_machines

    selected += cloudformation_state_machines.patches()
    # SQS FIFO queues as AWS runs them (CloudFormation's .fifo names): onceflow/engine/sqs/fifo.py.
    from onceflow.engine.sqs import fifo as sqs_fifo

    selected += sqs_fifo.moto_patches()
    # A ReceiveMessage long poll lets the other requests run while it waits: sqs_long_poll.py.
    from onceflow.engine.sqs import long_poll as sqs_long_poll

    selected += sqs_long_poll.patches(request_lock)
    # Receipt handles found through an index, none kept of deleted messages: sqs_receipts.py.
    from onceflow.engine.sqs import receipts as sqs_receipts

    selected += sqs_receipts.patches()
    # A consumer's ChangeMessageVisibility noted for the emulated event source: sqs_visibility.py.
    from onceflow.engine.sqs import visibility as sqs_visibility

    selected += sqs_visibility.moto_patches(selected)
    # sqs_fast_paths, after sqs_visibility.py: the queue counts without a walk of the queue: sqs_counts.py.
    if speedup_patches.SQS_FAST_PATHS in chosen:
        from onceflow.engine.speedups import sqs_counts

        selected += sqs_counts.patches(selected)
    # AWS/States execution metrics (ExecutionsStarted, ...) in the embedded CloudWatch: execution_metrics.py.
    from onceflow.engine.cloudwatch import execution_metrics

    selected += execution_metrics.patches(selected)
    # Execution status change events to the default bus's rules' SQS/SNS targets: status_events.py.
    from onceflow.engine.events import status_events

    selected += status_events.patches(selected, request_lock)
    # AWS's throughput quotas as token buckets, when asked (EmbeddedAws(quotas=...)): quotas.py. Last:
    # it wraps the engine's own StartSyncExecution.
    from onceflow.engine.bookkeeping import quotas as engine_quotas

    selected += engine_quotas.moto_patches(quotas, selected)
    return selected
