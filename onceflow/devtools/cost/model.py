"""Dollars per event from what a path measurably did, for each mode and for the single-Lambda floor.

Per delivery of a path:
- Step Functions: STANDARD bills each state entered and each retry (from the history); EXPRESS
  bills one request per execution plus its duration, rounded up to 100 ms, at 64 MB chunks.
  An Express execution's duration is the stated latency of each task call it made, a small
  overhead per state entered, and the Retry/Wait delays it asked for (recorded by the engine);
  the executions are the EXPRESS run's own (measure.py). StartSyncExecution's billingDetails are
  not used: on the embedded engine they time local calls with Retry delays scaled to 0.
- DynamoDB: the read and write units of every call made (recorder.py, units.py), on-demand.
- SNS: every publish, per 64 KB chunk. SQS: the producer's send, the DLQ sends made by the
  starter or the workflow (per 64 KB chunk), and the event source's receive and delete, one of
  each per `sqs_messages_per_request` records of a full batch.
- Lambda (the starter): one invocation per full batch (the template's BatchSize); duration per
  record is the stated per-record time plus the stated latency of each call the starter made
  (in EXPRESS the starter also waits for its synchronous execution), plus the invocation's
  overhead shared by the batch; memory and architecture from the template.
- CloudWatch Logs: the state machine's records at the template's level (logs.py), the starter's
  own log lines as measured, and the Lambda platform's lines per invocation (stated).

The floor is the same work in one Lambda per SQS batch: the same DynamoDB calls (so the same
units), the same publishes and SQS requests, no Step Functions; its duration is the stated
latency of every data call the starter and the workflow made (all but the Step Functions
calls), and its logs are the starter's measured lines plus the platform's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from onceflow.devtools.cost.logs import log_bytes
from onceflow.devtools.cost.measure import Execution, Measurement
from onceflow.devtools.cost.prices import Prices
from onceflow.devtools.cost.recorder import PRODUCER, STARTER, WORKFLOW, Call
from onceflow.devtools.cost.settings import CostSettings
from onceflow.devtools.cost.units import chunks

GB = 1024**3
COMPONENTS = ("Step Functions", "DynamoDB", "SNS", "SQS", "Lambda", "CloudWatch Logs")
MODES = ("STANDARD", "EXPRESS")


@dataclass(frozen=True)
class Cost:
    """Dollars per delivery, by component."""

    parts: dict[str, float]

    @property
    def total(self) -> float:
        return sum(self.parts.values())

    def per_million(self) -> float:
        return self.total * 1_000_000

    def scaled(self, factor: float) -> Cost:
        return Cost({name: value * factor for name, value in self.parts.items()})

    def __add__(self, other: Cost) -> Cost:
        return Cost({name: self.parts.get(name, 0.0) + other.parts.get(name, 0.0) for name in COMPONENTS})


@dataclass(frozen=True)
class Usage:
    """The billable quantities of one delivery of a path."""

    transitions: int
    executions: int
    express_billed_ms: int
    write_units: float
    read_units: float
    sns_requests: int
    sqs_requests: float
    lambda_invocations: float
    lambda_ms: float
    workflow_log_bytes: int
    lambda_log_bytes: float


def _ms(calls: list[Call], prices: Prices) -> float:
    return sum(prices.assumptions.call_ms(call.service) for call in calls)


def execution_ms(execution: Execution, workflow_calls: list[Call], retry_seconds: float, prices: Prices) -> float:
    assumed = prices.assumptions
    return (
        _ms(workflow_calls, prices)
        + execution.states_entered * assumed.express_state_overhead_ms
        + retry_seconds * 1000
    )


def _sqs_requests(measurement: Measurement, settings: CostSettings, prices: Prices, records: int) -> float:
    per_request = prices.assumptions.sqs_messages_per_request
    event_source = 2 * math.ceil(settings.batch_size / per_request) / settings.batch_size * records
    sends = [c for c in measurement.calls if c.service == "sqs" and c.action.startswith("SendMessage")]
    return event_source + sum(chunks(c.request_bytes) for c in sends if c.caller in (PRODUCER, STARTER, WORKFLOW))


def fifo_wait_ms(duration_ms: float, prices: Prices) -> tuple[float, int]:
    """FIFO STANDARD: how long the starter waits for an execution of `duration_ms`, and how many
    DescribeExecution calls that takes, on the starter's poll schedule (starter/executions.py)."""
    from starter.executions import FIRST_POLL_SECONDS, MAX_POLL_SECONDS, POLL_GROWTH

    latency = prices.assumptions.aws_call_ms["stepfunctions"]
    waited, delay, polls = 0.0, FIRST_POLL_SECONDS * 1000, 0
    while True:
        waited += delay + latency
        polls += 1
        if waited >= duration_ms:
            return waited, polls
        delay = min(delay * POLL_GROWTH, MAX_POLL_SECONDS * 1000)


