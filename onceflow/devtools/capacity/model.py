"""Sustained events per second per mode, from the template's settings, AWS's quotas and stated latencies.

Each limit is turned into the event rate at which it binds:
- Step Functions API: StartExecution (STANDARD) or StartSyncExecution (EXPRESS), one call per
  event: the bucket's refill rate; its bucket size is the burst taken above that rate.
- State transitions (STANDARD only; Express is unlimited): the refill rate over the states a new
  event enters (the happy path walked in the ASL). A throttled transition delays the execution.
- Synchronous Express executions at once (EXPRESS): that quota over an execution's duration.
- Lambda: the event source's concurrency (MaximumConcurrency, at most the account's concurrency,
  on a FIFO source at most the active message groups) times a batch's records over a batch's
  duration: the invocation overhead, the already-sent look-up, and the records' hand-overs
  (one after the other, or `max_concurrent_records` at once), each the stated per-record time
  plus the Step Functions call (plus, in EXPRESS, the whole execution it waits for).
- DynamoDB on demand: write units per event per table (a transactional put of an item up to
  1 KB is 2 WRU, an update 1 WRU) against a new table's throughput and the table quota.
- SNS: one publish per event against the region's publish quota.
- SQS: a standard queue is not a limit; a FIFO queue takes 300 calls/s per action, 10 messages a call.

Latencies are the cost model's stated per-call latencies (cost/prices_us_east_1.json), not measured.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from onceflow.devtools.capacity.quotas import Quotas
from onceflow.devtools.capacity.settings import CapacitySettings
from onceflow.devtools.cost.prices import Assumptions

# The ASL's states of each path an event can take (checked against the definition).
RECORD, LOOK_UP, LEFT_TO_DO = "Record event and business item", "Look up earlier record", "What is left to do?"
PATHS: dict[str, tuple[str, ...]] = {
    "new event": (RECORD, "Publish notification", "Mark as sent"),
    "resumed from pending": (RECORD, LOOK_UP, LEFT_TO_DO, "Publish notification", "Mark as sent"),
    "already sent (in the workflow)": (RECORD, LOOK_UP, LEFT_TO_DO, "Already sent"),
    "payload conflict": (
        RECORD,
        LOOK_UP,
        LEFT_TO_DO,
        "Describe payload conflict",
        "Send to dead-letter queue",
        "Dead-lettered",
    ),
}
STATE_TABLE_WRU = 2 + 1  # Record's transactional put (<= 1 KB) + Mark as sent's update
BUSINESS_TABLE_WRU = 2  # Record's transactional put of the business item
SERVICE_OF_RESOURCE = {"dynamodb": "dynamodb", "sns": "sns", "sqs": "sqs"}


class DefinitionMismatch(RuntimeError):
    """A path names a state the ASL does not have: the model must be brought up to date."""


@dataclass(frozen=True)
class Limit:
    name: str
    events_per_second: float | None  # None: no limit at any rate that matters
    basis: str
    quota: str | None = None  # key in quotas.json
    burst_events: float = 0.0  # taken at once above the sustained rate (a token bucket's size)


@dataclass(frozen=True)
class ModeCapacity:
    label: str
    region: str
    settings: CapacitySettings
    limits: tuple[Limit, ...]
    latencies_ms: dict[str, float]
    per_invocation: float  # events/s one starter invocation hands over, busy on full batches
    notes: tuple[str, ...] = field(default=())

    @property
    def ranked(self) -> list[Limit]:
        return sorted((lim for lim in self.limits if lim.events_per_second is not None), key=_rate)

    @property
    def binding(self) -> Limit:
        return self.ranked[0]

    @property
    def next_limit(self) -> Limit | None:
        ranked = self.ranked
        return ranked[1] if len(ranked) > 1 else None

    @property
    def sustained(self) -> float:
        return _rate(self.binding)

    @property
    def burst_events(self) -> float:
        """Events taken at once above the sustained rate without a throttled call: the binding
        limit's bucket (the source queue holds the rest, waiting)."""
        return self.binding.burst_events

    def drain_seconds(self, backlog: float, arrivals_per_second: float = 0.0) -> float:
        """How long a backlog takes to go while events keep arriving at `arrivals_per_second`."""
        spare = self.sustained - arrivals_per_second
        return math.inf if spare <= 0 else backlog / spare

    def backlog_after(self, arrivals_per_second: float, seconds: float) -> float:
        return max(0.0, arrivals_per_second - self.sustained) * seconds


