"""Pending records are findable without a scan: while an event is `pending` its state record
carries `pending_shard` and `pending_since`, the keys of the sparse index that the reconciler
queries; `Mark as sent` removes both. The shard spreads the index's writes over partitions."""

from __future__ import annotations

import hashlib

SHARDS = 16
INDEX_NAME = "pending-since"  # the sparse index's name in template.yaml (the reconciler's PENDING_INDEX_NAME)


def shard_for(event_id: str) -> str:
    """ "00".."15", stable for an event_id."""
    return f"{int(hashlib.sha256(event_id.encode()).hexdigest()[:8], 16) % SHARDS:02d}"


def all_shards() -> list[str]:
    return [f"{n:02d}" for n in range(SHARDS)]
