"""The demo: a stream of the app's own events (bodies made from its domain's sample) through the whole
local pipeline (the example subscriber subscribed to the topic) while faults are injected, then a
redrive of the dead-letter queue and a report that judges R1–R4 (R5 with a FIFO source) on the
evidence. It refuses to judge a stream its domain does not accept, and no verdict passes on
nothing."""

from __future__ import annotations

import io
import json
import random
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from onceflow.domain import Domain, conflicting_candidates, fresh_bodies, poison_candidates
from onceflow.domain.bodies import id_prefix
from onceflow.engine import EmbeddedAws
from onceflow.local import faults
from onceflow.local.event_source import Invoke
from onceflow.local.pipeline import LocalPipeline
from onceflow.local.report import Expectation, RunReport, build_report, r5_verdict
from onceflow.local.safety_net import StatusEventLoss
from onceflow.local.stack import LocalStack, deploy
from onceflow.local.starter_parse import StarterParser
from onceflow.local.subscriber_check import subscriber_evidence
from onceflow.local.template import TEMPLATE_PATH
from onceflow.ops.executions import ExecutionResult
from onceflow.ops.observe import drain, scan
from onceflow.ops.workflow import PUBLISH, record_state

NOT_REDRIVEN = {"Onceflow.InvalidMessage", "Onceflow.PayloadConflict"}
# A chunk stands for less than the reconciler's schedule period: its rule fires after every third
# chunk (a count, not wall time, so a seeded demo makes the same runs on any machine).
SCHEDULE_EVERY_CHUNKS = 3


@dataclass
class DemoOptions:
    events: int = 500
    duplicate_rate: float = 0.3
    poison: int = 6
    conflicts: int = 3
    concurrency: int = 4
    chunks: int = 10
    # Retry and Wait delays recorded, not waited for, as in the tests: every fault is gated by chunk
    # and count, not by time, so waiting out 1 % of AWS's back-offs only made the demo longer.
    time_scale: float = 0.0
    seed: int = 7
    mode: str = "STANDARD"  # the template's StateMachineType
    source: str = "STANDARD"  # the template's SourceQueueType: FIFO adds R5
    groups: int = 20  # FIFO: events spread over this many message groups, round robin
    template: Path = TEMPLATE_PATH
    parameters: dict[str, str] = field(default_factory=dict)  # the template's others (--parameter)

    @property
    def fifo(self) -> bool:
        return self.source == "FIFO"


class ModeNotSupported(RuntimeError):
    """The chosen state machine type cannot run on this stack yet; the message says why."""


class StreamDoesNotFitDomain(RuntimeError):
    """The bodies made from the domain's sample are not what its starter accepts: nothing to judge."""


@dataclass
class FaultLog:
    """What was injected, counted, so the report can show the faults really happened."""

    counts: dict[str, int] = field(default_factory=dict)

    def add(self, name: str, n: int) -> None:
        self.counts[name] = self.counts.get(name, 0) + n


@dataclass(frozen=True)
class Stream:
    """The bodies of a run, made from the domain's sample and checked with the stack's own starter."""

    fresh: list[str]
    poison: list[str]  # each one the starter rejects, a kind of each in turn
    conflicting: list[str]  # an event_id of `fresh` reused with another payload, each accepted


def poison_kinds(domain: Domain, parser: StarterParser) -> list[str]:
    """One body of each kind that can never succeed on this app's starter (its validation decides
    which of the domain's own candidates are poison)."""
    return [body for _, body in poison_candidates(domain) if not parser.parse(body).accepted]


def domain_stream(domain: Domain, parser: StarterParser, options: DemoOptions) -> Stream:
    """Raises StreamDoesNotFitDomain when the starter rejects the sample's own bodies."""
    fresh = fresh_bodies(domain, options.events)
    rejected = parser.parse(fresh[0])
    if not rejected.accepted:
        raise StreamDoesNotFitDomain(
            f"the starter rejects the bodies made from the sample {domain.sample_path.name} with a fresh "
            f"{domain.event_id_path}: {rejected.rejected}; fix the sample or the payload validation"
        )
    kinds = poison_kinds(domain, parser)
    poison = [kinds[i % len(kinds)] for i in range(options.poison)]
    conflicting = []
    for i in range(options.conflicts):
        original = json.loads(fresh[(i * 37) % len(fresh)])
        accepted = (json.dumps(c) for c in conflicting_candidates(domain, original))
        found = next((body for body in accepted if parser.parse(body).accepted), None)
        if found is None:
            raise StreamDoesNotFitDomain(
                f"no field of the sample {domain.sample_path.name} can change and stay valid: "
                "a conflict (an event_id reused with another payload) cannot be made; run with --conflicts 0"
            )
        conflicting.append(found)
    return Stream(fresh, poison, conflicting)


