"""A function's log output into the embedded CloudWatch Logs, as Lambda ships it on AWS.

The in-process runtime writes each log line (JSON from the Powertools Logger, EMF metrics) to a
stream; this stream keeps the lines and `publish()` puts them with PutLogEvents into the
function's log group, in a log stream named as Lambda names them. Then `onceflow logs` and
`aws logs filter-log-events` read them back as they would on AWS.
"""

from __future__ import annotations

import io
import threading
import time
import uuid
from datetime import UTC, datetime
from typing import Any

# PutLogEvents takes at most 10,000 events and 1 MiB per call.
# https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_PutLogEvents.html
_MAX_EVENTS_PER_CALL = 10_000
_MAX_BYTES_PER_CALL = 1_048_576
_EVENT_OVERHEAD_BYTES = 26


def lambda_log_stream_name(now: datetime | None = None) -> str:
    """`2026/12/01/[$LATEST]3f1c…`: the shape Lambda gives an execution environment's stream."""
    day = (now or datetime.now(UTC)).strftime("%Y/%m/%d")
    return f"{day}/[$LATEST]{uuid.uuid4().hex}"


class CloudWatchLogsStream(io.TextIOBase):
    """A text stream whose lines go to one log stream of `log_group` when `publish()` is called."""

    def __init__(self, logs: Any, log_group: str, stream_name: str | None = None):
        super().__init__()
        self._logs = logs
        self.log_group = log_group
        self.stream_name = stream_name or lambda_log_stream_name()
        self._partial = ""
        self._pending: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._created = False
        self.published = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        now = int(time.time() * 1000)
        with self._lock:
            self._partial += text
            *lines, self._partial = self._partial.split("\n")
            self._pending.extend({"timestamp": now, "message": line} for line in lines if line.strip())
        return len(text)

    def flush(self) -> None:
        """Called by logging after every record: lines are kept for publish(), not sent one by one."""

    def publish(self) -> int:
        """Put what was written since the last call; returns how many lines went out."""
        with self._lock:
            events, self._pending = self._pending, []
        if not events:
            return 0
        if not self._created:
            self._logs.create_log_stream(logGroupName=self.log_group, logStreamName=self.stream_name)
            self._created = True
        for batch in _batches(events):
            self._logs.put_log_events(logGroupName=self.log_group, logStreamName=self.stream_name, logEvents=batch)
        self.published += len(events)
        return len(events)


def _batches(events: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    batches: list[list[dict[str, Any]]] = [[]]
    size = 0
    for event in events:
        event_size = len(event["message"].encode()) + _EVENT_OVERHEAD_BYTES
        if batches[-1] and (len(batches[-1]) >= _MAX_EVENTS_PER_CALL or size + event_size > _MAX_BYTES_PER_CALL):
            batches.append([])
            size = 0
        batches[-1].append(event)
        size += event_size
    return batches


class FunctionLogRouter(io.TextIOBase):
    """One stream for every in-process function, each line put in its own function's log group.

    Powertools Loggers of one service name share a logging handler, and EMF metrics are printed
    through one module-wide `print`, so the in-process functions cannot each get a stream of their
    own; this router tells them apart by the invocation that is running on the writing thread.
    """

    def __init__(self, streams: dict[str, CloudWatchLogsStream], default: str):
        super().__init__()
        self.streams = streams
        self.default = default
        self._running = threading.local()

    def writable(self) -> bool:
        return True

    def invoking(self, logical_id: str, invoke: Any) -> Any:
        """`invoke`, with what it writes routed to `logical_id`'s stream."""

        def routed(event: Any) -> Any:
            self._running.name = logical_id
            try:
                return invoke(event)
            finally:
                self._running.name = None

        return routed

    def write(self, text: str) -> int:
        name = getattr(self._running, "name", None) or self.default
        return self.streams.get(name, self.streams[self.default]).write(text)

    def flush(self) -> None:
        """Lines are kept for publish()."""

    def publish(self) -> int:
        return sum(stream.publish() for stream in self.streams.values())


def log_streams_for(logs: Any, outputs: dict[str, str], logical_ids: list[str]) -> dict[str, CloudWatchLogsStream]:
    """`StarterFunction` writes to the group of the output `StarterLogGroupName`, and so on."""
    streams = {}
    for logical_id in logical_ids:
        group = outputs.get(logical_id.removesuffix("Function") + "LogGroupName")
        if group:
            streams[logical_id] = CloudWatchLogsStream(logs, group)
    return streams
