"""A bounded number of log events per log group of the embedded CloudWatch Logs, oldest dropped first.

moto keeps every event ever put, for as long as the process lives; a long `onceflow start` run puts
about 1.4 of the starter's log lines per message (issue 21). AWS keeps a log group's events for its
retention period (never expiring by default,
https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/Working-with-log-groups-and-streams.html#SettingLogRetention),
not by count. `LogBudget(max_events)` keeps the newest `max_events` events of each log group and
drops the older ones as new ones are put (oldest first across the group's streams); it says so on
the group itself, with two tags that ListTagsLogGroup answers (`onceflow logs` reads them):
`onceflow:local-log-budget` (the budget) and `onceflow:local-log-events-dropped` (how many so far).
A stream's storedBytes goes down with what it lost; the stream itself stays (DescribeLogStreams).

Off unless asked (`EmbeddedAws(log_budget=N)`): tests keep every event. `onceflow start
--log-budget N` (10,000 by default: a kept line of the starter, about 600 characters, costs about
0.8 KB of the process's memory, moto's LogEvent and the text, measured with tracemalloc).

Patched in moto: `logs.models.LogGroup.put_log_events` (PutLogEvents goes through it).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any

from moto.logs import models as logs_models

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import Patch
from onceflow.ops.logs import LOG_BUDGET_TAG, LOG_DROPPED_TAG


def moto_needs() -> list[Need]:
    return [
        need(logs_models.LogGroup, "put_log_events", "log_stream_name", "log_events"),  # LogGroup.streams
        need(logs_models.LogStream, "put_log_events", "log_events"),  # LogStream.events, stored_bytes
        need(logs_models, "logs_backends"),
        need(logs_models.LogsBackend, "tag_resource", "arn", "tags"),
        need(logs_models.LogsBackend, "list_tags_for_resource", "resource_arn"),
    ]


@dataclass
class LogBudget:
    max_events: int

    def __post_init__(self) -> None:
        if self.max_events < 0:
            raise ValueError("max_events must be 0 or more")

    def trim(self, group: Any) -> int:
        """Drop the group's oldest events beyond the budget; returns how many."""
        streams = [stream for stream in group.streams.values() if stream.events]
        excess = sum(len(stream.events) for stream in streams) - self.max_events
        if excess <= 0:
            return 0
        if len(streams) == 1:
            losses = {id(streams[0]): excess}
        else:  # oldest first across the streams (each stream's events are in the order they were put)
            merged = heapq.merge(
                *([(event.timestamp, event.event_id, id(stream)) for event in stream.events] for stream in streams)
            )
            losses = {}
            for _, _, owner in (next(merged) for _ in range(excess)):
                losses[owner] = losses.get(owner, 0) + 1
        for stream in streams:
            lost = losses.get(id(stream), 0)
            if lost:
                stream.stored_bytes -= sum(len(event.message) for event in stream.events[:lost])
                del stream.events[:lost]
        backend = logs_models.logs_backends[group.account_id][group.region]
        dropped = int(backend.list_tags_for_resource(group.arn).get(LOG_DROPPED_TAG, "0")) + excess
        backend.tag_resource(group.arn, {LOG_BUDGET_TAG: str(self.max_events), LOG_DROPPED_TAG: str(dropped)})
        return excess

    def patches(self) -> list[Patch]:
        original = logs_models.LogGroup.put_log_events
        budget = self

        def put_log_events(self: Any, log_stream_name: str, log_events: list[dict[str, Any]]) -> str:
            token = original(self, log_stream_name, log_events)
            budget.trim(self)
            return token

        return [(logs_models.LogGroup, "put_log_events", put_log_events)]
