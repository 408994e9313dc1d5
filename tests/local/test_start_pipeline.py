"""What `onceflow start`'s long-running pipeline makes on the stack, and what it leaves out."""

from __future__ import annotations

import pytest

from onceflow.local.pipeline import LocalPipeline
from onceflow.ops.executions import wait_for_all
from tests.support import order

pytestmark = pytest.mark.embedded_only(reason="drives the local pipeline's rounds")


def _subscribed_queues(stack) -> list[str]:
    sns = stack.client("sns")
    listed = sns.list_subscriptions_by_topic(TopicArn=stack.notification_topic_arn)["Subscriptions"]
    return [s["Endpoint"].rsplit(":", 1)[-1] for s in listed if s["Protocol"] == "sqs"]


def test_a_long_run_subscribes_no_notification_inbox_and_still_publishes(stack, embedded_aws):
    """The inbox (a queue of the tooling's own, subscribed to the topic) is the demo's and the tests'
    way to read notifications; in `onceflow start` nobody read it and every notification was
    delivered to it and drained again. Without it the notification is still published, once."""
    pipeline = LocalPipeline(embedded_aws, stack, keep_acknowledged=False, notification_inbox=False)
    assert "onceflow-notification-inbox" not in _subscribed_queues(stack)

    pipeline.send([order("order-no-inbox")])
    handled = sum(pipeline.background_round().handled for _ in range(20))
    (execution,) = wait_for_all(stack.client("stepfunctions"), stack.state_machine_arn)

    assert (handled, execution.status) == (1, "SUCCEEDED")
    published = [
        e
        for e in execution.history
        if e["type"] == "TaskSucceeded" and e["taskSucceededEventDetails"]["resourceType"] == "sns"
    ]
    assert len(published) == 1
    queues = stack.client("sqs").list_queues().get("QueueUrls", [])
    assert "onceflow-notification-inbox" not in [url.rsplit("/", 1)[-1] for url in queues]


def test_the_demo_s_pipeline_reads_notifications_through_its_inbox(stack, embedded_aws):
    LocalPipeline(embedded_aws, stack)
    assert "onceflow-notification-inbox" in _subscribed_queues(stack)
