"""Fault injection into the embedded AWS: patch a moto backend operation to fail.

Each fault counts the calls it saw and the failures it injected, so a test can prove the fault
really happened. Patches are class-level, so they reach the backends behind the server.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from moto.dynamodb.exceptions import ERROR_TYPE_PREFIX, DynamodbException, TransactionCanceledException
from moto.dynamodb.models import DynamoDBBackend
from moto.sns.exceptions import SNSException
from moto.sns.models import SNSBackend
from moto.sqs.exceptions import SQSException
from moto.sqs.models import SQSBackend


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


@contextmanager
def inject(
    owner: type,
    method: str,
    error: Callable[[], Exception],
    times: int | None = None,
    applies: Callable[..., bool] = lambda *args, **kwargs: True,
    name: str | None = None,
) -> Iterator[Fault]:
    original = getattr(owner, method)
    fault = Fault(name=name or f"{owner.__name__}.{method}", times=times)

    def failing(self: Any, *args: Any, **kwargs: Any) -> Any:
        if applies(*args, **kwargs) and fault.should_fail():
            raise error()
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


def dynamodb_transaction_conflicts(times: int | None = None) -> Any:
    """TransactWriteItems is cancelled by a conflicting transaction, with no item written."""
    return inject(
        DynamoDBBackend,
        "transact_write_items",
        lambda: TransactionCanceledException(
            [("TransactionConflict", "Transaction is ongoing for the item", None), (None, None, None)]
        ),
        times=times,
        name="dynamodb.transact_write_items:TransactionConflict",
    )


def dynamodb_throttling(times: int | None = None, operation: str = "transact_write_items") -> Any:
    """A DynamoDB operation is throttled (ProvisionedThroughputExceededException)."""
    return inject(
        DynamoDBBackend,
        operation,
        lambda: DynamodbException(
            ERROR_TYPE_PREFIX + "ProvisionedThroughputExceededException", "Injected fault: throughput exceeded"
        ),
        times=times,
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


def start_execution_failures(times: int | None = None) -> Any:
    """StartExecution is denied (not retried by boto3, so each invocation fails exactly once)."""
    from moto.core.exceptions import AWSError
    from moto.stepfunctions.parser.models import StepFunctionsParserBackend

    return inject(
        StepFunctionsParserBackend,
        "start_execution",
        lambda: AWSError("Injected fault: not authorized", exception_type="AccessDeniedException"),
        times=times,
        name="stepfunctions.start_execution:AccessDeniedException",
    )
