"""Validation models for message payloads (Powertools parser / pydantic).

`Order` is the worked example's business payload. Replace or extend it for your own domain.
"""

from __future__ import annotations

from decimal import Decimal

from pydantic import BaseModel, ConfigDict, Field


class Order(BaseModel):
    model_config = ConfigDict(extra="allow")

    order_id: str = Field(min_length=1, max_length=1024)
    customer_id: str = Field(min_length=1, max_length=256)
    amount: Decimal = Field(gt=0)
    currency: str = Field(pattern=r"^[A-Z]{3}$")


class S3ObjectRef(BaseModel):
    """The part of an S3 event notification record that identifies the object."""

    model_config = ConfigDict(extra="allow")

    key: str = Field(min_length=1)
    size: int | None = None
    eTag: str | None = None  # noqa: N815 - S3's own field name
