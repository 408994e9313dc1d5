"""Run a fault schedule through the real pipeline on the embedded AWS, recover, check invariants.

Each run gets a fresh stack (the embedded AWS is reset and template.yaml deployed again), the real
starter behind the emulated SQS event source (concurrency 1: batches in order; executions still
run concurrently in the engine), the real reconciler behind the safety net rule and its schedule,
a DynamoDB TTL clock and a notification inbox. Steps act as model.py describes. Then recovery, as
an operator would do it after an incident, with every fault gone (but status change events that
were lost stay lost, and `RunOptions.status_events_lost` keeps losing them):

1. process until quiet (the reconciler's schedule runs whenever the pipeline is quiet);
2. the safety net delivers the status changes of executions that ended outside the dead-letter
   path (stopped, timed out, uncaught errors) to the reconciler, and the reconciler's schedule
   runs: both bring such events to the dead-letter queue;
3. the dead-letter queue is redriven, except poison and payload conflicts, which need a person;
4. repeat 1-3 until a redrive moves nothing (at most `recovery_rounds` times).

A stack deployed for an earlier schedule on the same endpoint is reused when nothing has reset the
endpoint since: it is brought back to just-deployed as the test suite does between tests
(onceflow/engine/bookkeeping/baseline.py: executions forgotten, items and messages dropped, what the
run created removed), which leaves the same state as a fresh deploy at a fraction of moto
CloudFormation's cost. A test that swaps `deploy` (a deliberately broken
pipeline) always gets a fresh one.

`RunOptions.mode` deploys the template's StateMachineType: on EXPRESS the starter waits on
StartSyncExecution, interrupts time executions out, a crash may leave an execution running with
no caller (hooks.py), the start windows deny or throttle StartSyncExecution (windows.py), and status change
events are not part of the run (Express emits none for the safety net to lose). Express executions
are not listed (Standard-only, as on AWS), so the evidence is the tables, queues and notifications.

Every wait is bounded (`process_timeout`). The outcome carries the violations found (see
invariants.py) and what the run did, for the test's and the benchmark's reports.
"""

from __future__ import annotations

import io
import json
import math
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from moto.sqs.models import Queue

from onceflow.devtools.schedules.effects import EffectLog
from onceflow.devtools.schedules.hooks import ExecutionInterrupts, StarterCrashed, StarterCrashes
from onceflow.devtools.schedules.invariants import Evidence, check
from onceflow.devtools.schedules.model import (
    ACTIVE_STEPS,
    INTERRUPTIBLE_STATES,
    POISON_GROUP,
    CrashStarter,
    CrashSubscriber,
    Expire,
    Interrupt,
    Open,
    Process,
    Recover,
    Redeliver,
    RedeliverNotification,
    Schedule,
    Send,
    SendConflict,
    SendPoison,
    Step,
    event_id,
    message_group,
)
from onceflow.devtools.schedules.subscriber_faults import SubscriberCrashed, SubscriberCrashes
from onceflow.devtools.schedules.windows import FaultWindows
from onceflow.domain import conflicting_candidates
from onceflow.domain.bodies import body as domain_body
from onceflow.engine import ACCOUNT_ID, REGION, EmbeddedAws
from onceflow.engine.bookkeeping.worlds import Deployed
from onceflow.engine.dynamodb.ttl import TtlClock
from onceflow.local import stack as stack_module
from onceflow.local.demo import NOT_REDRIVEN, expectations, poison_kinds, redrive_transient
from onceflow.local.event_source import SqsEventSource
from onceflow.local.pipeline import LocalPipeline
from onceflow.local.report import RunReport
from onceflow.local.safety_net import SafetyNet, StatusEventLoss, SweepReport
from onceflow.local.stack import LocalStack, deploy
from onceflow.local.starter_parse import StarterParser
from onceflow.local.subscriber_check import subscriber_evidence
from onceflow.ops.executions import ExecutionTimeout, stop_running
from onceflow.ops.observe import drain, scan
from onceflow.ops.workflow import record_state
from onceflow_common import dead_letters


class ScheduleError(RuntimeError):
    """The schedule could not be run as written (not an invariant violation)."""