class CrashAfterBatch:
    """Wraps a function's invoke: when armed, its next batch crashes after the function's work,
    before the acknowledgement (SQS delivers the batch again)."""

    def __init__(self, log: FaultLog, fault: str, message: str):
        self.armed = False
        self.log, self.fault, self.message = log, fault, message

    def wrap(self, invoke: Invoke) -> Invoke:
        def wrapped(event: dict[str, Any]) -> dict[str, Any]:
            response = invoke(event)
            if self.armed:
                self.armed = False
                self.log.add(self.fault, 1)
                raise RuntimeError(self.message)
            return response

        return wrapped


def redeliver_to_subscriber(pipeline: LocalPipeline, rng: random.Random, count: int, log: FaultLog) -> None:
    """SQS delivers notifications the subscriber already handled and deleted once more."""
    for logical_id, source in pipeline.subscriber_sources.items():
        handled = source.acknowledged_records
        sample = rng.sample(handled, min(count, len(handled)))
        if sample:
            response = pipeline.subscribers[logical_id].invoke({"Records": sample})
            log.add("notifications delivered again to the subscriber", len(sample))
            log.add("subscriber redeliveries reported failed", len(response["batchItemFailures"]))


@contextmanager
def _counted(fault_cm: Any, log: FaultLog, label: str) -> Iterator[faults.Fault]:
    with fault_cm as fault:
        yield fault
    log.add(label, fault.injected)


