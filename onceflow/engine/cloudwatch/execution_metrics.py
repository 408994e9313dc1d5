"""Step Functions' execution metrics in the embedded CloudWatch, as AWS publishes them.

On AWS, Step Functions publishes to CloudWatch, in the namespace `AWS/States` with the dimension
`StateMachineArn`, one count per execution that started (`ExecutionsStarted`), was redriven
(`ExecutionsRedriven`) and ended: `ExecutionsSucceeded`, `ExecutionsFailed`, `ExecutionsAborted`,
`ExecutionsTimedOut` (unit Count; read them with the Sum statistic), at one-minute resolution
(https://docs.aws.amazon.com/step-functions/latest/dg/procedure-cw-metrics.html, "Execution
metrics" and "Dimension for Step Functions execution metrics"). moto publishes none, so a client
that counts executions the way one does on AWS (GetMetricData, GetMetricStatistics) found nothing,
and `onceflow status` listed every execution to count them, in time that grew with the run
(issue 21).

Here each start, redrive and end of an execution adds one to its metric's datum of that minute:
one aggregated datum (a statistic set: sum, sample count, minimum, maximum) per metric, state
machine and minute, kept in moto's CloudWatch backend, which answers GetMetricData and
GetMetricStatistics from it. What is kept grows with the minutes a run lasts, not with its
executions. AWS delivers these metrics on a best-effort basis (a data point may come late, or
not at all); here every one is delivered at once.

Patched in moto: `Execution.start` (StartExecution, StartSyncExecution) and
`BaseExecutionWorkerCommunication.terminated` (where moto sets an execution's final status; after
engine/bookkeeping/retention.py's own wrapper); in the engine, `redrive_execution.RedriveWorker.start`.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import Any

from moto.cloudwatch.models import CloudWatchBackend, MetricAggregatedDatum, cloudwatch_backends
from moto.stepfunctions.parser.api import ExecutionStatus
from moto.stepfunctions.parser.backend import execution as parser_execution

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import current

Patch = tuple[Any, str, Any]

NAMESPACE = "AWS/States"
DIMENSION = "StateMachineArn"
STARTED = "ExecutionsStarted"
REDRIVEN = "ExecutionsRedriven"
ENDED = {
    ExecutionStatus.SUCCEEDED: "ExecutionsSucceeded",
    ExecutionStatus.FAILED: "ExecutionsFailed",
    ExecutionStatus.ABORTED: "ExecutionsAborted",
    ExecutionStatus.TIMED_OUT: "ExecutionsTimedOut",
}

# On moto's CloudWatch backend: (metric, state machine ARN) -> the datum of the latest minute counted.
_LATEST = "_onceflow_execution_metrics"
_LOCK = threading.Lock()


def moto_needs() -> list[Need]:
    return [
        need(parser_execution.Execution, "start"),
        need(parser_execution.Execution, "__init__", "exec_arn", "account_id", "region_name"),
        need(parser_execution.BaseExecutionWorkerCommunication, "terminated"),
        need(
            MetricAggregatedDatum,
            "__init__",
            *(
                "namespace",
                "name",
                "min_stat",
                "max_stat",
                "sample_count",
                "sum_stat",
                "dimensions",
                "timestamp",
                "unit",
            ),
        ),
        need(CloudWatchBackend, "get_metric_data"),  # reads `metric_data`, where the data are appended
    ]


def state_machine_arn(execution_arn: str) -> str:
    """`arn:aws:states:r:a:execution:Machine:name` (Standard) or `...:express:Machine:name:id`
    (Express) -> `arn:aws:states:r:a:stateMachine:Machine`."""
    for kind in (":execution:", ":express:"):
        head, found, rest = execution_arn.partition(kind)
        if found:
            return f"{head}:stateMachine:{rest.split(':', 1)[0]}"
    raise ValueError(f"not an execution ARN: {execution_arn}")


def count(execution: Any, metric: str, now: datetime | None = None) -> None:
    """One more of `metric` for `execution`'s state machine, in the current minute."""
    # moto's CloudWatch keeps naive UTC timestamps (moto.core.utils.utcnow) and compares with them.
    minute = (now or datetime.now(UTC)).astimezone(UTC).replace(second=0, microsecond=0, tzinfo=None)
    machine = state_machine_arn(execution.exec_arn)
    backend = cloudwatch_backends[execution.account_id][execution.region_name]
    with _LOCK:
        latest: dict[tuple[str, str], MetricAggregatedDatum] = backend.__dict__.setdefault(_LATEST, {})
        datum = latest.get((metric, machine))
        if datum is None or datum.timestamp != minute:
            datum = MetricAggregatedDatum(
                namespace=NAMESPACE,
                name=metric,
                min_stat=1.0,
                max_stat=1.0,
                sample_count=0.0,
                sum_stat=0.0,
                dimensions=[{"Name": DIMENSION, "Value": machine}],
                timestamp=minute,
                unit="Count",
            )
            backend.metric_data.append(datum)
            latest[(metric, machine)] = datum
        datum.sum += 1.0
        datum.sample_count += 1.0


def patches(before: list[Patch]) -> list[Patch]:
    start = current(before, parser_execution.Execution, "start")
    terminated = current(before, parser_execution.BaseExecutionWorkerCommunication, "terminated")

    def started(self: Any) -> None:
        start(self)
        count(self, STARTED)

    def ended(self: Any) -> None:
        terminated(self)
        metric = ENDED.get(self.execution.exec_status)
        if metric is not None:
            count(self.execution, metric)

    from onceflow.engine.stepfunctions.api import redrive_execution

    redrive_start = current(before, redrive_execution.RedriveWorker, "start")

    def redriven(self: Any) -> None:
        count(self._execution_communication.execution, REDRIVEN)
        redrive_start(self)

    return [
        (parser_execution.Execution, "start", started),
        (parser_execution.BaseExecutionWorkerCommunication, "terminated", ended),
        (redrive_execution.RedriveWorker, "start", redriven),
    ]
