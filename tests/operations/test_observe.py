"""Reading a queue to its end (onceflow/ops/observe.py's drain): every visible message once, taken
off or made visible again in batches of ten (issue 21: a long run's notification reader made one
DeleteMessage per notification, half of an idle `onceflow start`'s work)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from onceflow.local.stack import LocalStack
from onceflow.ops.observe import drain


def _queue_with(stack: LocalStack, count: int) -> tuple[Any, str]:
    sqs = stack.client("sqs")
    url = sqs.create_queue(QueueName="observe-drain")["QueueUrl"]
    for start in range(0, count, 10):
        entries = [{"Id": str(n), "MessageBody": f"m-{n}"} for n in range(start, min(start + 10, count))]
        sqs.send_message_batch(QueueUrl=url, Entries=entries)
    return sqs, url


def _calls(sqs: Any) -> Counter[str]:
    made: Counter[str] = Counter()
    sqs.meta.events.register("provide-client-params", lambda model, **_: made.update([model.name]))
    return made


def test_drain_takes_every_message_off_in_batches(stack: LocalStack) -> None:
    sqs, url = _queue_with(stack, 25)
    made = _calls(sqs)

    bodies = sorted(message.body for message in drain(sqs, url))

    assert bodies == sorted(f"m-{n}" for n in range(25))
    assert made["DeleteMessageBatch"] == 3 and made["DeleteMessage"] == 0
    assert sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []) == []


def test_drain_without_delete_makes_every_message_visible_again_in_batches(stack: LocalStack) -> None:
    sqs, url = _queue_with(stack, 25)
    made = _calls(sqs)

    first = drain(sqs, url, delete=False)
    again = drain(sqs, url, delete=False)

    assert sorted(m.message_id for m in again) == sorted(m.message_id for m in first) and len(first) == 25
    assert made["ChangeMessageVisibilityBatch"] == 6 and made["ChangeMessageVisibility"] == 0
    assert {m.receive_count for m in again} == {2}
