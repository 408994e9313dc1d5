"""`onceflow status` (onceflow/ops/status.py) shows the example subscriber's outcome per event:
applied (when, by which delivery), dead-lettered (its error) or not applied, read with boto3 from
the stack's outputs, as against a deployed stack."""

from __future__ import annotations

import json
import random

from onceflow.local.pipeline import LocalPipeline
from onceflow.ops.stack import Target, find_stack
from onceflow.ops.status import read_status
from onceflow.ops.subscriber import outcomes
from tests.orders import make_orders
from tests.subscriber.support import publish


def test_status_shows_the_subscribers_outcome_per_event(embedded_aws, subscriber_stack):
    orders = make_orders(3, random.Random(1))
    pipeline = LocalPipeline(embedded_aws, subscriber_stack)
    pipeline.send([json.dumps(o) for o in orders])
    publish(subscriber_stack, {"order_id": "order-z", "amount": 1}, event_id="order-z")  # no customer_id
    pipeline.process(timeout=60)

    stack = find_stack(Target(subscriber_stack.endpoint_url), subscriber_stack.stack_name)
    report = read_status(stack)
    assert report.subscriber_queues == "0 notifications waiting, 0 being handled; 1 in its dead-letter queue"
    assert report.subscriber is not None
    assert {e: o.outcome for e, o in report.subscriber.items()} == {o["order_id"]: "applied" for o in orders}
    assert all(" by message " in o.detail for o in report.subscriber.values())
    found = outcomes(stack.outputs, stack.client("dynamodb"), stack.client("sqs"), ["order-z", "order-none"])
    assert (found["order-z"].outcome, found["order-z"].detail) == ("dead-lettered", "Onceflow.InvalidNotification")
    assert found["order-none"].outcome == "not applied"


def test_the_trace_page_shows_the_subscribers_outcome_with_each_execution(embedded_aws, subscriber_stack, tmp_path):
    from onceflow.devtools.trace import collect_executions, write_trace

    (order,) = make_orders(1, random.Random(2))
    pipeline = LocalPipeline(embedded_aws, subscriber_stack)
    pipeline.send([json.dumps(order)])
    pipeline.process(timeout=60)
    stack = find_stack(Target(subscriber_stack.endpoint_url), subscriber_stack.stack_name)
    sfn = stack.client("stepfunctions")
    results = collect_executions(sfn, stack.state_machine_arn)
    found = outcomes(stack.outputs, stack.client("dynamodb"), stack.client("sqs"), [order["order_id"]])
    definition = json.loads(sfn.describe_state_machine(stateMachineArn=stack.state_machine_arn)["definition"])
    page = write_trace(
        definition, results, tmp_path / "trace.html", subscriber={k: v.line() for k, v in found.items()}
    ).read_text()
    line = found[order["order_id"]].line()
    assert line.startswith("applied (")
    assert f"<dt>Subscriber</dt><dd>{line}</dd>" in page  # the selected execution, written as HTML
    assert f'"subscriber": "{line}"' in page  # the page's data, for the script's view of any execution
