"""SQS long polling that lets the rest of the endpoint run while it waits.

A ReceiveMessage with WaitTimeSeconds returns as soon as a message arrives, and meanwhile the other
API calls are answered (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-short-and-long-polling.html).
The embedded endpoint answers one request at a time under its request lock (server.py), and
moto's receive_message waited for messages (Queue.wait_for_messages) with that lock held: no
SendMessage, SNS delivery or state machine task could add the message it waited for, so every long
poll returned empty after its full wait and held up every other client for that long (LocalStack's
AWS recordings services/test_sns_task_service.snapshot.json, test_publish_message_attributes: the
subscribed queue's long poll receives the message the workflow publishes). The wait releases the
request lock (all its levels, as threading.Condition does) and takes it back before moto goes on.
"""

from __future__ import annotations

from typing import Any

from moto.sqs.models import Queue

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import Patch


def moto_needs() -> list[Need]:
    return [need(Queue, "wait_for_messages", "timeout")]


def patches(request_lock: Any = None) -> list[Patch]:
    if request_lock is None:
        return []
    original = Queue.wait_for_messages

    def wait_for_messages(self: Queue, timeout: int) -> None:
        if not request_lock._is_owned():  # an in-process call outside any request
            original(self, timeout)
            return
        saved = request_lock._release_save()
        try:
            original(self, timeout)
        finally:
            request_lock._acquire_restore(saved)

    return [(Queue, "wait_for_messages", wait_for_messages)]
