"""Read a function's CloudWatch Logs (FilterLogEvents), optionally following and for one event_id.

Works the same on AWS and on the local stack, where `onceflow start` writes each function's
log lines into the embedded CloudWatch Logs (so `aws logs filter-log-events` works too).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

# Tags the embedded AWS puts on a log group whose oldest events it dropped (onceflow/engine/bookkeeping/log_budget.py).
LOG_BUDGET_TAG = "onceflow:local-log-budget"
LOG_DROPPED_TAG = "onceflow:local-log-events-dropped"


@dataclass(frozen=True)
class LogLine:
    timestamp: int  # epoch milliseconds
    stream: str
    message: str
    event_id: str

    def render(self) -> str:
        return self.message.rstrip("\n")


def _mentions(message: str, event_id: str) -> bool:
    """A line belongs to the event if its structured `event_id` is it, or (plain text) it names it."""
    try:
        document = json.loads(message)
    except ValueError:
        return event_id in message
    if isinstance(document, dict) and "event_id" in document:
        return document["event_id"] == event_id
    return event_id in message


def _page_through(logs: Any, kwargs: dict[str, Any]) -> Iterator[dict[str, Any]]:
    while True:
        page = logs.filter_log_events(**kwargs)
        yield from page.get("events", [])
        token = page.get("nextToken")
        if not token or token == kwargs.get("nextToken"):
            return
        kwargs = {**kwargs, "nextToken": token}


def read_lines(logs: Any, log_group: str, event_id: str | None = None, start_ms: int | None = None) -> list[LogLine]:
    """Every line of the group since `start_ms`, oldest first; with `event_id` only that event's."""
    kwargs: dict[str, Any] = {"logGroupName": log_group}
    if start_ms is not None:
        kwargs["startTime"] = start_ms
    if event_id:
        kwargs["filterPattern"] = json.dumps(event_id)  # a quoted term: the id appears in the line
    lines = [
        LogLine(int(e["timestamp"]), e.get("logStreamName", ""), e["message"], e.get("eventId", ""))
        for e in _page_through(logs, kwargs)
        if not event_id or _mentions(e["message"], event_id)
    ]
    return sorted(lines, key=lambda line: line.timestamp)


def follow(
    logs: Any,
    log_group: str,
    event_id: str | None = None,
    interval: float = 1.0,
    sleep: Callable[[float], None] = time.sleep,
    keep_going: Callable[[], bool] = lambda: True,
) -> Iterator[LogLine]:
    """Yield lines as they arrive (as `aws logs tail --follow`), until `keep_going` says stop."""
    seen: set[tuple[str, str]] = set()
    since: int | None = None
    while True:
        for line in read_lines(logs, log_group, event_id, since):
            key = (line.event_id, line.message) if line.event_id else (str(line.timestamp), line.message)
            if key in seen:
                continue
            seen.add(key)
            since = max(since or 0, line.timestamp)
            yield line
        if not keep_going():
            return
        sleep(interval)


def dropped_note(logs: Any, log_group: str) -> str | None:
    """What the endpoint's log budget dropped of the group, in a sentence; None when nothing was
    (and on AWS, which keeps events by the group's retention and puts no such tag)."""
    try:
        tags = logs.list_tags_log_group(logGroupName=log_group).get("tags", {})
    except ClientError:
        return None
    dropped = int(tags.get(LOG_DROPPED_TAG, "0") or 0)
    if not dropped:
        return None
    return (
        f"{dropped:,} older lines of {log_group} were dropped: the embedded AWS keeps the newest "
        f"{int(tags.get(LOG_BUDGET_TAG, '0')):,} per log group (`onceflow start --log-budget N` keeps more, at a memory cost)"
    )
