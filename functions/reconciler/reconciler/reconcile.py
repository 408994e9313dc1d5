"""What the reconciler does with each execution or pending event it finds.

Every path that can dead-letter an ended execution (a status change event, the sweep of ended
executions, the sweep of pending events) goes through `_dead_letter`, which claims the
execution's marker first: whichever comes first sends, the others find the marker.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from botocore.exceptions import ClientError

from onceflow_common.batch_reads import MAX_KEYS_PER_REQUEST
from onceflow_common.status_change import DEAD_LETTERED_ERROR, EndedExecution, needs_dead_letter
from reconciler import dead_letter, sources
from reconciler.claims import Claims, execution_key
from reconciler.settings import Settings

STUCK_PENDING_ERROR = "Onceflow.StuckPending"
# DescribeExecution finds nothing to read: history past its 90 days, or an Express execution.
_NO_EXECUTION_TO_READ = {"ExecutionDoesNotExist", "StateMachineTypeNotSupported", "InvalidArn"}
T = TypeVar("T")


def _chunks(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """`items` in lists of at most `size`, read lazily (a sweep's listing pages on as it goes)."""
    iterator = iter(items)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


def _code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


@dataclass
class Outcome:
    """What one run did (also what its metrics and its log line report)."""

    dead_lettered: list[str] = field(default_factory=list)  # execution ARNs
    already_handled: int = 0
    left_running: int = 0
    pending_too_long: int = 0
    unrecoverable: list[str] = field(default_factory=list)  # event_ids whose input no execution holds
    complete: bool = True

    def as_dict(self) -> dict[str, Any]:
        return {
            "dead_lettered": list(self.dead_lettered),
            "already_handled": self.already_handled,
            "left_running": self.left_running,
            "pending_too_long": self.pending_too_long,
            "unrecoverable": list(self.unrecoverable),
            "complete": self.complete,
        }


class Reconciler:
    def __init__(
        self, settings: Settings, sfn: Any, dynamodb: Any, sqs: Any, now: float, deadline: float | None = None
    ):
        self.settings = settings
        self.sfn, self.dynamodb, self.sqs = sfn, dynamodb, sqs
        self.now = int(now)
        self._deadline = deadline  # time.monotonic() value by which the run must stop
        self.claims = Claims(
            dynamodb, settings.reconciler_table, settings.claim_retention_seconds, settings.claim_stale_seconds
        )
        self.outcome = Outcome()

    # --- entry points --------------------------------------------------------------------
    def status_change(self, event: dict[str, Any]) -> Outcome:
        """A status change event the safety net rule matched."""
        ended = EndedExecution.from_event(event)
        self._ended(ended.execution_arn, ended if ended.input is not None else None)
        return self.outcome

    def sweep(self) -> Outcome:
        """The scheduled run: executions that ended badly since the checkpoint, then pending events."""
        self._sweep_ended_executions()
        self._sweep_pending_events()
        return self.outcome

    # --- the two sweeps ------------------------------------------------------------------
    def _sweep_ended_executions(self) -> None:
        lookback = self.settings.lookback_seconds
        checkpoint = self.claims.checkpoint()
        since = (checkpoint if checkpoint is not None else self.now) - lookback
        listed = sources.ended_executions(self.sfn, self.settings.state_machine_arn, since, lookback)
        try:
            for chunk in _chunks(listed, MAX_KEYS_PER_REQUEST):
                if not self._may_continue():
                    return
                keys = [execution_key(execution.execution_arn) for execution in chunk]
                settled = self.claims.settled_among(keys, self.now)
                for execution, key in zip(chunk, keys, strict=True):
                    if not self._may_continue():
                        return
                    self._ended(execution.execution_arn, None, settled=key in settled)
        except ClientError as error:
            if _code(error) != "StateMachineTypeNotSupported":
                raise
            return  # Express: no ListExecutions; SQS redelivery keeps R1 there, the pending sweep still counts
        if self.outcome.complete:
            # Never past the clock: a late-delivered schedule's time is earlier, which is only safer.
            self.claims.save_checkpoint(min(self.now, int(time.time())))

    def _sweep_pending_events(self) -> None:
        cutoff = self.now - self.settings.pending_threshold_seconds
        found = sources.pending_before(
            self.dynamodb, self.settings.processed_events_table, self.settings.pending_index, cutoff
        )
        for chunk in _chunks(found, MAX_KEYS_PER_REQUEST):
            self.outcome.pending_too_long += len(chunk)
            if not self._may_continue():
                continue  # still counted: the stuck-pending metric counts them all
            keys = [execution_key(p.execution_arn) for p in chunk if p.execution_arn is not None]
            settled = self.claims.settled_among(keys, self.now)
            for pending in chunk:
                if self._may_continue():
                    self._pending(
                        pending,
                        settled=pending.execution_arn is not None and execution_key(pending.execution_arn) in settled,
                    )

    # --- one execution or event ----------------------------------------------------------
    def _ended(self, execution_arn: str, known: EndedExecution | None, settled: bool | None = None) -> None:
        """`settled`: what the sweep's batch read of the markers found (None: read it now)."""
        key = execution_key(execution_arn)
        if settled is None:
            settled = self.claims.settled(key, self.now)
        if settled:
            self.outcome.already_handled += 1
            return
        execution = known or self._describe(execution_arn)
        if execution is None or execution.status == "RUNNING":
            self.outcome.left_running += execution is not None
            return
        if needs_dead_letter(execution.status, execution.error):
            self._dead_letter(key, execution, dead_letter.reason_for(execution))
        elif execution.error == DEAD_LETTERED_ERROR and execution.stopped_at is not None:
            # The workflow dead-lettered its event itself. Remembered (as the pending sweep remembers
            # it), so that the runs still to list it, every run for `lookback_seconds` after it ended,
            # read the marker instead of calling DescribeExecution for it again.
            self.claims.leave_to_state_machine(
                key, self.now, int(execution.stopped_at + self.settings.claim_retention_seconds)
            )
            self.outcome.already_handled += 1

    def _pending(self, pending: sources.PendingEvent, settled: bool) -> None:
        if pending.execution_arn is None:
            self.outcome.unrecoverable.append(pending.event_id)
            return
        key = execution_key(pending.execution_arn)
        if settled:
            self.outcome.already_handled += 1
            return
        execution = self._describe(pending.execution_arn)
        if execution is None:  # past Step Functions' 90-day history, or Express: the body is gone
            self.outcome.unrecoverable.append(pending.event_id)
            return
        if execution.status == "RUNNING":
            self.outcome.left_running += 1
            return
        if needs_dead_letter(execution.status, execution.error):
            self._dead_letter(key, execution, dead_letter.reason_for(execution))
            return
        stopped_at = execution.stopped_at
        dead_letter_may_remain = (
            stopped_at is not None and stopped_at + self.settings.claim_retention_seconds > self.now
        )
        if execution.error == DEAD_LETTERED_ERROR and dead_letter_may_remain:
            self.claims.leave_to_state_machine(key, self.now, int(stopped_at + self.settings.claim_retention_seconds))
            self.outcome.already_handled += 1
            return
        # Pending although its execution succeeded, or dead-lettered so long ago that the dead
        # letter may have expired from the queue: give an operator a fresh one, unless another
        # execution (a redrive) has marked it sent since the index was read.
        if not self._still_pending(pending.event_id):
            return
        cause = (
            f"event {pending.event_id} pending since {pending.pending_since}; its execution ended "
            f"{execution.status}{f' ({execution.error})' if execution.error else ''} and no dead letter of it "
            "is known to remain"
        )
        self._dead_letter(key, execution, dead_letter.Reason(STUCK_PENDING_ERROR, cause))

    def _dead_letter(self, key: str, execution: EndedExecution, reason: dead_letter.Reason) -> None:
        if len(self.outcome.dead_lettered) >= self.settings.max_dead_letters_per_run:
            self.outcome.complete = False
            return
        claim = self.claims.claim(key, self.now)
        if claim is None:
            self.outcome.already_handled += 1
            return
        try:
            if execution.input is None:
                execution = self._describe(execution.execution_arn) or execution
            dead_letter.send(self.sqs, self.settings.dead_letter_queue_url, execution, reason)
        except Exception:
            self.claims.release(claim)  # a retry of this invocation may send it; a crash leaves it to go stale
            raise
        self.claims.complete(claim)
        self.outcome.dead_lettered.append(execution.execution_arn)

    # --- helpers -------------------------------------------------------------------------
    def _describe(self, execution_arn: str) -> EndedExecution | None:
        try:
            described = self.sfn.describe_execution(executionArn=execution_arn)
        except ClientError as error:
            if _code(error) in _NO_EXECUTION_TO_READ:
                return None
            raise
        return EndedExecution.from_description(described)

    def _still_pending(self, event_id: str) -> bool:
        item = self.dynamodb.get_item(
            TableName=self.settings.processed_events_table,
            Key={"event_id": {"S": event_id}},
            ProjectionExpression="#status",
            ExpressionAttributeNames={"#status": "status"},
            ConsistentRead=True,
        ).get("Item")
        return item is not None and item.get("status", {}).get("S") == "pending"

    def _may_continue(self) -> bool:
        if self._deadline is not None and time.monotonic() > self._deadline:
            self.outcome.complete = False
        return self.outcome.complete