def chunked_stream(
    bodies: list[str], duplicate_rate: float, chunk_count: int, rng: random.Random
) -> tuple[list[list[str]], int]:
    """Events split into chunks, with duplicates mixed in: a quarter left for redeliveries of handled
    messages (returned as a count), a quarter as concurrent copies, the rest as producer resends."""
    events = len(bodies)
    duplicates = round(events * duplicate_rate / (1 - duplicate_rate))
    redeliveries = duplicates // 4
    concurrent = duplicates // 4
    resends = duplicates - redeliveries - concurrent
    chunk_size = max(1, len(bodies) // chunk_count)
    chunks = [bodies[i : i + chunk_size] for i in range(0, len(bodies), chunk_size)]
    for _ in range(resends):  # a producer resends an earlier event in a later chunk: new message id
        index = rng.randrange(len(chunks))
        chunks[min(index + 1, len(chunks) - 1)].append(rng.choice(chunks[index]))
    for _ in range(concurrent):  # copies side by side: handled in the same moment
        chunk = rng.choice(chunks)
        body = rng.choice(chunk)
        chunk.insert(chunk.index(body), body)
    return chunks, redeliveries


def _schedule(stream: Stream, options: DemoOptions, rng: random.Random) -> tuple[list[list[str]], list[str], int]:
    """Split the stream into chunks: events, producer resends, concurrent duplicates, poison, conflicts."""
    chunks, redeliveries = chunked_stream(stream.fresh, options.duplicate_rate, options.chunks, rng)
    for body in stream.poison:
        rng.choice(chunks).append(body)
    chunks[-1].extend(stream.conflicting)  # event ids reused with another payload, later on
    for chunk in chunks:
        rng.shuffle(chunk)
    flat = [body for chunk in chunks for body in chunk]
    return chunks, flat, redeliveries


def expectations(parser: StarterParser, bodies: list[str]) -> list[Expectation]:
    """Event id and payload hash of each body, computed by the stack's own starter."""
    parsed = [parser.parse(body, f"expected-{i}") for i, body in enumerate(bodies)]
    return [
        Expectation(p.event_id, p.payload_hash, p.body) if p.accepted else Expectation(None, None, p.body)
        for p in parsed
    ]


STOPPED_AFTER_RECORD = 3


def _events_in(domain: Domain, chunk: list[str], count: int) -> list[str]:
    """The first `count` distinct event ids of a chunk (poison has none)."""
    found: list[str] = []
    for body in chunk:
        event_id = domain.event_id_of(body)
        if event_id and event_id not in found:
            found.append(event_id)
        if len(found) == count:
            break
    return found


def message_group(domain: Domain, body: str, groups: int) -> str:
    """A FIFO source's message group of a body: its event spread round robin over `groups` groups
    (poison, which has no event_id, goes to the first)."""
    event_id = domain.event_id_of(body) or ""
    digits = "".join(c for c in event_id.rsplit("-", 1)[-1] if c.isdigit())
    index = int(digits) % groups if digits else 0
    return f"{id_prefix(domain)}-group-{index}"


def redrive_transient(pipeline: LocalPipeline) -> int:
    """Move dead letters that a retry can fix back to the source queue (what an operator does)."""
    from onceflow.ops.redrive import redrive

    report = redrive(
        pipeline.sqs,
        pipeline.stack.dead_letter_queue_url,
        pipeline.stack.source_queue_url,
        dry_run=False,
        limit=None,
        skip_errors=NOT_REDRIVEN,
    )
    return report.moved


def _mode_parameters(mode: str, source: str = "STANDARD") -> dict[str, str]:
    # The demo subscribes the example subscriber to the topic and judges R4 on it.
    parameters = {"DeploySubscriber": "true", **({} if mode == "STANDARD" else {"StateMachineType": mode})}
    if source == "FIFO":  # the batching window's default gives a FIFO source none (Lambda allows none)
        parameters.update(SourceQueueType="FIFO")
    return parameters


def _check_mode(stack: LocalStack, mode: str) -> None:
    """EXPRESS needs a starter that runs executions synchronously (StartSyncExecution): the spec
    forbids asynchronous Express. Until the template tells the starter the type, refuse it."""
    if mode != "STANDARD" and mode not in stack.starter_environment.values():
        raise ModeNotSupported(
            f"the template deploys an {mode} state machine, but does not tell the starter its type, so the "
            "starter would start asynchronous executions (at-least-once, no status events): not run"
        )


@dataclass
class DemoRun:
    report: RunReport
    faults: FaultLog
    pipeline: LocalPipeline
    executions: list[ExecutionResult]


def run_demo(
    options: DemoOptions,
    progress: Callable[[str, int, int], None] | None = None,
    log_stream: io.TextIOBase | None = None,
    aws: EmbeddedAws | None = None,
) -> DemoRun:
    """Run the demo; on `aws` if given (it is reset first), else on a new embedded AWS."""
    rng = random.Random(options.seed)
    log = FaultLog()
    crash = CrashAfterBatch(
        log, "starter crash after StartExecution, before ack", "injected crash after StartExecution"
    )
    subscriber_crash = CrashAfterBatch(  # each record of the batch delivered again is then a duplicate
        log, "subscriber crash after its write, before the ack", "injected subscriber crash after the write"
    )
    if aws is None:
        aws = EmbeddedAws(time_scale=options.time_scale).start()
    else:
        aws.reset()
    stack = deploy(
        aws.endpoint_url,
        parameter_overrides={**options.parameters, **_mode_parameters(options.mode, options.source)},
        template_path=options.template,
    )
    _check_mode(stack, options.mode)
    domain = stack.domain
    parser = StarterParser(stack)
    stream = domain_stream(domain, parser, options)
    # Every status change event lost (AWS delivers them best effort; Express sends none): the
    # executions stopped after Record below reach the DLQ only through the reconciler's sweep.
    loss = StatusEventLoss(fraction=1.0, seed=options.seed) if options.mode == "STANDARD" else None
    pipeline = LocalPipeline(
        aws,
        stack,
        log_stream=log_stream or io.StringIO(),
        invoke_wrapper=crash.wrap,
        status_event_loss=loss,
        subscriber_wrapper=subscriber_crash.wrap,
    )
    # Imported here: the fault schedules' package imports this module.
    from onceflow.devtools.schedules.effects import EffectLog, order_violations
    from onceflow.devtools.schedules.hooks import ExecutionInterrupts

    interrupts = ExecutionInterrupts(stack.client("stepfunctions"))
    # FIFO: the order of sends, dead letters, writes and notifications, for R5.
    effects = EffectLog(
        stack.source_queue_url.rsplit("/", 1)[-1],
        stack.dead_letter_queue_url.rsplit("/", 1)[-1],
        stack.business_table,
        stack.business_key,
        domain.event_id_of,
    )
    pipeline.event_source.time_scale = 0.0  # visibility timeouts fast-forwarded; retries only scaled
    chunks, bodies, redeliveries = _schedule(stream, options, rng)
    total = len(bodies)

    def on_batch(handled: int) -> None:
        if progress:
            progress("messages acknowledged by the starter", pipeline.event_source.stats.acknowledged, total)

    outage_from, outage_to = 2, 3  # chunks during which SNS is down for longer than Publish retries
    redelivery_budget = redeliveries
    with ExitStack() as logging_effects:
        if options.fifo:  # the redrive below is logged too: a redriven letter goes to the end of its group
            logging_effects.enter_context(effects.installed())
        with ExitStack() as outage, interrupts.installed():
            for index, chunk in enumerate(chunks):
                with ExitStack() as chunk_faults:
                    if index == 1:
                        crash.armed = True
                    if index in (2, 7):
                        subscriber_crash.armed = True
                    if index == outage_from:
                        outage.enter_context(
                            _counted(faults.sns_publish_failures(), log, "SNS outage (failed publishes)")
                        )
                    if index == outage_to + 1:
                        outage.close()
                    if index == 4 and loss is not None:
                        for event_id in _events_in(domain, chunk, STOPPED_AFTER_RECORD):
                            interrupts.arm(event_id, PUBLISH, "stop")
                    if index == 5:
                        chunk_faults.enter_context(
                            _counted(faults.dynamodb_throttling(times=5), log, "DynamoDB throttling (transactions)")
                        )
                    if index == 6:
                        chunk_faults.enter_context(
                            _counted(
                                faults.dynamodb_transaction_conflicts(times=4), log, "DynamoDB transaction conflicts"
                            )
                        )
                    groups = [message_group(domain, body, options.groups) for body in chunk] if options.fifo else None
                    pipeline.send(chunk, groups=groups)
                    # The reconciler's schedule fires after every SCHEDULE_EVERY_CHUNKS-th chunk, not
                    # after each; the calls after the last chunk run it whenever anything ended.
                    pipeline.process(
                        concurrency=options.concurrency,
                        on_batch=on_batch,
                        schedule=(index + 1) % SCHEDULE_EVERY_CHUNKS == 0,
                    )
                # A FIFO queue hands no deleted message over again: that fault is a standard queue's only.
                handled = [] if options.fifo else pipeline.event_source.acknowledged_records
                take = min(redelivery_budget // max(1, len(chunks) - index), len(handled))
                if take:  # SQS redelivers messages that were already handled and deleted
                    sample = rng.sample(handled, take)
                    response = pipeline.starter.invoke({"Records": sample})
                    log.add("redeliveries of handled messages", take)
                    log.add("redeliveries reported failed", len(response["batchItemFailures"]))
                    redelivery_budget -= take
                redeliver_to_subscriber(pipeline, rng, 2, log)
            pipeline.process(concurrency=options.concurrency, on_batch=on_batch)
        if loss is not None:
            log.add("executions stopped after Record (an operator's StopExecution)", len(interrupts.fired))
            log.add("status change events lost", loss.lost)

        moved = redrive_transient(pipeline)
        log.add("dead letters redriven after the outage", moved)
        total += moved
        pipeline.process(concurrency=options.concurrency, on_batch=on_batch)

    sqs = stack.client("sqs")
    dynamodb = stack.client("dynamodb")
    executions = pipeline.executions()
    report = build_report(
        sent=expectations(parser, bodies),
        state_records=scan(dynamodb, stack.processed_events_table),
        business_rows=scan(dynamodb, stack.business_table),
        notifications=pipeline.inbox.collect(),
        dead_letters=drain(sqs, stack.dead_letter_queue_url, delete=False),
        executions=executions,
        subscriber=subscriber_evidence(pipeline),
        business_key=stack.business_key,
        record_state=record_state(definition_of(pipeline)),
    )
    if options.fifo:
        groups = Counter(group for group, event in {(e.group, e.event_id) for e in effects.effects if e.kind == "sent"})
        report.verdicts.append(r5_verdict(dict(groups), len(effects.effects), order_violations(effects.effects)))
    return DemoRun(report, log, pipeline, executions)


def definition_of(pipeline: LocalPipeline) -> dict[str, Any]:
    described = pipeline.sfn.describe_state_machine(stateMachineArn=pipeline.stack.state_machine_arn)
    return json.loads(described["definition"])


def write_trace(run: DemoRun, path: Path) -> Path:
    from onceflow.devtools.trace import write_trace as render

    return render(definition_of(run.pipeline), run.executions, path)
