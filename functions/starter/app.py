"""Starter Lambda: SQS batch in, one Step Functions execution per record out.

Partial batch responses: a record that fails is reported in `batchItemFailures` and redelivered
by SQS; a record that can never succeed is dead-lettered with its reason and acknowledged.
Records of a batch are handled concurrently (bounded); each log line carries the keys of its own
record and invocation only (per-thread context keys, not the Logger's shared ones).

With a FIFO source (R5) the concurrency is per message group: a group's records one after the
other, each acknowledged only once its execution ended (EXPRESS: StartSyncExecution; STANDARD:
StartExecution, then DescribeExecution until it ended) or it was dead-lettered, and a group stops
at its first failure: that record and the group's later ones are reported failed, as Lambda asks of
FIFO partial batch responses. When that failure is a throttle that outlasted the invocation, they
are also kept in flight for longer each round (starter/throttling.py, `hold_back`), so a sustained
throttle spends their receives slowly.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from starter import clients, executions, throttling
from starter.batch import Delivery, Handled, by_message_group, parse_batch
from starter.dead_letter import Reason, send_to_dead_letter_queue
from starter.executions import (
    ExecutionEndedBadly,
    ExecutionRejected,
    run_sync_execution,
    start_execution,
    wait_for_execution,
)
from starter.precheck import already_sent
from starter.settings import ConfigurationError, Settings
from starter.throttling import NotStarted, StillThrottled, hold_back, last_receives, receive_count_of, requeue

logger = Logger()
metrics = Metrics()
_cold_start = True

# outcome -> (metric, log line)
OUTCOMES = {
    "started": ("ExecutionsStarted", "Execution started"),
    "already_started": ("ExecutionsAlreadyStarted", "Delivery already handed over: execution exists"),
    "already_sent": ("AlreadySentAcknowledged", "Already sent with this payload: acknowledged without an execution"),
    "finished": ("SyncExecutionsFinished", "Execution finished the event"),
    "dead_lettered_by_workflow": ("SyncExecutionsDeadLettered", "Execution dead-lettered the event"),
    "dead_lettered": ("InvalidMessagesDeadLettered", "Invalid message: dead-lettering it"),
    "rejected": ("RejectedExecutionsDeadLettered", "Step Functions refused the execution: dead-lettering it"),
    "ended_badly": ("EndedExecutionsDeadLettered", "Execution ended outside the workflow's paths: dead-lettering it"),
    "not_attempted": ("GroupRecordsHeldBack", "An earlier record of this message group failed: reported failed"),
    "requeued_throttled": (
        "ThrottledRecordsRequeued",
        "Step Functions throttled this record for the whole invocation: sent to the queue again",
    ),
    "requeued_out_of_time": (
        "RecordsRequeuedOutOfTime",
        "Too little of the invocation was left to hand this record over: sent to the queue again",
    ),
    "dead_lettered_throttled": (
        "ThrottledRecordsDeadLettered",
        "Throttled on its last receive: dead-lettering it with the reason before the redrive policy moves it",
    ),
}
# Step Functions calls answered ThrottlingException (each waited out or re-queued): the throttling alarm's metric.
THROTTLED_CALLS_METRIC = "StepFunctionsCallsThrottled"
# FIFO: records kept in flight after a throttle (the failed one and its group's held-back ones), and
# those whose visibility could not be changed (reported failed all the same: a receive spent sooner).
HELD_IN_FLIGHT_METRIC = "ThrottledRecordsHeldInFlight"
NOT_HELD_METRIC = "ThrottledRecordsNotHeldInFlight"


def reset_clients() -> None:
    """Forget cached clients (the local runtime calls this when the endpoint changes)."""
    clients.reset()
    throttling.forget_queues()


def _error_code(error: Exception) -> dict[str, str]:
    """An AWS error's code (botocore's ClientError class name alone does not say which)."""
    response = getattr(error, "response", None)
    details = response.get("Error") if isinstance(response, dict) else None
    code = details.get("Code") if isinstance(details, dict) else None
    return {"error_code": code} if isinstance(code, str) else {}


def _dead_letter(
    delivery: Delivery, settings: Settings, reason: Reason, outcome: str, deduplication_key: str = ""
) -> str:
    logger.warning(OUTCOMES[outcome][1], field=reason.field, rule=reason.rule, reason=reason.cause)
    # If this send fails the exception marks the record failed, so SQS keeps the message.
    send_to_dead_letter_queue(
        clients.client("sqs"),
        settings.dead_letter_queue_url,
        delivery.body,
        reason,
        group_id=delivery.group_id,
        deduplication_key=deduplication_key,
    )
    return outcome


def _hand_over(delivery: Delivery, settings: Settings, remaining_seconds: Callable[[], float]) -> str:
    if delivery.failure is not None:
        raise delivery.failure
    if delivery.invalid is not None:
        return _dead_letter(delivery, settings, Reason.invalid(delivery.invalid), "dead_lettered")
    event = delivery.event
    assert event is not None
    if delivery.already_sent:
        logger.info(OUTCOMES["already_sent"][1])
        return "already_sent"
    try:
        if settings.express:
            sfn = clients.client("stepfunctions", read_timeout=settings.sync_execution_timeout_seconds)
            handover = run_sync_execution(
                sfn,
                settings.state_machine_arn,
                event,
                delivery.message_id,
                settings.sync_execution_timeout_seconds,
                remaining_seconds,
            )
        else:
            sfn = clients.client("stepfunctions")
            handover = start_execution(sfn, settings.state_machine_arn, event, delivery.message_id, remaining_seconds)
            if settings.waits_for_standard_executions:
                handover = wait_for_execution(
                    sfn,
                    handover,
                    settings.state_machine_arn,
                    settings.sync_execution_timeout_seconds,
                    remaining_seconds,
                )
    except ExecutionRejected as rejected:
        reason = Reason.rejected(rejected, delivery.message_id, event.event_id)
        return _dead_letter(delivery, settings, reason, "rejected")
    except ExecutionEndedBadly as ended:
        # Keyed by the execution as the reconciler keys its letter of it: SQS keeps one of the two.
        reason = Reason.ended_badly(ended, delivery.message_id, event.event_id)
        return _dead_letter(delivery, settings, reason, "ended_badly", deduplication_key=ended.execution_arn)
    except (StillThrottled, NotStarted) as stopped:
        if settings.fifo or not settings.source_queue_url or delivery.record is None:
            raise  # reported failed: SQS keeps it (a FIFO record must not go behind its group's later ones)
        message_id, delay = requeue(clients.client("sqs"), settings.source_queue_url, delivery.record)
        outcome = "requeued_throttled" if isinstance(stopped, StillThrottled) else "requeued_out_of_time"
        logger.warning(OUTCOMES[outcome][1], requeued_as=message_id, delay_seconds=delay)
        return outcome
    extra = {"execution_arn": handover.execution_arn} if handover.execution_arn else {}
    logger.info(OUTCOMES[handover.outcome][1], execution_name=handover.name, **extra)
    return handover.outcome


def handle_record(delivery: Delivery, settings: Settings, remaining_seconds: Callable[[], float]) -> Handled:
    """One record, in its own logging context: an outcome, or the error that reports it failed."""
    keys: dict[str, str] = {"message_id": delivery.message_id}
    if delivery.event_id:
        keys.update(event_id=delivery.event_id, correlation_id=delivery.event_id)
    logger.thread_safe_append_keys(**keys)
    try:
        return Handled(delivery.message_id, _hand_over(delivery, settings, remaining_seconds))
    except Exception as error:
        logger.exception("Record failed; SQS will redeliver it", **_error_code(error))
        return Handled(delivery.message_id, None, throttled=isinstance(error, StillThrottled))


def _hold_back_throttled(deliveries: list[Delivery], settings: Settings) -> None:
    """A FIFO group stopped by a throttle: its records stay in flight longer (never a reason to lose one)."""
    records = [d.record for d in deliveries if d.record is not None and d.record.get("receiptHandle")]
    if not settings.source_queue_url or not records:
        return
    try:
        seconds, not_held = hold_back(clients.client("sqs"), settings.source_queue_url, records)
    except Exception as error:
        logger.warning(
            "Could not keep throttled records in flight; SQS redelivers them after the visibility timeout",
            error=repr(error),
            **_error_code(error),
        )
        metrics.add_metric(name=NOT_HELD_METRIC, unit=MetricUnit.Count, value=len(records))
        return
    held = len(records) - len(not_held)
    logger.warning(
        "Step Functions throttled this group for the whole invocation: its records stay in flight",
        message_group_id=deliveries[0].group_id,
        visibility_timeout_seconds=seconds,
        held=[r["messageId"] for r in records if r["messageId"] not in not_held],
        not_held=not_held,
    )
    if held:
        metrics.add_metric(name=HELD_IN_FLIGHT_METRIC, unit=MetricUnit.Count, value=held)
    if not_held:
        metrics.add_metric(name=NOT_HELD_METRIC, unit=MetricUnit.Count, value=len(not_held))


def _settle_throttled_group(deliveries: list[Delivery], settings: Settings) -> set[str]:
    """A FIFO group stopped by a throttle (the throttled record first): the records on their last
    receive are dead-lettered with the reason, in order (throttling.py, `last_receives`: the redrive
    policy would move them with none); the others stay in flight longer. Returns the dead-lettered."""
    records = [d.record for d in deliveries if d.record is not None and d.record.get("receiptHandle")]
    limit = None
    if settings.source_queue_url and records:
        limit = throttling.max_receive_count(clients.client("sqs"), settings.source_queue_url)
    last = {record["messageId"] for record in last_receives(records, limit)}
    settled: set[str] = set()
    head = deliveries[0]
    for delivery in deliveries:
        if delivery.message_id not in last:
            continue
        receives = receive_count_of(delivery.record or {})
        behind = None if delivery is head else head.message_id
        reason = (
            Reason.invalid(delivery.invalid)
            if delivery.invalid is not None
            else Reason.throttled(delivery.message_id, delivery.event_id, receives, behind)
        )
        try:
            _dead_letter(delivery, settings, reason, "dead_lettered_throttled")
        except Exception as error:  # the rest stay failed, in order: SQS's redrive policy is the fallback
            logger.warning("Could not dead-letter a throttled record", error=repr(error), **_error_code(error))
            break
        settled.add(delivery.message_id)
    _hold_back_throttled([d for d in deliveries if d.message_id not in settled], settings)
    return settled


def handle_in_order(
    deliveries: list[Delivery], settings: Settings, remaining_seconds: Callable[[], float]
) -> list[Handled]:
    """Records one after the other, stopping at the first failure: it and every later record are
    reported failed without being attempted, so none overtakes it (a FIFO message group)."""
    handled: list[Handled] = []
    for index, delivery in enumerate(deliveries):
        result = contextvars.copy_context().run(handle_record, delivery, settings, remaining_seconds)
        handled.append(result)
        if result.outcome is None:
            held_back = deliveries[index + 1 :]
            if held_back:
                logger.warning(
                    OUTCOMES["not_attempted"][1],
                    message_group_id=delivery.group_id,
                    failed_message_id=delivery.message_id,
                    held_back=[d.message_id for d in held_back],
                )
                metrics.add_metric(name=OUTCOMES["not_attempted"][0], unit=MetricUnit.Count, value=len(held_back))
            handled.extend(Handled(d.message_id, None) for d in held_back)
            if result.throttled and settings.fifo:
                settled = _settle_throttled_group(deliveries[index:], settings)
                handled = [
                    Handled(h.message_id, "dead_lettered_throttled") if h.message_id in settled else h for h in handled
                ]
            break
    return handled


def _invocation_keys(context: Any) -> dict[str, Any]:
    global _cold_start
    cold, _cold_start = _cold_start, False
    return {
        "cold_start": cold,
        "function_name": context.function_name,
        "function_memory_size": context.memory_limit_in_mb,
        "function_arn": context.invoked_function_arn,
        "function_request_id": context.aws_request_id,
    }


def _mark_already_sent(deliveries: list[Delivery], settings: Settings) -> list[Delivery]:
    events = [d.event for d in deliveries if d.event is not None]
    if not settings.processed_events_table or not events:
        return deliveries
    try:
        sent = already_sent(clients.client("dynamodb"), settings.processed_events_table, events)
    except Exception as error:  # only an optimisation: without it every event starts its execution
        logger.warning("Already-sent lookup failed; starting every execution", error=repr(error), **_error_code(error))
        return deliveries
    return [
        d.with_already_sent(d.event is not None and (d.event.event_id, d.event.payload_hash) in sent)
        for d in deliveries
    ]


class _Counter:
    def __init__(self) -> None:
        self.value = 0
        self._lock = threading.Lock()

    def add(self) -> None:
        with self._lock:
            self.value += 1


def _handle_batch(event: dict[str, Any], context: Any) -> dict[str, Any]:
    logger.thread_safe_append_keys(**_invocation_keys(context))
    try:
        settings = Settings.from_environment()
    except ConfigurationError:
        # Every record would fail the same way: fail the invocation (visible in the function's
        # Errors metric); SQS keeps the whole batch and its redrive policy applies.
        logger.exception("Starter misconfigured; no record of this batch was handled")
        metrics.add_metric(name="ConfigurationErrors", unit=MetricUnit.Count, value=1)
        raise
    records = event["Records"]
    deliveries = _mark_already_sent(parse_batch(records, settings), settings)

    began, first = throttling.monotonic(), context.get_remaining_time_in_millis() / 1000

    def remaining_seconds() -> float:
        """The context's count, and this invocation's own (a local runtime's context may not count down)."""
        return min(context.get_remaining_time_in_millis() / 1000, first - (throttling.monotonic() - began))

    throttled = _Counter()
    executions.on_throttled.set(throttled.add)  # seen by each record's copy of this context
    # A FIFO source's unit of work is a message group (its records in order); a standard one's a record.
    runs = by_message_group(deliveries) if settings.fifo else [[delivery] for delivery in deliveries]
    workers = max(1, min(settings.max_concurrent_records, len(runs)))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="record") as pool:
        futures = [
            pool.submit(contextvars.copy_context().run, handle_in_order, run, settings, remaining_seconds)
            for run in runs
        ]
        handled = [h for future in futures for h in future.result()]
    for outcome in (h.outcome for h in handled if h.outcome is not None):
        metrics.add_metric(name=OUTCOMES[outcome][0], unit=MetricUnit.Count, value=1)
    if throttled.value:
        metrics.add_metric(name=THROTTLED_CALLS_METRIC, unit=MetricUnit.Count, value=throttled.value)
    failed = [h.message_id for h in handled if h.outcome is None]
    metrics.add_metric(name="BatchRecordsFailed", unit=MetricUnit.Count, value=len(failed))
    if failed:
        logger.error("Records reported failed; SQS will redeliver them", failed=len(failed), batch_size=len(records))
    return {"batchItemFailures": [{"itemIdentifier": message_id} for message_id in failed]}


@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    # A fresh logging context per invocation: keys set while handling it leave with it.
    return contextvars.copy_context().run(_handle_batch, event, context)