@dataclass(frozen=True)
class RunOptions:
    process_timeout: float = 60.0
    recovery_rounds: int = 6
    concurrency: int = 1
    # Share of status change events lost for the whole run, recovery included (1.0: every one).
    status_events_lost: float = 0.0
    mode: str = "STANDARD"  # the template's StateMachineType
    source: str = "STANDARD"  # the template's SourceQueueType; FIFO adds R5 (effects.py)

    @property
    def express(self) -> bool:
        return self.mode == "EXPRESS"

    @property
    def fifo(self) -> bool:
        return self.source == "FIFO"


@dataclass
class RunStats:
    messages_sent: int = 0
    redeliveries: int = 0
    redeliveries_skipped: int = 0  # nothing acknowledged yet to redeliver
    starter_crashes: int = 0
    subscriber_crashes: Counter[str] = field(default_factory=Counter)  # "before_write" -> n
    notification_redeliveries: int = 0
    interrupts_fired: Counter[str] = field(default_factory=Counter)  # "stop@Mark as sent" -> n
    interrupts_unused: int = 0
    faults_injected: Counter[str] = field(default_factory=Counter)
    throttled_rounds: int = 0  # event source rounds under a throttle of every start ("start_throttled", times None)
    safety_net_routed: int = 0
    status_events_lost: int = 0
    records_expired: int = 0
    reconciler_runs: int = 0
    redriven: int = 0
    recovery_rounds: int = 0
    executions_by_status: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0


@dataclass
class ScheduleOutcome:
    schedule: Schedule
    violations: list[str]
    report: RunReport
    stats: RunStats

    @property
    def passed(self) -> bool:
        return not self.violations

    def summary(self) -> str:
        verdict = "ok" if self.passed else f"{len(self.violations)} violations"
        return f"{verdict}: {self.schedule.describe()}"


class CountingSafetyNet:
    """The pipeline's safety net, counting what it routed and lost (delivery failures are handled
    as Lambda handles them: retried, then the target's dead-letter queue; see safety_net.py)."""

    def __init__(self, net: SafetyNet):
        self.net = net
        self.routed = 0
        self.lost = 0

    def sweep(self) -> SweepReport:
        report = self.net.sweep()
        self.routed += len(report.routed)
        self.lost += sum(1 for change in report.routed if change.lost)
        return report

    def __getattr__(self, name: str) -> Any:
        return getattr(self.net, name)


# The name benchmarks/load_soak.py imports (it wraps the pipeline's safety net the same way).
RetryingSafetyNet = CountingSafetyNet


