"""Validation models of the formats' own payloads (Powertools parser / pydantic).

The domain's payload is validated by the model or JSON Schema the template names
(PAYLOAD_MODEL / PAYLOAD_SCHEMA, payload_validation.py), kept in functions/starter/domain/.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class S3ObjectRef(BaseModel):
    """The part of an S3 event notification record that identifies the object."""

    model_config = ConfigDict(extra="allow")

    key: str = Field(min_length=1)
    size: int | None = None
    eTag: str | None = None  # noqa: N815 - S3's own field name