def _rate(limit: Limit) -> float:
    assert limit.events_per_second is not None
    return limit.events_per_second


def _service(resource: str) -> str:
    for marker, service in SERVICE_OF_RESOURCE.items():
        if f":{marker}:" in resource:
            return service
    return "stepfunctions"


def path_states(definition: dict, path: tuple[str, ...]) -> list[dict]:
    states = definition["States"]
    missing = [name for name in path if name not in states]
    if missing:
        raise DefinitionMismatch(
            f"the ASL has no state {', '.join(map(repr, missing))}: update capacity/model.py PATHS"
        )
    return [states[name] for name in path]


def workflow_ms(definition: dict, path: tuple[str, ...], assumed: Assumptions) -> float:
    """The stated time of a path's states: each task's call and a small overhead per state."""
    total = 0.0
    for state in path_states(definition, path):
        total += assumed.express_state_overhead_ms
        if state["Type"] == "Task":
            total += assumed.call_ms(_service(state["Resource"]))
    return total


# FIFO STANDARD: the starter's first DescribeExecution comes this long after StartExecution
# (functions/starter/starter/executions.py FIRST_POLL_SECONDS); an execution ended by then costs one poll.
FIFO_FIRST_POLL_MS = 100


def describe_polls_per_event(settings: CapacitySettings, assumed: Assumptions) -> int:
    """FIFO STANDARD: DescribeExecution calls per event (polls 0.1 s apart, growing 1.5x, at most 1 s)."""
    if not settings.fifo or settings.mode != "STANDARD":
        return 0
    remaining, interval, polls = workflow_ms(settings.definition, PATHS["new event"], assumed), 100.0, 1
    while remaining > interval:
        remaining -= interval
        interval = min(1000.0, interval * 1.5)
        polls += 1
    return polls


def batch_seconds(settings: CapacitySettings, assumed: Assumptions) -> float:
    """One invocation of the starter on a full batch (FIFO: of one message group, its records in order)."""
    handover = assumed.lambda_per_record_ms + assumed.call_ms("stepfunctions")
    if settings.mode == "EXPRESS":
        handover += workflow_ms(settings.definition, PATHS["new event"], assumed)
    polls = describe_polls_per_event(settings, assumed)
    if polls:
        ends_ms = workflow_ms(settings.definition, PATHS["new event"], assumed)
        handover += max(ends_ms, FIFO_FIRST_POLL_MS) + polls * assumed.call_ms("stepfunctions")
    at_once = 1 if settings.fifo else max(1, min(settings.max_concurrent_records, settings.batch_size))
    waves = math.ceil(settings.batch_size / at_once)
    lookup = assumed.call_ms("dynamodb")
    return (assumed.lambda_invocation_overhead_ms + lookup + waves * handover) / 1000