class _Run:
    def __init__(self, aws: EmbeddedAws, options: RunOptions):
        self.aws = aws
        self.options = options
        self.stack = _fresh_stack(aws, options.mode, options.source)
        self.crashes = StarterCrashes()
        self.subscriber_crashes = SubscriberCrashes()
        loss = StatusEventLoss(fraction=options.status_events_lost) if options.status_events_lost else None
        self.pipeline = LocalPipeline(
            aws,
            self.stack,
            log_stream=io.StringIO(),
            invoke_wrapper=self.crashes.wrap,
            status_event_loss=loss,
            subscriber_wrapper=self.subscriber_crashes.wrap,
        )
        for source in self.pipeline.subscriber_sources.values():
            source.time_scale = 0.0
        self.pipeline.event_source.time_scale = 0.0
        self.sfn = self.stack.client("stepfunctions")
        self.interrupts = ExecutionInterrupts(self.stack.client("stepfunctions"), express=options.express)
        self.windows = FaultWindows(self.stack.dead_letter_queue_url, self.pipeline.safety_net, options.express)
        self.safety_net = CountingSafetyNet(self.pipeline.safety_net)
        self.pipeline.safety_net = self.safety_net  # type: ignore[assignment]
        self.ttl = TtlClock(self.stack.client("dynamodb"))
        # State records DynamoDB TTL deleted, as they were just before: evidence that they existed.
        self.expired_state_records: dict[str, dict[str, Any]] = {}
        self.bodies: list[str] = []
        self.poison_bodies: set[str] = set()
        self.groups: dict[str, str] = {}  # FIFO: each body's MessageGroupId
        self.stats = RunStats()
        # Events the redrive policy moved to the dead-letter queue while Step Functions throttled every start.
        self.throttled_dead_letters: list[str] = []
        # FIFO: the order in which messages were sent, dead-lettered, written and notified (R5).
        self.effects = EffectLog(
            _queue_name(self.stack.source_queue_url),
            _queue_name(self.stack.dead_letter_queue_url),
            self.stack.business_table,
            self.stack.business_key,
            self.stack.domain.event_id_of,
        )
        self.parser = StarterParser(self.stack)
        self.poison_kinds = poison_kinds(self.stack.domain, self.parser)
        self._check_states()

    def _check_states(self) -> None:
        """Interruptible state names must exist in the deployed definition, or interrupts never fire."""
        described = self.sfn.describe_state_machine(stateMachineArn=self.stack.state_machine_arn)
        definition = json.loads(described["definition"])
        self.record_state = record_state(definition)
        missing = set(INTERRUPTIBLE_STATES) - set(definition["States"])
        if missing:
            raise ScheduleError(f"the state machine has no state(s) {sorted(missing)}: update schedules/model.py")

    def body(self, event: int, conflicting: bool = False) -> str:
        """The producer's body for event `event`: the domain's sample with its id; `conflicting`
        reuses the id with another payload (the first field the starter accepts changed)."""
        original = domain_body(self.stack.domain, event_id(event))
        if not conflicting:
            return json.dumps(original)
        for candidate in conflicting_candidates(self.stack.domain, original):
            text = json.dumps(candidate)
            if self.parser.parse(text).accepted:
                return text
        raise ScheduleError(f"no field of the sample {self.stack.domain.sample_path.name} can change and stay valid")

    # --- steps -------------------------------------------------------------------------------
    def send(self, bodies: list[str], group: str | None = None) -> None:
        self.pipeline.send(bodies, groups=[group or POISON_GROUP] * len(bodies) if self.options.fifo else None)
        if self.options.fifo:
            self.groups.update((body, group or POISON_GROUP) for body in bodies)
        self.bodies.extend(bodies)
        self.stats.messages_sent += len(bodies)

    def process(self) -> None:
        if self.windows.throttles_starts_for_good():
            self.process_throttled_for_good()
            return
        self.pipeline.process(concurrency=self.options.concurrency, timeout=self.options.process_timeout)
        if self.crashes.orphans:  # EXPRESS: what a dead starter left running ends, then its effects are handled
            self.wait_until_no_execution_runs()
            self.pipeline.process(concurrency=self.options.concurrency, timeout=self.options.process_timeout)

    def process_throttled_for_good(self) -> None:
        """Step Functions throttles every start: the step lets more receives go by than the redrive
        policy allows (each round an invocation that waits the throttle out to its end), then the
        window closes. No valid event may be moved to the dead-letter queue by the redrive policy
        meanwhile. A standard source's throttled record is re-queued as a new message each round. A
        FIFO source's cannot be (it would go behind its group) and spends a receive per round, so
        its rounds run on a clock: one the queue's visibility timeout apart, which used to move it
        past maxReceiveCount, while the starter keeps its group in flight longer each round
        (starter/throttling.py); when the window closes, what is still held comes back."""
        source = self.pipeline.event_source
        rounds = (source.settings.max_receive_count or 1) + 2
        with ExitStack() as context:
            moved = context.enter_context(_moved_by_the_redrive_policy(_queue_name(self.stack.dead_letter_queue_url)))
            tick = context.enter_context(_rounds_on_a_clock(source)) if self.options.fifo else lambda: None
            for _ in range(rounds):
                source.poll_once()
                tick()
            self.wait_until_no_execution_runs()
        self.stats.throttled_rounds += rounds
        # Poison may be moved (its dead letter's send can fail): not a valid event. On a FIFO source
        # neither are the later events of its group (group-0) then: held back behind it, not throttled.
        behind_poison = (
            {body for body, group in self.groups.items() if group == POISON_GROUP} if self.poison_bodies else set()
        )
        valid = [body for body in moved if body not in self.poison_bodies and body not in behind_poison]
        self.throttled_dead_letters.extend(self.stack.domain.event_id_of(body) or body[:40] for body in valid)

    def redeliver(self, pick: int) -> None:
        handled = self.pipeline.event_source.acknowledged_records
        # A FIFO queue does not hand over a message again once it was deleted (no duplicates are
        # introduced; https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-queues-exactly-once-processing.html).
        if not handled or self.options.fifo:
            self.stats.redeliveries_skipped += 1
            return
        record = handled[pick % len(handled)]
        self.stats.redeliveries += 1
        with suppress(StarterCrashed):  # a crash on a duplicate: its original was handled (crashes are counted)
            self.pipeline.event_source.invoke({"Records": [record]})
        # Let what the redelivery started finish while this step's failure windows are open.
        self.wait_until_no_execution_runs()

    def redeliver_notification(self, pick: int) -> None:
        """SQS hands the subscriber a notification it already applied and acknowledged."""
        for source in self.pipeline.subscriber_sources.values():
            handled = source.acknowledged_records
            if handled:
                self.stats.notification_redeliveries += 1
                with suppress(SubscriberCrashed):  # an armed crash on the duplicate: counted, harmless
                    source.invoke({"Records": [handled[pick % len(handled)]]})

    def running_executions(self) -> int:
        return self.pipeline.running_executions() + self.crashes.join_orphans(timeout=0)

    def wait_until_no_execution_runs(self) -> None:
        deadline = time.monotonic() + self.options.process_timeout
        self.crashes.join_orphans(timeout=self.options.process_timeout)
        while running := self.running_executions():
            if time.monotonic() > deadline:
                raise ExecutionTimeout(f"{running} executions still running after {self.options.process_timeout}s")
            time.sleep(0.01)

    def expire(self, days: int) -> None:
        """DynamoDB TTL `days` later: sent state records (and reconciler markers) past their ttl go."""
        table = self.stack.processed_events_table
        before = {r["event_id"]: r for r in scan(self.stack.client("dynamodb"), table)}
        self.pipeline.schedule_due()  # reconciler markers may have expired too
        for item in self.ttl.advance_days(days):
            if item.table == table:
                event = item.key["event_id"]["S"]
                self.expired_state_records[event] = before[event]
                self.stats.records_expired += 1

    def recover_once(self) -> int:
        """Safety net and the reconciler's schedule, then redrive (except poison and payload conflicts)."""
        self.safety_net.sweep()
        self.pipeline.run_schedule_if_anything_ended()
        moved = redrive_transient(self.pipeline)
        self.stats.redriven += moved
        return moved

    def apply(self, step: Step) -> None:
        if isinstance(step, Send):
            self.send([self.body(step.event)] * step.copies, message_group(step.event))
        elif isinstance(step, SendConflict):
            self.send([self.body(step.event, conflicting=True)], message_group(step.event))
        elif isinstance(step, SendPoison):
            kinds = self.poison_kinds
            self.poison_bodies.add(kinds[step.poison % len(kinds)])
            self.send([kinds[step.poison % len(kinds)]])
        elif isinstance(step, Redeliver):
            self.redeliver(step.pick)
        elif isinstance(step, CrashStarter):
            self.crashes.arm(step.after_starts)
        elif isinstance(step, CrashSubscriber):
            self.subscriber_crashes.arm(step.where)
        elif isinstance(step, RedeliverNotification):
            self.redeliver_notification(step.pick)
        elif isinstance(step, Interrupt):
            self.interrupts.arm(event_id(step.event), step.state, step.how)
        elif isinstance(step, Open):
            self.windows.open(step)
        elif isinstance(step, Expire):
            self.expire(step.days)
        elif isinstance(step, Process):
            self.process()
        elif isinstance(step, Recover):
            self.recover_once()
        else:
            raise ScheduleError(f"unknown step {step!r}")

    # --- the whole run -----------------------------------------------------------------------
    def run(self, schedule: Schedule) -> tuple[bool, list[str]]:
        """Steps, then recovery; returns whether recovery converged and any bounded-wait failures."""
        problems: list[str] = []
        with ExitStack() as scope:
            scope.enter_context(self.interrupts.installed())
            scope.enter_context(self.crashes.counting_starts(self.pipeline.starter.module))
            scope.enter_context(self.windows)
            scope.enter_context(_throttling_on_the_run_clock(self.pipeline.starter.module))
            if self.options.fifo:
                # The starter's DescribeExecution polls (FIFO STANDARD) wait on the engine for an
                # execution's end (LocalPipeline: DelayClock.poll_sleep), neither slept nor spun.
                scope.enter_context(self.effects.installed())
            try:
                for step in schedule.steps:
                    self.apply(step)
                    if isinstance(step, ACTIVE_STEPS):
                        self.windows.tick()
            except ExecutionTimeout as timeout:
                problems.append(f"a step did not finish in time: {timeout}")
            finally:
                self.windows.close_all()
                self.stats.interrupts_unused = self.interrupts.pending
                self.crashes.disarm()
                self.interrupts.disarm()
                self.subscriber_crashes.disarm()
            converged = False
            try:
                self.process()
                for _ in range(self.options.recovery_rounds):
                    self.stats.recovery_rounds += 1
                    if self.recover_once() == 0:
                        converged = True
                        break
                    self.process()
            except ExecutionTimeout as timeout:
                problems.append(f"recovery did not finish in time: {timeout}")
        problems.extend(
            f"throttling: {event} was moved to the dead-letter queue by the redrive policy while Step Functions "
            "throttled its start (a throttled record must not spend its receives: re-queued, or on FIFO held in flight)"
            for event in self.throttled_dead_letters
        )
        self.stats.starter_crashes += self.crashes.crashed_before_start + self.crashes.crashed_after_start
        self.stats.subscriber_crashes.update(self.subscriber_crashes.fired)
        self.stats.interrupts_fired.update(f"{f.how}@{f.state}" for f in self.interrupts.fired)
        self.stats.faults_injected.update(self.windows.injected)
        self.stats.safety_net_routed = self.safety_net.routed
        self.stats.status_events_lost = self.safety_net.lost
        self.stats.reconciler_runs = self.pipeline.schedule.runs
        return converged, problems

    def evidence(self, converged: bool) -> Evidence:
        dynamodb, sqs = self.stack.client("dynamodb"), self.stack.client("sqs")
        running = self.running_executions()
        executions = self.pipeline.executions() if not running else []
        self.stats.executions_by_status.update(e.status for e in executions)
        live = scan(dynamodb, self.stack.processed_events_table)
        recorded = {r["event_id"] for r in live}
        return Evidence(
            expectations=expectations(self.parser, self.bodies),
            state_records=live,
            expired_state_records=[r for e, r in self.expired_state_records.items() if e not in recorded],
            business_rows=scan(dynamodb, self.stack.business_table),
            notifications=list(self.pipeline.inbox.collect()),
            dead_letters=drain(sqs, self.stack.dead_letter_queue_url, delete=False),
            executions=executions,
            running_executions=running,
            recovery_converged=converged,
            business_key=self.stack.business_key,
            record_state=self.record_state,
            effects=list(self.effects.effects) if self.options.fifo else None,
            subscriber=subscriber_evidence(self.pipeline),
        )


