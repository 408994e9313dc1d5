"""R4 judged on evidence read from the stack: the example subscriber's effect happened once per event.

The example subscriber adds 1 to its customer's `order_count` per order it applies (an ADD that a
duplicate would count twice). So, for the events the pipeline notified:
- every notified event was applied (its marker exists) or is in the subscriber's dead-letter queue
  with a reason: none lost;
- each customer's `order_count` is the number of distinct notified events of that customer: no
  effect twice, none missing, whatever the duplicates (the customer of an event is read from its
  business row, written once by R2);
- no marker or effect for an event never notified.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from onceflow.local.report import Verdict
from onceflow.ops.observe import QueuedMessage


@dataclass(frozen=True)
class SubscriberEvidence:
    markers: list[dict[str, Any]]
    accounts: list[dict[str, Any]]
    dead_letters: list[QueuedMessage]
    deliveries: int  # records the subscriber's event source handed it (every duplicate counted)


def _customer(row: dict[str, Any]) -> str | None:
    try:
        customer = json.loads(row.get("payload", "{}")).get("customer_id")
    except (ValueError, AttributeError):
        return None
    return customer if isinstance(customer, str) else None


def judge_r4(
    evidence: SubscriberEvidence, notifications: list[QueuedMessage], business_rows: list[dict[str, Any]]
) -> Verdict:
    notified = Counter(m.attributes.get("event_id", "") for m in notifications)
    customers = {row["order_id"]: _customer(row) for row in business_rows}
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
    expected = Counter(customers.get(event_id) for event_id in applied)
    counted = {str(a["customer_id"]): int(a.get("order_count", 0)) for a in evidence.accounts}
    for customer in sorted(set(expected) | set(counted), key=str):
        if counted.get(str(customer), 0) != expected.get(customer, 0):
            problems.append(
                f"customer {customer}: order_count {counted.get(str(customer), 0)}, "
                f"but {expected.get(customer, 0)} of its events were applied"
            )
    effects = sum(counted.values())
    return Verdict(
        "R4 subscriber effect once per event",
        not problems and bool(notified),
        f"{len(notified)} events notified, {sum(notified.values())} notifications; {evidence.deliveries} "
        f"deliveries to the subscriber (duplicates and redeliveries included); {len(applied)} applied, {effects} effects "
        f"(order_count summed over {len(counted)} accounts), {len(dead)} dead-lettered by the subscriber",
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
        accounts=scan(dynamodb, environment["LOYALTY_ACCOUNTS_TABLE"]),
        dead_letters=drain(sqs, environment["SUBSCRIBER_DEAD_LETTER_QUEUE_URL"], delete=False),
        deliveries=pipeline.subscriber_sources[function.logical_id].stats.records,
    )