def model_capacity(
    settings: CapacitySettings, quotas: Quotas, assumed: Assumptions, active_groups: int | None = None
) -> ModeCapacity:
    definition = settings.definition
    transitions = len(PATHS["new event"])
    path_states(definition, PATHS["new event"])
    limits: list[Limit] = []
    notes: list[str] = []
    if settings.mode == "STANDARD":
        start = quotas["stepfunctions_start_execution_standard"]
        limits.append(
            Limit(
                "Step Functions StartExecution",
                start["refill_per_second"],
                f"{start['refill_per_second']:,} tokens/s refill, 1 call per event",
                start.key,
                start["bucket"],
            )
        )
        moves = quotas["stepfunctions_state_transition_standard"]
        limits.append(
            Limit(
                "Step Functions state transitions",
                moves["refill_per_second"] / transitions,
                f"{moves['refill_per_second']:,} transitions/s over {transitions} states per new event",
                moves.key,
                moves["bucket"] / transitions,
            )
        )
        notes.append("New accounts have reduced state transition quotas (not published): ask AWS before a launch.")
        polls = describe_polls_per_event(settings, assumed)
        if polls:
            describe = quotas["stepfunctions_describe_execution"]
            limits.append(
                Limit(
                    "Step Functions DescribeExecution (FIFO: waiting for each execution)",
                    describe["refill_per_second"] / polls,
                    f"{describe['refill_per_second']:,} tokens/s refill over {polls} poll(s) per event",
                    describe.key,
                    describe["bucket"] / polls,
                )
            )
    else:
        sync = quotas["stepfunctions_start_sync_execution"]
        limits.append(
            Limit(
                "Step Functions StartSyncExecution",
                sync["refill_per_second"],
                f"{sync['refill_per_second']:,} tokens/s refill (assumed, see quotas.json), 1 call per event",
                sync.key,
                sync["bucket"],
            )
        )
        running = quotas["stepfunctions_sync_express_concurrent_executions"]
        seconds = workflow_ms(definition, PATHS["new event"], assumed) / 1000
        limits.append(
            Limit(
                "Synchronous Express executions at once",
                running["limit"] / seconds,
                f"{running['limit']:,} at once over {seconds * 1000:.0f} ms each",
                running.key,
            )
        )
    account = quotas["lambda_concurrent_executions"]["limit"]
    concurrency = min(settings.maximum_concurrency, account)
    concurrency_basis = f"MaximumConcurrency {settings.maximum_concurrency}"
    if settings.fifo:
        groups = active_groups if active_groups is not None else concurrency
        if groups < concurrency:
            concurrency, concurrency_basis = groups, f"{groups} active message groups"
    batch = batch_seconds(settings, assumed)
    limits.append(
        Limit(
            "Lambda (the starter)",
            concurrency * settings.batch_size / batch,
            f"{concurrency_basis} x {settings.batch_size} records per {batch * 1000:.0f} ms batch",
            "lambda_sqs_maximum_concurrency",
        )
    )
    table = quotas["dynamodb_on_demand_table_throughput"]
    limits.append(
        Limit(
            "DynamoDB processed_events (new on-demand table)",
            table["new_table_per_second"] / STATE_TABLE_WRU,
            f"{table['new_table_per_second']:,} WRU/s over {STATE_TABLE_WRU} WRU per event"
            f" (the table quota {table['table_maximum_per_second']:,} once scaled)",
            table.key,
        )
    )
    limits.append(
        Limit(
            "DynamoDB business table (new on-demand table)",
            table["new_table_per_second"] / BUSINESS_TABLE_WRU,
            f"{table['new_table_per_second']:,} WRU/s over {BUSINESS_TABLE_WRU} WRU per event",
            table.key,
        )
    )
    publish = quotas["sns_publish"]
    limits.append(Limit("SNS Publish", publish["limit"], f"{publish['limit']:,}/s in {quotas.region}", publish.key))
    if settings.fifo:
        fifo = quotas["sqs_fifo_throughput"]
        per_call = min(fifo["messages_per_batch"], settings.batch_size)
        limits.append(
            Limit(
                "SQS FIFO source queue",
                fifo["calls_per_second"] * per_call,
                f"{fifo['calls_per_second']} calls/s per action x {per_call} messages per call"
                " (high throughput mode takes more)",
                fifo.key,
            )
        )
    else:
        limits.append(Limit("SQS standard source queue", None, "nearly unlimited", "sqs_standard_throughput"))
    assumed_window = settings.batching_window_seconds
    latencies = {}
    starter_ms = assumed.lambda_invocation_overhead_ms + assumed.call_ms("dynamodb") + assumed.lambda_per_record_ms
    for name, path in PATHS.items():
        latencies[name] = starter_ms + assumed.call_ms("stepfunctions") + workflow_ms(definition, path, assumed)
    latencies["redelivered after sent (starter's look-up)"] = starter_ms
    notes.append(
        f"Latency: add up to {assumed_window} s of batching window when traffic is low, and in a full"
        f" batch up to {settings.batch_size - 1} records handed over before this one."
    )
    return ModeCapacity(
        settings.label, quotas.region, settings, tuple(limits), latencies, settings.batch_size / batch, tuple(notes)
    )


def sized_maximum_concurrency(capacity: ModeCapacity) -> int:
    """The largest MaximumConcurrency that keeps the starter below every other limit: the event
    source then holds the excess in the queue (where waiting costs no receive) instead of the
    pipeline being throttled downstream."""
    ceiling = min(_rate(lim) for lim in capacity.ranked if not lim.name.startswith("Lambda"))
    return max(2, math.floor(ceiling / capacity.per_invocation))