@dataclass(frozen=True)
class _Reusable:
    stack: LocalStack
    deployed: Deployed  # its resources and moto's state as the deploy left them


_REUSABLE: dict[tuple[str, str, str], _Reusable] = {}


# The starter's throttling backoff is not slept in a run (hooks.py), but each attempt is a call: a
# longer cap makes fewer, longer waits per invocation (the same loop: it still waits the invocation's
# time out, 25 s, or 325 s when the starter waits for executions, in about 10 to 20 calls, not 30 to 470).
RUN_MAX_BACKOFF_SECONDS = 60.0


@contextmanager
def _throttling_on_the_run_clock(starter_module: ModuleType) -> Iterator[None]:
    """A record re-queued after throttling is delayed 2^n s on AWS; the run's clock does not wait,
    so it is visible at once, and the backoff between throttled calls is capped higher."""
    throttling = sys.modules[starter_module.StillThrottled.__module__]
    saved = throttling.MAX_DELAY_SECONDS, throttling.MAX_BACKOFF_SECONDS
    throttling.MAX_DELAY_SECONDS, throttling.MAX_BACKOFF_SECONDS = 0, RUN_MAX_BACKOFF_SECONDS
    try:
        yield
    finally:
        throttling.MAX_DELAY_SECONDS, throttling.MAX_BACKOFF_SECONDS = saved


