"""The starter's configuration, read from its environment (set by template.yaml)."""

from __future__ import annotations

import os
from dataclasses import dataclass

import jmespath
from jmespath.exceptions import JMESPathError

from starter.formats import FORMATS, EventFormat


class ConfigurationError(RuntimeError):
    """The function's environment is wrong: every record would fail until it is fixed."""


@dataclass(frozen=True)
class Settings:
    state_machine_arn: str
    dead_letter_queue_url: str
    event_format: EventFormat
    event_id_path: str
    record_retention_days: int

    @classmethod
    def from_environment(cls) -> Settings:
        """Read and check every setting, so a mistake fails loudly once, not per record."""
        env = os.environ
        missing = [name for name in ("STATE_MACHINE_ARN", "DEAD_LETTER_QUEUE_URL") if not env.get(name)]
        if missing:
            raise ConfigurationError(f"environment variables not set: {', '.join(missing)}")
        format_name = env.get("EVENT_FORMAT") or "json"
        if format_name not in FORMATS:
            raise ConfigurationError(f"EVENT_FORMAT={format_name!r} is not one of {', '.join(sorted(FORMATS))}")
        event_format = FORMATS[format_name]
        event_id_path = env.get("EVENT_ID_PATH") or event_format.event_id_path
        try:
            jmespath.compile(event_id_path)
        except JMESPathError as error:
            raise ConfigurationError(f"EVENT_ID_PATH={event_id_path!r} is not a JMESPath expression: {error}") from None
        retention = env.get("RECORD_RETENTION_DAYS") or "35"
        if not retention.isdigit() or int(retention) < 1:
            raise ConfigurationError(f"RECORD_RETENTION_DAYS={retention!r} must be a whole number of days, at least 1")
        return cls(
            state_machine_arn=env["STATE_MACHINE_ARN"],
            dead_letter_queue_url=env["DEAD_LETTER_QUEUE_URL"],
            event_format=event_format,
            event_id_path=event_id_path,
            record_retention_days=int(retention),
        )
