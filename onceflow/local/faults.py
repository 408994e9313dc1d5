"""Fault injection into the embedded AWS: patch a moto backend operation to fail.

Each fault counts the calls it saw and the failures it injected, so a test can prove the fault
really happened. Patches are class-level, so they reach the backends behind the server.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any

from moto.dynamodb.exceptions import ERROR_TYPE_PREFIX, DynamodbException, TransactionCanceledException
from moto.dynamodb.models import DynamoDBBackend
from moto.sns.exceptions import SNSException
from moto.sns.models import SNSBackend
from moto.sqs.exceptions import SQSException
from moto.sqs.models import SQSBackend

from onceflow_common.status_change import event_id_of


@dataclass
class Fault:
    """A running fault: fails the first `times` matching calls (all of them if None) while open."""

    name: str
    times: int | None
    calls: int = 0
    injected: int = 0
    open: bool = True
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def should_fail(self) -> bool:
        with self._lock:
            self.calls += 1
            if not self.open or (self.times is not None and self.injected >= self.times):
                return False
            self.injected += 1
            return True

    def close(self) -> None:
        """End an outage window: later calls go through."""
        self.open = False


def inject(
    owner: type,
    method: str,
    error: Callable[[], Exception],
    times: int | None = None,
    applies: Callable[..., bool] = lambda *args, **kwargs: True,
    name: str | None = None,
) -> AbstractContextManager[Fault]:
    """Fail `owner.method` with `error()` on the first `times` calls that `applies` accepts."""
    return _inject_call(owner, method, lambda *args, **kwargs: error(), times, applies, name)


@contextmanager
def _inject_call(
    owner: type,
    method: str,
    error: Callable[..., Exception],
    times: int | None = None,
    applies: Callable[..., bool] = lambda *args, **kwargs: True,
    name: str | None = None,
) -> Iterator[Fault]:
    """Like `inject`, with the error built from the call's arguments."""
    original = getattr(owner, method)
    fault = Fault(name=name or f"{owner.__name__}.{method}", times=times)

    def failing(self: Any, *args: Any, **kwargs: Any) -> Any:
        if applies(*args, **kwargs) and fault.should_fail():
            raise error(*args, **kwargs)
        return original(self, *args, **kwargs)

    setattr(owner, method, failing)
    try:
        yield fault
    finally:
        setattr(owner, method, original)


class _SnsError(SNSException):
    def __init__(self, code: str, message: str):
        self.code = code
        super().__init__(message)


def sns_publish_failures(times: int | None = None, code: str = "Throttled") -> Any:
    """SNS Publish fails (`SNS.ThrottledException` for the default code) `times` times, or until closed."""
    return inject(
        SNSBackend,
        "publish",
        lambda: _SnsError(code, f"Injected fault: {code}"),
        times=times,
        name=f"sns.publish:{code}",
    )


# Cancellation reasons as DynamoDB reports them, one per item of the transaction, in request
# order, `None` for the items that did not cause the cancellation:
# https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html
TRANSACTION_CONFLICT = ("TransactionConflict", "Transaction is ongoing for the item")
THROTTLING_ERROR = (
    "ThrottlingError",
    "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling"
    " your table or index so please try again shortly.",
)


def _cancellation(reason: tuple[str, str], position: int, transact_items: list[dict[str, Any]]) -> Exception:
    """TransactionCanceledException with `reason` on the item at `position` (negative counts from
    the end). The Step Functions aws-sdk integration reports it as
    `DynamoDb.TransactionCanceledException` with the codes in the cause, e.g.
    "Transaction cancelled, please refer cancellation reasons for specific reasons
    [None, TransactionConflict] (Service: DynamoDb, Status Code: 400, Request ID: ...)"."""
    reasons: list[tuple[str | None, str | None, None]] = [(None, None, None)] * len(transact_items)
    reasons[position] = (reason[0], reason[1], None)
    return TransactionCanceledException(reasons)


def transaction_cancellations(
    reason: tuple[str, str], times: int | None = None, position: int = 0, table_contains: str | None = None
) -> Any:
    """TransactWriteItems is cancelled with `reason` on one item and nothing written.

    The item is the one at `position` of the request, or, with `table_contains`, the first item
    whose table name contains that text (transactions without such an item go through)."""

    def target(transact_items: list[dict[str, Any]]) -> int | None:
        if table_contains is None:
            return position if -len(transact_items) <= position < len(transact_items) else None
        for index, item in enumerate(transact_items):
            operation = next(iter(item.values()))
            if table_contains in operation.get("TableName", ""):
                return index
        return None

    return _inject_call(
        DynamoDBBackend,
        "transact_write_items",
        lambda transact_items, *args, **kwargs: _cancellation(reason, target(transact_items), transact_items),
        times=times,
        applies=lambda transact_items, *args, **kwargs: target(transact_items) is not None,
        name=f"dynamodb.transact_write_items:{reason[0]}",
    )


