"""The starter's configuration, read from its environment (set by template.yaml)."""

from __future__ import annotations

import os
from dataclasses import dataclass

import jmespath
from jmespath.exceptions import JMESPathError

from starter.formats import FORMATS, EventFormat
from starter.payload_validation import PayloadValidationSetupError, Validator, payload_validator

STATE_MACHINE_TYPES = ("STANDARD", "EXPRESS")
SOURCE_QUEUE_TYPES = ("STANDARD", "FIFO")
# Records of a batch handled at once. EXPRESS waits for each execution, so a batch's executions
# run side by side; STANDARD only starts them (tens of milliseconds each), one after the other.
# With a FIFO source it is the number of message groups handled side by side (each group's
# records one after the other, each waited for), so STANDARD takes EXPRESS's default.
DEFAULT_MAX_CONCURRENT_RECORDS = {"STANDARD": 1, "EXPRESS": 10}
DEFAULT_MAX_CONCURRENT_GROUPS = 10


class ConfigurationError(RuntimeError):
    """The function's environment is wrong: every record would fail until it is fixed."""


def _whole_number(env: os._Environ[str] | dict[str, str], name: str, default: int, minimum: int) -> int:
    text = env.get(name) or str(default)
    if not text.isdigit() or int(text) < minimum:
        raise ConfigurationError(f"{name}={text!r} must be a whole number, at least {minimum}")
    return int(text)


@dataclass(frozen=True)
class Settings:
    state_machine_arn: str
    dead_letter_queue_url: str
    event_format: EventFormat
    event_id_path: str
    record_retention_days: int
    # STANDARD: StartExecution and acknowledge. EXPRESS: StartSyncExecution and acknowledge only
    # what ended on a path that finished or dead-lettered the event.
    state_machine_type: str = "STANDARD"
    # When set, a redelivery of an event already sent with the same payload starts no execution.
    processed_events_table: str | None = None
    # EXPRESS: how long a StartSyncExecution call may take (the workflow's TimeoutSeconds plus a margin).
    sync_execution_timeout_seconds: int = 0
    max_concurrent_records: int = 1
    # FIFO: records of a message group one after the other, each acknowledged only once its
    # execution ended (R5); the group's first failure fails the rest of it.
    source_queue_type: str = "STANDARD"
    # Where a record Step Functions throttled for a whole invocation is sent again (throttling.py);
    # unset, or a FIFO source (it would go behind its group's later messages), it is reported failed
    # (FIFO: and kept in flight on this queue, with its group's held-back records, for longer each round).
    source_queue_url: str | None = None
    # What the domain's payload must be (PAYLOAD_MODEL or PAYLOAD_SCHEMA); None: not validated.
    payload_validator: Validator | None = None

    @property
    def express(self) -> bool:
        return self.state_machine_type == "EXPRESS"

    @property
    def fifo(self) -> bool:
        return self.source_queue_type == "FIFO"

    @property
    def waits_for_standard_executions(self) -> bool:
        """FIFO STANDARD: the starter polls DescribeExecution until the execution ended."""
        return self.fifo and not self.express

    @classmethod
    def from_environment(cls, environment: dict[str, str] | None = None) -> Settings:
        """Read and check every setting (from the process's environment, or the one given), so a
        mistake fails loudly once, not per record."""
        env = os.environ if environment is None else environment
        missing = [name for name in ("STATE_MACHINE_ARN", "DEAD_LETTER_QUEUE_URL") if not env.get(name)]
        if missing:
            raise ConfigurationError(f"environment variables not set: {', '.join(missing)}")
        format_name = env.get("EVENT_FORMAT") or "json"
        if format_name not in FORMATS:
            raise ConfigurationError(f"EVENT_FORMAT={format_name!r} is not one of {', '.join(sorted(FORMATS))}")
        event_format = FORMATS[format_name]
        for name in ("PAYLOAD_EVENT_ID_PATH", "EVENT_ID_PATH"):  # s3's own default names a computed id
            if env.get(name):
                try:
                    jmespath.compile(env[name])
                except JMESPathError as error:
                    raise ConfigurationError(f"{name}={env[name]!r} is not a JMESPath expression: {error}") from None
        event_id_path = env.get("EVENT_ID_PATH") or event_format.event_id_path(env.get("PAYLOAD_EVENT_ID_PATH"))
        if event_id_path is None:
            raise ConfigurationError(
                f"EVENT_FORMAT={format_name} needs PAYLOAD_EVENT_ID_PATH (where the event_id is in the domain's "
                "payload) or EVENT_ID_PATH (where it is in the body)"
            )
        try:
            validator = payload_validator(env.get("PAYLOAD_MODEL") or None, env.get("PAYLOAD_SCHEMA") or None)
        except PayloadValidationSetupError as error:
            raise ConfigurationError(str(error)) from None
        state_machine_type = env.get("STATE_MACHINE_TYPE") or "STANDARD"
        if state_machine_type not in STATE_MACHINE_TYPES:
            raise ConfigurationError(
                f"STATE_MACHINE_TYPE={state_machine_type!r} is not one of {', '.join(STATE_MACHINE_TYPES)}"
            )
        source_queue_type = env.get("SOURCE_QUEUE_TYPE") or "STANDARD"
        if source_queue_type not in SOURCE_QUEUE_TYPES:
            raise ConfigurationError(
                f"SOURCE_QUEUE_TYPE={source_queue_type!r} is not one of {', '.join(SOURCE_QUEUE_TYPES)}"
            )
        sync_timeout = _whole_number(env, "SYNC_EXECUTION_TIMEOUT_SECONDS", 0, 0)
        if (state_machine_type == "EXPRESS" or source_queue_type == "FIFO") and sync_timeout < 1:
            raise ConfigurationError(
                "SYNC_EXECUTION_TIMEOUT_SECONDS must be set for EXPRESS and for a FIFO source "
                "(longer than the workflow's TimeoutSeconds)"
            )
        default_concurrency = (
            DEFAULT_MAX_CONCURRENT_GROUPS
            if source_queue_type == "FIFO"
            else DEFAULT_MAX_CONCURRENT_RECORDS[state_machine_type]
        )
        return cls(
            state_machine_arn=env["STATE_MACHINE_ARN"],
            dead_letter_queue_url=env["DEAD_LETTER_QUEUE_URL"],
            event_format=event_format,
            event_id_path=event_id_path,
            record_retention_days=_whole_number(env, "RECORD_RETENTION_DAYS", 35, 1),
            state_machine_type=state_machine_type,
            processed_events_table=env.get("PROCESSED_EVENTS_TABLE") or None,
            sync_execution_timeout_seconds=sync_timeout,
            max_concurrent_records=_whole_number(env, "MAX_CONCURRENT_RECORDS", default_concurrency, 1),
            source_queue_type=source_queue_type,
            source_queue_url=env.get("SOURCE_QUEUE_URL") or None,
            payload_validator=validator,
        )
