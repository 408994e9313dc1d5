"""Starter Lambda: SQS batch in, one Step Functions execution per record out.

Partial batch responses: a record that fails is reported in `batchItemFailures` and redelivered
by SQS; a record that can never succeed is dead-lettered with its reason and acknowledged.
"""

from __future__ import annotations

from functools import cache, partial
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
from starter.settings import ConfigurationError, Settings

logger = Logger()
metrics = Metrics()
tracer = Tracer()
processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
_RECORD_KEYS = ("message_id", "event_id", "correlation_id")


@cache
def _client(service: str) -> Any:
    # Created on first use, not at import: keeps cold starts light and lets the local runtime
    # point boto3 at the embedded endpoint (AWS_ENDPOINT_URL) before the first call.
    return boto3.client(service)


def reset_clients() -> None:
    """Forget cached clients (the local runtime calls this when the endpoint changes)."""
    _client.cache_clear()


def _dead_letter(record: SQSRecord, settings: Settings, invalid: InvalidMessage) -> str:
    if invalid.event_id:
        logger.append_keys(event_id=invalid.event_id)
    logger.warning("Invalid message: dead-lettering it", field=invalid.field, rule=invalid.rule, reason=str(invalid))
    # If this send fails the exception marks the record failed, so SQS keeps the message.
    send_to_dead_letter_queue(_client("sqs"), settings.dead_letter_queue_url, record.body or "", invalid)
    metrics.add_metric(name="InvalidMessagesDeadLettered", unit=MetricUnit.Count, value=1)
    return "dead_lettered"


def _hand_over(record: SQSRecord, settings: Settings) -> str:
    try:
        event = parse_record(record.raw_event, settings)
    except InvalidMessage as invalid:
        return _dead_letter(record, settings, invalid)
    logger.append_keys(event_id=event.event_id)
    logger.set_correlation_id(event.event_id)
    name, outcome = start_execution(_client("stepfunctions"), settings.state_machine_arn, event, record.message_id)
    if outcome == "started":
        metrics.add_metric(name="ExecutionsStarted", unit=MetricUnit.Count, value=1)
        logger.info("Execution started", execution_name=name)
    else:
        metrics.add_metric(name="ExecutionsAlreadyStarted", unit=MetricUnit.Count, value=1)
        logger.info("Delivery already handed over: execution exists", execution_name=name)
    return outcome


def _error_code(error: Exception) -> dict[str, str]:
    """An AWS error's code (botocore's ClientError class name alone does not say which)."""
    response = getattr(error, "response", None)
    details = response.get("Error") if isinstance(response, dict) else None
    code = details.get("Code") if isinstance(details, dict) else None
    return {"error_code": code} if isinstance(code, str) else {}


@tracer.capture_method
def handle_record(record: SQSRecord, settings: Settings) -> str:
    """One record: "started", "already_started" or "dead_lettered"; raising reports it failed."""
    logger.append_keys(message_id=record.message_id)
    try:
        return _hand_over(record, settings)
    except Exception as error:
        logger.exception("Record failed; SQS will redeliver it", **_error_code(error))
        raise
    finally:
        logger.remove_keys(_RECORD_KEYS)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    try:
        settings = Settings.from_environment()
    except ConfigurationError:
        # Every record would fail the same way: fail the invocation (visible in the function's
        # Errors metric); SQS keeps the whole batch and its redrive policy applies.
        logger.exception("Starter misconfigured; no record of this batch was handled")
        metrics.add_metric(name="ConfigurationErrors", unit=MetricUnit.Count, value=1)
        raise
    response = process_partial_response(
        event=event, record_handler=partial(handle_record, settings=settings), processor=processor, context=context
    )
    failed = len(response["batchItemFailures"])
    metrics.add_metric(name="BatchRecordsFailed", unit=MetricUnit.Count, value=failed)
    if failed:
        logger.error(
            "Records reported failed; SQS will redeliver them", failed=failed, batch_size=len(event["Records"])
        )
    return response