def dynamodb_transaction_conflicts(
    times: int | None = None, position: int = 0, table_contains: str | None = None
) -> Any:
    """TransactWriteItems is cancelled by a conflicting transaction (reason `TransactionConflict`)."""
    return transaction_cancellations(TRANSACTION_CONFLICT, times, position, table_contains)


def dynamodb_transaction_throttled(
    times: int | None = None, position: int = 0, table_contains: str | None = None
) -> Any:
    """An item of TransactWriteItems is throttled: AWS cancels the transaction with reason
    `ThrottlingError`; it does not raise ProvisionedThroughputExceededException here."""
    return transaction_cancellations(THROTTLING_ERROR, times, position, table_contains)


def dynamodb_throttling(
    times: int | None = None, operation: str = "transact_write_items", table_contains: str | None = None
) -> Any:
    """A DynamoDB operation is throttled: single-item operations raise
    ProvisionedThroughputExceededException; a transaction is cancelled with `ThrottlingError`.
    `table_contains` limits it to matching tables (AWS throttles a table, not the account's calls)."""
    if operation == "transact_write_items":
        return dynamodb_transaction_throttled(times, table_contains=table_contains)

    def applies(*args: Any, **kwargs: Any) -> bool:
        table_name = kwargs.get("table_name", args[0] if args else "")
        return table_contains is None or table_contains in str(table_name)

    return inject(
        DynamoDBBackend,
        operation,
        lambda: DynamodbException(
            ERROR_TYPE_PREFIX + "ProvisionedThroughputExceededException", "Injected fault: throughput exceeded"
        ),
        times=times,
        applies=applies,
        name=f"dynamodb.{operation}:ProvisionedThroughputExceeded",
    )


def sqs_send_failures(queue_url_contains: str, times: int | None = None) -> Any:
    """SendMessage to a matching queue fails (e.g. the dead-letter queue is unreachable)."""

    def applies(queue_name: str, *args: Any, **kwargs: Any) -> bool:
        return queue_url_contains in queue_name

    return inject(
        SQSBackend,
        "send_message",
        lambda: SQSException("InternalError", "Injected fault: send failed"),
        times=times,
        applies=applies,
        name=f"sqs.send_message:{queue_url_contains}",
    )


def start_execution_failures(times: int | None = None, event_id: str | None = None, express: bool = False) -> Any:
    """StartExecution (`express`: the engine's StartSyncExecution) is denied, AccessDeniedException:
    not retried by boto3, so each invocation fails exactly once; with `event_id`, only the
    executions of that event (the `event_id` of the starter's input)."""
    from moto.core.exceptions import AWSError
    from moto.stepfunctions.parser.models import StepFunctionsParserBackend

    from onceflow.engine.stepfunctions.api import sync_execution

    def applies(
        state_machine_arn: str, name: str | None = None, execution_input: str | None = None, *_: Any, **__: Any
    ) -> bool:
        return event_id is None or event_id_of(execution_input) == event_id

    operation = "start_sync_execution" if express else "start_execution"
    return inject(
        # sync_execution.start is a module function the request handler looks up there.
        sync_execution if express else StepFunctionsParserBackend,  # type: ignore[arg-type]
        "start" if express else "start_execution",
        lambda: AWSError("Injected fault: not authorized", exception_type="AccessDeniedException"),
        times=times,
        applies=applies,
        name=f"stepfunctions.{operation}:AccessDeniedException",
    )


def step_functions_throttling(times: int | None = None, operation: str = "start_execution") -> Any:
    """Sustained throttling of StartExecution or StartSyncExecution (`operation`): each call in the
    window answers ThrottlingException (HTTP 400, "Rate exceeded"), as AWS does over the token
    bucket (https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html). Applied at
    the endpoint's response, where the engine's StartSyncExecution lives."""
    from moto.stepfunctions.responses import StepFunctionResponse

    from onceflow.engine.bookkeeping.quotas import ThrottlingException

    if operation not in ("start_execution", "start_sync_execution"):
        raise ValueError(f"operation {operation!r}: start_execution or start_sync_execution")
    return inject(
        StepFunctionResponse,
        operation,
        ThrottlingException,
        times=times,
        name=f"stepfunctions.{operation}:ThrottlingException",
    )