def usage(measurement: Measurement, settings: CostSettings, prices: Prices, mode: str, floor: bool = False) -> Usage:
    assumed = prices.assumptions
    billed = [c for c in measurement.calls if c.caller in (PRODUCER, STARTER, WORKFLOW)]
    workflow = measurement.calls_by(WORKFLOW)
    starter = measurement.calls_by(STARTER)
    records = measurement.records
    per_record = (assumed.lambda_per_record_ms + assumed.lambda_invocation_overhead_ms / settings.batch_size) * records
    executions = list(measurement.executions)
    durations = [
        execution_ms(e, workflow if i == 0 else [], measurement.retry_delay_seconds if i == 0 else 0.0, prices)
        for i, e in enumerate(executions)
    ]
    if floor:
        lambda_ms = per_record + _ms([c for c in starter + workflow if c.service != "stepfunctions"], prices)
    elif settings.fifo and mode == "STANDARD":
        # The starter waits for each execution, polling DescribeExecution on its own schedule: the
        # polls an execution of that stated duration takes on AWS, not those the engine's speed made.
        not_polls = [c for c in starter if c.action != "DescribeExecution"]
        lambda_ms = per_record + _ms(not_polls, prices) + sum(fifo_wait_ms(d, prices)[0] for d in durations)
    else:
        lambda_ms = per_record + _ms(starter, prices) + (sum(durations) if mode == "EXPRESS" else 0.0)
    workflow_logs = sum(
        log_bytes(e.history, e.arn, settings.log_level, settings.include_execution_data) for e in executions
    )
    return Usage(
        transitions=measurement.billed_transitions,
        executions=len(executions),
        express_billed_ms=sum(max(100, math.ceil(d / 100) * 100) for d in durations),
        write_units=sum(c.write_units for c in billed),
        read_units=sum(c.read_units for c in billed),
        sns_requests=sum(chunks(c.request_bytes) for c in billed if c.service == "sns" and c.action == "Publish"),
        sqs_requests=_sqs_requests(measurement, settings, prices, records),
        lambda_invocations=records / settings.batch_size,
        lambda_ms=lambda_ms,
        workflow_log_bytes=0 if floor else workflow_logs,
        lambda_log_bytes=measurement.starter_log_bytes
        + records * assumed.lambda_platform_log_bytes_per_invocation / settings.batch_size,
    )


def cost(used: Usage, settings: CostSettings, prices: Prices, mode: str | None) -> Cost:
    """Dollars of one delivery; mode None is the single-Lambda floor (no Step Functions)."""
    if mode == "STANDARD":
        step_functions = used.transitions * prices["stepfunctions_standard_per_transition"]
    elif mode == "EXPRESS":
        memory_gb = prices.assumptions.express_memory_mb / 1024
        step_functions = used.executions * prices["stepfunctions_express_per_request"] + (
            used.express_billed_ms / 1000 * memory_gb * prices["stepfunctions_express_per_gb_second"]
        )
    else:
        step_functions = 0.0
    lambda_gb_seconds = used.lambda_ms / 1000 * settings.memory_mb / 1024
    return Cost(
        {
            "Step Functions": step_functions,
            "DynamoDB": used.write_units * prices["dynamodb_on_demand_per_write_unit"]
            + used.read_units * prices["dynamodb_on_demand_per_read_unit"],
            "SNS": used.sns_requests * prices["sns_per_publish"],
            "SQS": used.sqs_requests * prices["sqs_fifo_per_request" if settings.fifo else "sqs_per_request"],
            "Lambda": used.lambda_invocations * prices["lambda_per_request"]
            + lambda_gb_seconds * prices.lambda_per_gb_second(settings.architecture),
            "CloudWatch Logs": (used.workflow_log_bytes + used.lambda_log_bytes)
            / GB
            * prices["cloudwatch_logs_per_gb_ingested"],
        }
    )


def floor_cost(measurement: Measurement, settings: CostSettings, prices: Prices) -> Cost:
    return cost(usage(measurement, settings, prices, "STANDARD", floor=True), settings, prices, None)


def mode_cost(measurement: Measurement, settings: CostSettings, prices: Prices, mode: str) -> Cost:
    return cost(usage(measurement, settings, prices, mode), settings, prices, mode)


def mix_cost(costs: dict[str, Cost], mix: dict[str, float]) -> Cost:
    total = Cost({name: 0.0 for name in COMPONENTS})
    for path, share in mix.items():
        total = total + costs[path].scaled(share)
    return total
