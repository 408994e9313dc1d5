"""An execution of a state machine whose `loggingConfiguration` has a level other than OFF writes its
history events to the configured CloudWatch Logs log group, as AWS does.

moto 5.2.5 carries LocalStack's logging session (CloudWatchLoggingSession: one log stream per
execution, each event that the level records as one JSON log event: id, previous_event_id, type,
details, execution_arn, event_timestamp, redrive_count) but starts every execution without one, so
nothing was ever logged. An Express execution's history is readable only there (GetExecutionHistory
does not serve Express executions), so a caller that starts one asynchronously had no way to see
how it ended.
https://docs.aws.amazon.com/step-functions/latest/dg/cw-logs.html (log levels; "Express Workflows
... you can view the execution history in CloudWatch Logs").

AWS's recording: LocalStack's express/test_express_async.snapshot.json (test_base, the end event of
the execution in the log group). Conformance test:
tests/engine/test_conformance_api.py::test_a_logged_express_execution_writes_its_events_to_the_log_group.
"""

from __future__ import annotations

import datetime
import json
import uuid
from collections.abc import Sequence
from typing import Any

from moto.logs.models import logs_backends
from moto.stepfunctions.parser.asl.eval.event.logging import (
    CloudWatchLoggingConfiguration,
    CloudWatchLoggingSession,
)
from moto.stepfunctions.parser.backend.execution import Execution

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import current

Patch = tuple[Any, str, Any]
SESSION = "_cloud_watch_logging_session"


def moto_needs() -> list[Need]:
    return [
        need(Execution, "start"),
        need(
            CloudWatchLoggingConfiguration, "from_logging_configuration", "state_machine_arn", "logging_configuration"
        ),
        need(CloudWatchLoggingSession, "__init__", "execution_arn", "configuration"),
    ]


def _epoch_millis(timestamp: Any) -> int:
    if isinstance(timestamp, str):
        timestamp = datetime.datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    if isinstance(timestamp, datetime.datetime):
        if timestamp.tzinfo is None:
            timestamp = timestamp.replace(tzinfo=datetime.UTC)
        return int(timestamp.timestamp() * 1000)
    return int(datetime.datetime.now(datetime.UTC).timestamp() * 1000)


class LoggingSession(CloudWatchLoggingSession):
    """moto's session, writing what AWS writes: event_timestamp as epoch milliseconds text,
    redrive_count, details' output/input as the JSON text they are; to the embedded CloudWatch Logs
    through its backend (moto's own put failed on the engine's timestamps and a wrong call)."""

    redrive_count: int = 0

    def publish_history_log(self, history_log: Any) -> None:
        millis = _epoch_millis(history_log.get("event_timestamp"))
        entry = {**history_log, "event_timestamp": str(millis), "redrive_count": str(self.redrive_count)}
        message = json.dumps(entry, default=str, separators=(",", ":"))
        backend = logs_backends[self.configuration.log_account_id][self.configuration.log_region]
        group = backend.groups.get(self.configuration.log_group_name)
        if group is None:  # the log group went away: AWS drops the events
            return
        stream = self.configuration.log_stream_name
        if stream not in group.streams:
            backend.create_log_stream(self.configuration.log_group_name, stream)
        backend.put_log_events(self.configuration.log_group_name, stream, [{"timestamp": millis, "message": message}])


def session_for(execution: Any) -> CloudWatchLoggingSession | None:
    """The logging session the execution's state machine configures, or None (level OFF, none)."""
    machine = getattr(execution, "state_machine", None)
    configuration = getattr(machine, "loggingConfiguration", None)
    if not isinstance(configuration, dict):
        return None
    configuration = {"level": "OFF", "includeExecutionData": False, **configuration}
    cloud_watch = CloudWatchLoggingConfiguration.from_logging_configuration(
        state_machine_arn=machine.arn, logging_configuration=configuration
    )
    if cloud_watch is None:
        return None
    # One stream per execution, named as AWS names it: states/<machine>/<yyyy-mm-dd-hh-mm>/<id>.
    minute = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d-%H-%M")
    cloud_watch.log_stream_name = f"states/{machine.name}/{minute}/{uuid.uuid4().hex[:8]}"
    return LoggingSession(execution_arn=execution.exec_arn, configuration=cloud_watch)


def patches(before: Sequence[Patch]) -> list[Patch]:
    start = current(before, Execution, "start")

    def started(self: Execution) -> None:
        if getattr(self, SESSION, None) is None:
            setattr(self, SESSION, session_for(self))
        start(self)

    return [(Execution, "start", started)]
