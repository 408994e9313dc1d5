"""A Task that succeeds after a Retry has its result in `$states.result`, as on a first attempt.

Each failed attempt leaves its error as `$states.errorOutput` (moto keeps it for a Catch); the
engine's `$states` has `errorOutput` in a Catch only and then no `result` (expressions.py), so after
a retried failure the attempt that succeeded had no `$states.result`: the LocalStack docs' JSONata
mock example (LambdaRetryCase: three mocked errors, then the mocked Return) failed its
`Assign: {"greeting": "{% $states.result.Payload.greeting %}"}` with States.QueryEvaluationError
("returned nothing (undefined)"), its `States.ALL` Retry ran a fifth attempt and the execution
failed States.Runtime. A retry starts the attempt afresh: no errorOutput, no result.

https://docs.aws.amazon.com/step-functions/latest/dg/transforming-data.html ($states.result: "the
result of the task", $states.errorOutput: "available only in Catch"); the example:
https://docs.localstack.cloud/aws/services/stepfunctions/ ("Mocked Service Integrations").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from moto.stepfunctions.parser.asl.component.common.retry.retry_outcome import RetryOutcome
from moto.stepfunctions.parser.asl.component.state.exec.execute_state import ExecutionState

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import current

Patch = tuple[Any, str, Any]


def moto_needs() -> list[Need]:
    return [need(ExecutionState, "_handle_retry", "env", "failure_event"), need(RetryOutcome, "CanRetry")]


def patches(before: Sequence[Patch] = ()) -> list[Patch]:
    original = current(before, ExecutionState, "_handle_retry")

    def _handle_retry(self: ExecutionState, env: Any, failure_event: Any) -> Any:
        outcome = original(self, env=env, failure_event=failure_event)
        if outcome == RetryOutcome.CanRetry:
            env.states._states_data["errorOutput"] = None
            env.states._states_data["result"] = None
        return outcome

    return [(ExecutionState, "_handle_retry", _handle_retry)]
