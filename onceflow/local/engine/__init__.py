"""Patches of moto's Step Functions, DynamoDB, SNS and SQS engines, each checked against the pinned
moto version before it is applied. `patches()` is the one list `EmbeddedAws.start()` applies (and
restores on stop); each module below contributes its own (owner, attribute, replacement) triples.
"""

from __future__ import annotations

from typing import Any

Patch = tuple[Any, str, Any]


def patches(speedups: bool = True) -> list[Patch]:
    from onceflow.local import mocking
    from onceflow.local.engine import speedups as speedup_patches

    selected: list[Patch] = []
    if speedups:
        selected += speedup_patches.all_speedups()
    # Step Functions Local's mocked integrations: start `stateMachineArn#TestCase` (SFN_MOCK_CONFIG).
    selected += mocking.moto_patches()
    return selected
