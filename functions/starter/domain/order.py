"""The worked example's business payload: an order. PAYLOAD_MODEL=domain.order:Order (template.yaml)."""

from __future__ import annotations

from decimal import Decimal

from pydantic import BaseModel, ConfigDict, Field


class Order(BaseModel):
    model_config = ConfigDict(extra="allow")

    order_id: str = Field(min_length=1, max_length=1024)
    customer_id: str = Field(min_length=1, max_length=256)
    amount: Decimal = Field(gt=0)
    currency: str = Field(pattern=r"^[A-Z]{3}$")
