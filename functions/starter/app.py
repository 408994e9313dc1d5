"""Starter Lambda: SQS batch in, one Step Functions execution per record out.

Partial batch responses: a record that fails is reported in `batchItemFailures` and redelivered
by SQS; a record that can never succeed is dead-lettered with its reason and acknowledged.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import boto3
from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from starter.dead_letter import send_to_dead_letter_queue
from starter.executions import start_execution
from starter.messages import InvalidMessage, parse_record
from starter.settings import Settings

logger = Logger()
metrics = Metrics()
tracer = Tracer()
processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


@cache
def _client(service: str) -> Any:
    # Created on first use, not at import: keeps cold starts light and lets the local runtime
    # point boto3 at the embedded endpoint (AWS_ENDPOINT_URL) before the first call.
    return boto3.client(service)


def reset_clients() -> None:
    """Forget cached clients (the local runtime calls this when the endpoint changes)."""
    _client.cache_clear()


@tracer.capture_method
def handle_record(record: SQSRecord) -> str:
    settings = Settings.from_environment()
    try:
        event = parse_record(record.raw_event, settings)
    except InvalidMessage as invalid:
        logger.warning(
            "Invalid message dead-lettered",
            message_id=invalid.message_id,
            field=invalid.field,
            rule=invalid.rule,
            reason=str(invalid),
            event_id=invalid.event_id,
        )
        # If this send fails the exception marks the record failed, so SQS keeps the message.
        send_to_dead_letter_queue(_client("sqs"), settings.dead_letter_queue_url, record.body or "", invalid)
        metrics.add_metric(name="InvalidMessagesDeadLettered", unit=MetricUnit.Count, value=1)
        return "dead_lettered"

    with logger.append_context_keys(event_id=event.event_id, message_id=record.message_id):
        name, outcome = start_execution(_client("stepfunctions"), settings.state_machine_arn, event, record.message_id)
        if outcome == "started":
            metrics.add_metric(name="ExecutionsStarted", unit=MetricUnit.Count, value=1)
            logger.info("Execution started", execution_name=name)
        else:
            metrics.add_metric(name="ExecutionsAlreadyStarted", unit=MetricUnit.Count, value=1)
            logger.info("Delivery already handed over: execution exists", execution_name=name)
        return outcome


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    response = process_partial_response(event=event, record_handler=handle_record, processor=processor, context=context)
    failed = len(response["batchItemFailures"])
    metrics.add_metric(name="BatchRecordsFailed", unit=MetricUnit.Count, value=failed)
    if failed:
        logger.error(
            "Records reported failed; SQS will redeliver them", failed=failed, batch_size=len(event["Records"])
        )
    return response
