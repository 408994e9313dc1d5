"""The published quotas (quotas.json) as the embedded engine's token buckets (onceflow/engine/bookkeeping/quotas.py).

`scale` divides every bucket size and refill rate: a benchmark's smaller world, in which each
simulated second carries 1/scale of AWS's traffic (the bucket's seconds of burst, size over refill,
stay AWS's)."""

from __future__ import annotations

from onceflow.devtools.capacity.quotas import load_quotas
from onceflow.engine.bookkeeping.quotas import (
    SNS_PUBLISH,
    START_EXECUTION_EXPRESS,
    START_EXECUTION_STANDARD,
    START_SYNC_EXECUTION,
    STATE_TRANSITION_STANDARD,
    BucketSpec,
    EngineQuotas,
    QuotaClock,
)

_BUCKET_OF = {
    START_EXECUTION_STANDARD: "stepfunctions_start_execution_standard",
    START_EXECUTION_EXPRESS: "stepfunctions_start_execution_express",
    START_SYNC_EXECUTION: "stepfunctions_start_sync_execution",
    STATE_TRANSITION_STANDARD: "stepfunctions_state_transition_standard",
}


def engine_quotas(region: str = "us-east-1", scale: float = 1.0, clock: QuotaClock | None = None) -> EngineQuotas:
    quotas = load_quotas(region)
    specs = {
        bucket: BucketSpec(quotas[key]["bucket"] / scale, quotas[key]["refill_per_second"] / scale)
        for bucket, key in _BUCKET_OF.items()
    }
    publish = quotas["sns_publish"]["limit"] / scale
    specs[SNS_PUBLISH] = BucketSpec(publish, publish)  # a per-second quota: one second's worth at once
    return EngineQuotas(specs, clock or QuotaClock(), region=region, scale=scale)
