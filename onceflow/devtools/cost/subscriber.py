"""What the example subscriber adds per event, measured on the embedded engine like the pipeline's paths.

The stack is deployed with DeploySubscriber=true; a notification is published as `Publish
notification` publishes it (that publish is the pipeline's own cost, already counted) and the
event source hands it to the real subscriber. Two deliveries are measured: a new event (one
transaction: marker + effect, 2 items, 2 write units each) and a duplicate (the transaction
cancelled on the marker's condition, then a consistent read of the marker). Billed:
- DynamoDB: the units of every call the subscriber made (recorder.py, units.py);
- SQS: SNS's delivery to the subscriber queue (one request; SNS itself does not bill deliveries to
  SQS), and the event source's receive and delete, one of each per `sqs_messages_per_request`
  records of a full batch (BatchSize 10);
- Lambda: one invocation per full batch; duration per record the stated per-record time plus the
  stated latency of each call made, plus the invocation's overhead shared by the batch; 256 MB arm64;
- CloudWatch Logs: the subscriber's own log lines as measured, plus the platform's per invocation.
Per event: one new delivery plus `duplicates_per_event` duplicate deliveries (the demo measures
about 0.02 notifications more than events).
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path

import boto3
from rich.table import Table

from onceflow.devtools.cost.model import GB, Cost
from onceflow.devtools.cost.prices import Prices, load_prices
from onceflow.devtools.cost.recorder import CALLER_KEYS, EVENT_SOURCE, HARNESS, SUBSCRIBER, Call, Recorder
from onceflow.domain.bodies import body, id_prefix
from onceflow.engine import REGION, EmbeddedAws
from onceflow.local.event_source import SqsEventSource
from onceflow.local.function_runtime import FunctionRuntime
from onceflow.local.stack import LocalStack, deploy
from onceflow.local.template import TEMPLATE_PATH

MEMORY_MB = 256
BATCH_SIZE = 10


@dataclass(frozen=True)
class SubscriberDelivery:
    kind: str  # "new" or "duplicate"
    calls: tuple[Call, ...]
    log_bytes: int

    def by_subscriber(self) -> list[Call]:
        return [c for c in self.calls if c.caller == SUBSCRIBER]


def _client(endpoint_url: str, service: str, key: str):  # type: ignore[no-untyped-def]
    return boto3.client(
        service, endpoint_url=endpoint_url, region_name=REGION, aws_access_key_id=key, aws_secret_access_key="testing"
    )


def measure_subscriber(template_path: Path = TEMPLATE_PATH) -> dict[str, SubscriberDelivery]:
    """On an embedded AWS of its own, with the stack deployed from `template_path`."""
    with EmbeddedAws(time_scale=0.0) as aws:
        stack = deploy(aws.endpoint_url, parameter_overrides={"DeploySubscriber": "true"}, template_path=template_path)
        return measure_deliveries(stack)


def measure_deliveries(stack: LocalStack) -> dict[str, SubscriberDelivery]:
    """A new event's and a duplicate's delivery to the stack's subscriber, with what each called."""
    recorder = Recorder()
    (function,) = stack.subscribers
    log = io.StringIO()
    runtime = FunctionRuntime(
        stack, function.logical_id, extra_environment={"AWS_ACCESS_KEY_ID": CALLER_KEYS[SUBSCRIBER]}, log_stream=log
    )
    boto3.DEFAULT_SESSION = None  # it keeps the key it first found: the recorder tells callers by key
    assert function.queue_url is not None and function.event_source is not None
    source = SqsEventSource(
        _client(stack.endpoint_url, "sqs", CALLER_KEYS[EVENT_SOURCE]),
        function.queue_url,
        function.event_source,
        runtime.invoke,
    )
    sns = _client(stack.endpoint_url, "sns", CALLER_KEYS[HARNESS])
    event_id = f"{id_prefix(stack.domain)}-cost-1"
    payload = json.dumps(body(stack.domain, event_id))  # the notification carries the payload
    attributes = {
        "event_id": {"DataType": "String", "StringValue": event_id},
        "payload_hash": {"DataType": "String", "StringValue": "0" * 64},
    }
    deliveries = {}
    for kind in ("new", "duplicate"):
        start = len(log.getvalue().encode())
        with recorder.recording():
            sns.publish(TopicArn=stack.notification_topic_arn, Message=payload, MessageAttributes=attributes)
            source.run_until_empty(timeout=60)
        deliveries[kind] = SubscriberDelivery(kind, tuple(recorder.take()), len(log.getvalue().encode()) - start)
    runtime.module.reset_clients()  # the next user of the function gets clients with the default key
    return deliveries


def delivery_cost(delivery: SubscriberDelivery, prices: Prices) -> Cost:
    assumed = prices.assumptions
    calls = delivery.by_subscriber()
    per_request = assumed.sqs_messages_per_request
    sqs_requests = 1 + 2 * (BATCH_SIZE // per_request) / BATCH_SIZE
    lambda_ms = (
        assumed.lambda_per_record_ms
        + assumed.lambda_invocation_overhead_ms / BATCH_SIZE
        + sum(assumed.call_ms(c.service) for c in calls)
    )
    logs = delivery.log_bytes + assumed.lambda_platform_log_bytes_per_invocation / BATCH_SIZE
    return Cost(
        {
            "Step Functions": 0.0,
            "DynamoDB": sum(c.write_units for c in calls) * prices["dynamodb_on_demand_per_write_unit"]
            + sum(c.read_units for c in calls) * prices["dynamodb_on_demand_per_read_unit"],
            "SNS": 0.0,
            "SQS": sqs_requests * prices["sqs_per_request"],
            "Lambda": prices["lambda_per_request"] / BATCH_SIZE
            + lambda_ms / 1000 * MEMORY_MB / 1024 * prices.lambda_per_gb_second("arm64"),
            "CloudWatch Logs": logs / GB * prices["cloudwatch_logs_per_gb_ingested"],
        }
    )


def per_event_cost(
    deliveries: dict[str, SubscriberDelivery], duplicates_per_event: float = 0.02, prices: Prices | None = None
) -> Cost:
    prices = prices or load_prices()
    return delivery_cost(deliveries["new"], prices) + delivery_cost(deliveries["duplicate"], prices).scaled(
        duplicates_per_event
    )


def subscriber_table(deliveries: dict[str, SubscriberDelivery], duplicates_per_event: float = 0.02) -> Table:
    prices = load_prices()
    table = Table(title="The example subscriber (DeploySubscriber=true), added per million events")
    for column in ("delivery", "DynamoDB", "SQS", "Lambda", "CloudWatch Logs", "total"):
        table.add_column(column, justify="left" if column == "delivery" else "right")
    rows = {
        "new event (marker + effect, one transaction)": delivery_cost(deliveries["new"], prices),
        "duplicate notification (cancelled, marker read)": delivery_cost(deliveries["duplicate"], prices),
        f"per event, {duplicates_per_event:g} duplicates each": per_event_cost(
            deliveries, duplicates_per_event, prices
        ),
    }
    for name, cost in rows.items():
        table.add_row(
            name,
            *(f"${cost.parts[part] * 1e6:.2f}" for part in ("DynamoDB", "SQS", "Lambda", "CloudWatch Logs")),
            f"${cost.per_million():.2f}",
        )
    return table
