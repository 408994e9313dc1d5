"""Reconciler Lambda: dead-letters what an execution left neither finished nor dead-lettered.

Invoked two ways (template.yaml): by the safety net rule with a "Step Functions Execution Status
Change" event, which AWS delivers best effort, and on a schedule, which sweeps ended executions
(ListExecutions since a checkpoint) and events pending too long (the sparse `pending-since`
index), so that R1 holds with every status change event lost. Each sweep reports how many events
are pending longer than the threshold (metric EventsPendingTooLong: the stuck-pending alarm).
"""

from __future__ import annotations

import time
from datetime import datetime
from functools import cache
from typing import Any

import boto3
from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext
from botocore.config import Config

from onceflow_common.status_change import is_status_change
from reconciler.reconcile import Reconciler
from reconciler.settings import Settings

logger = Logger()
metrics = Metrics()
# Stop taking new work this long before the function's timeout: a claim left half-done is only
# taken over after CLAIM_STALE_SECONDS.
_TIME_RESERVED_SECONDS = 10
_CLIENT_CONFIG = Config(connect_timeout=5, read_timeout=15, retries={"mode": "standard", "max_attempts": 5})


@cache
def _client(service: str) -> Any:
    # Created on first use, not at import: the local runtime sets AWS_ENDPOINT_URL before the first call.
    return boto3.client(service, config=_CLIENT_CONFIG)


def reset_clients() -> None:
    """Forget cached clients (the local runtime calls this when the endpoint changes)."""
    _client.cache_clear()


def _now(event: dict[str, Any]) -> float:
    """The time of a scheduled event (when the run was due), else the clock."""
    if event.get("detail-type") == "Scheduled Event" and isinstance(event.get("time"), str):
        try:
            return datetime.fromisoformat(event["time"].replace("Z", "+00:00")).timestamp()
        except ValueError:
            logger.warning("Scheduled event with an unreadable time; using the clock", time=event["time"])
    return time.time()


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    settings = Settings.from_environment()
    deadline = time.monotonic() + context.get_remaining_time_in_millis() / 1000 - _TIME_RESERVED_SECONDS
    reconciler = Reconciler(
        settings, _client("stepfunctions"), _client("dynamodb"), _client("sqs"), now=_now(event), deadline=deadline
    )
    if is_status_change(event):
        outcome = reconciler.status_change(event)
    else:
        outcome = reconciler.sweep()
        metrics.add_metric(name="EventsPendingTooLong", unit=MetricUnit.Count, value=outcome.pending_too_long)
        metrics.add_metric(name="PendingEventsUnrecoverable", unit=MetricUnit.Count, value=len(outcome.unrecoverable))
    metrics.add_metric(name="ReconcilerDeadLettered", unit=MetricUnit.Count, value=len(outcome.dead_lettered))
    if outcome.unrecoverable:
        logger.error(
            "Events pending with no execution input left to dead-letter: see the runbook, 'Events stuck pending'",
            event_ids=outcome.unrecoverable[:50],
        )
    if not outcome.complete:
        logger.warning("Run stopped early (time or dead-letter budget); the next run continues")
    logger.info("Reconciled", **outcome.as_dict())
    return outcome.as_dict()
