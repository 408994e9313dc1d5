"""Envelope models of the non-plain event formats (Powertools parser models).

Imported only when a format with an envelope is configured: Powertools' parser models take
tens of milliseconds to import, which the default plain-JSON format does not need to pay.
"""

from __future__ import annotations

from aws_lambda_powertools.utilities.parser.models import (
    EventBridgeModel,
    S3Model,
    S3RecordModel,
    SnsNotificationModel,
)
from pydantic import Field


class SingleRecordS3Model(S3Model):
    """S3 notifications to SQS carry one record per message; more would be silently dropped."""

    Records: list[S3RecordModel] = Field(min_length=1, max_length=1)


__all__ = ["EventBridgeModel", "SingleRecordS3Model", "SnsNotificationModel"]
