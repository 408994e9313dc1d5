"""R4 judged on evidence read from the stack: the example subscriber's effect happened once per event.

The example subscriber adds 1 to a tally per key (the payload's value at its TALLY_KEY_PATH) for
each event it applies (an ADD that a duplicate would count twice). So, for the events the pipeline
notified:
- every notified event was applied (its marker exists) or is in the subscriber's dead-letter queue
  with a reason: none lost;
- each key's `event_count` is the number of distinct applied events with that key: no effect twice,
  none missing, whatever the duplicates (an event's key is read from its notification, which carries
  the payload);
- no marker or effect for an event never notified.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from onceflow.local.report import NOTHING_TO_JUDGE, Verdict
from onceflow.ops.observe import QueuedMessage


@dataclass(frozen=True)
class SubscriberEvidence:
    markers: list[dict[str, Any]]
    tallies: list[dict[str, Any]]  # the tally table's items: tally_key, event_count
    dead_letters: list[QueuedMessage]
    deliveries: int  # records the subscriber's event source handed it (every duplicate counted)
    tally_key_path: str  # where the tally key is in the payload


def tally_key_of(payload_text: str, path: str) -> str | None:
    try:
        value: Any = json.loads(payload_text)
    except ValueError:
        return None
    for name in path.split("."):
        value = value.get(name) if isinstance(value, dict) else None
    return None if value is None or isinstance(value, dict | list) else str(value)


def judge_r4(evidence: SubscriberEvidence, notifications: list[QueuedMessage]) -> Verdict:
    notified = Counter(m.attributes.get("event_id", "") for m in notifications)
    keys = {m.attributes.get("event_id", ""): tally_key_of(m.body, evidence.tally_key_path) for m in notifications}
    applied = {str(m["event_id"]) for m in evidence.markers}
    dead = {
        m.attributes["event_id"]: m.attributes.get("error", "")
        for m in evidence.dead_letters
        if "event_id" in m.attributes
    }
    problems = [
        f"{event_id}: notified but neither applied nor dead-lettered by the subscriber"
        for event_id in sorted(notified)
        if event_id not in applied and event_id not in dead
    ]
    problems += [
        f"{event_id}: dead-lettered by the subscriber without a reason" for event_id, error in dead.items() if not error
    ]
    problems += [f"{event_id}: applied but never notified" for event_id in sorted(applied - set(notified))]
    expected = Counter(keys.get(event_id) for event_id in applied)
    counted = {str(item["tally_key"]): int(item.get("event_count", 0)) for item in evidence.tallies}
    for key in sorted(set(expected) | set(counted), key=str):
        if counted.get(str(key), 0) != expected.get(key, 0):
            problems.append(
                f"tally {key}: event_count {counted.get(str(key), 0)}, but {expected.get(key, 0)} of its events were applied"
            )
    if not notified:
        problems.append(f"no event was notified: {NOTHING_TO_JUDGE}")
    return Verdict(
        "R4 subscriber effect once per event",
        not problems,
        f"{len(notified)} events notified, {sum(notified.values())} notifications; {evidence.deliveries} "
        f"deliveries to the subscriber (duplicates and redeliveries included); {len(applied)} applied, "
        f"{sum(counted.values())} effects (event_count summed over {len(counted)} tally keys), {len(dead)} "
        "dead-lettered by the subscriber",
        problems[:10],
    )


def subscriber_evidence(pipeline: Any) -> SubscriberEvidence | None:
    """What the stack's example subscriber did in a LocalPipeline run; None without one."""
    from onceflow.ops.observe import drain, scan

    stack = pipeline.stack
    if not stack.subscribers:
        return None
    (function,) = stack.subscribers
    environment = function.environment
    dynamodb, sqs = stack.client("dynamodb"), stack.client("sqs")
    return SubscriberEvidence(
        markers=scan(dynamodb, environment["SUBSCRIBER_MARKERS_TABLE"]),
        tallies=scan(dynamodb, environment["TALLY_TABLE"]),
        dead_letters=drain(sqs, environment["SUBSCRIBER_DEAD_LETTER_QUEUE_URL"], delete=False),
        deliveries=pipeline.subscriber_sources[function.logical_id].stats.records,
        tally_key_path=environment["TALLY_KEY_PATH"],
    )