@contextmanager
def _rounds_on_a_clock(source: SqsEventSource) -> Iterator[Callable[[], None]]:
    """The event source on a clock of simulated seconds (a record's visibility timeout, the queue's
    or the one the starter set, runs out on it), moved on by the queue's visibility timeout per
    `tick()`. On leaving, every record still held becomes visible (the window is over and, the
    clock jumping ahead, so are the holds) and the event source is back on the run's time."""
    now = [0.0]
    source.clock = lambda: now[0]

    def tick() -> None:
        now[0] += source.settings.visibility_timeout

    try:
        yield tick
    finally:
        now[0] = math.inf
        source.release_due()
        source.clock = None


@contextmanager
def _moved_by_the_redrive_policy(dead_letter_queue: str) -> Iterator[list[str]]:
    """The bodies of the messages SQS's redrive policy moves to the dead-letter queue meanwhile:
    every writer's dead letter carries its reason (the `error` attribute), a moved message does not."""
    moved: list[str] = []
    add_message = Queue.add_message

    def noting_moves(queue: Queue, message: Any) -> Any:
        if queue.name == dead_letter_queue and dead_letters.ERROR not in message.message_attributes:
            moved.append(message.body)
        return add_message(queue, message)

    Queue.add_message = noting_moves  # type: ignore[method-assign]
    try:
        yield moved
    finally:
        Queue.add_message = add_message  # type: ignore[method-assign]


def _queue_name(url: str) -> str:
    return url.rsplit("/", 1)[-1]


def _parameters(mode: str, source: str) -> dict[str, str] | None:
    # Every schedule runs the example subscriber behind the topic: R4 is judged on every one.
    parameters = (
        {"DeploySubscriber": "true"} if mode == "STANDARD" else {"StateMachineType": mode, "DeploySubscriber": "true"}
    )
    if source == "FIFO":  # the batching window's default gives a FIFO source none (Lambda allows none)
        parameters.update(SourceQueueType="FIFO")
    return parameters or None


def _fresh_stack(aws: EmbeddedAws, mode: str = "STANDARD", source: str = "STANDARD") -> LocalStack:
    """An empty stack from template.yaml: the one of these parameters brought back to just-deployed
    (onceflow/engine/bookkeeping/worlds.py), or a new deploy on a reset endpoint."""
    reusable = deploy is stack_module.deploy  # not when a test swapped in a broken pipeline
    key = (aws.endpoint_url, mode, source)
    kept = _REUSABLE.pop(key, None)
    if reusable and kept is not None:
        kept.deployed.restore(aws.lock)
        aws.clock.reset()
        stack = kept.stack
    else:
        aws.reset()
        parameters = _parameters(mode, source)
        stack = (
            deploy(aws.endpoint_url) if parameters is None else deploy(aws.endpoint_url, parameter_overrides=parameters)
        )
        kept = _Reusable(stack, Deployed.capture(aws.lock, ACCOUNT_ID, REGION))
    if reusable:
        _REUSABLE[key] = kept
    return stack


def run_schedule(aws: EmbeddedAws, schedule: Schedule, options: RunOptions | None = None) -> ScheduleOutcome:
    """Run `schedule` on a fresh stack of `aws` (see _fresh_stack) and judge the invariants."""
    began = time.monotonic()
    run = _Run(aws, options or RunOptions())
    try:
        converged, problems = run.run(schedule)
        evidence = run.evidence(converged)
    finally:
        stop_running(run.sfn, [run.stack.state_machine_arn])
    report, violations = check(evidence, NOT_REDRIVEN)
    run.stats.seconds = time.monotonic() - began
    return ScheduleOutcome(schedule, problems + violations, report, run.stats)
