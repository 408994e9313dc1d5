"""A message body judged as the stack's own starter judges it: the app's starter code, with the
settings the template gives it. The demo and the pipeline driver use it to know, before sending,
each body's event_id and payload hash, and which generated bodies the domain accepts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from onceflow.local.function_runtime import put_code_on_path
from onceflow.local.stack import LocalStack


@dataclass(frozen=True)
class Parsed:
    """What the starter makes of a body: its event_id and payload hash, or the rule it breaks."""

    body: str
    event_id: str | None
    payload_hash: str | None
    rejected: str | None = None  # "field 'x' breaks rule 'y'"

    @property
    def accepted(self) -> bool:
        return self.rejected is None


class StarterParser:
    def __init__(self, stack: LocalStack):
        starter = next(f for f in stack.functions.values() if f.code_dir == stack.starter_code_dir)
        put_code_on_path(starter)
        from starter.messages import InvalidMessage, parse_record
        from starter.settings import Settings

        self._invalid: type[Exception] = InvalidMessage
        self._parse: Any = parse_record
        self._settings = Settings.from_environment(dict(stack.starter_environment))

    def parse(self, body: str, message_id: str = "expected") -> Parsed:
        record = {"messageId": message_id, "body": body, "attributes": {}}
        try:
            event = self._parse(record, self._settings)
        except self._invalid as invalid:
            reason = f"field '{invalid.field}' breaks rule '{invalid.rule}'"  # type: ignore[attr-defined]
            return Parsed(body, invalid.event_id, None, reason)  # type: ignore[attr-defined]
        return Parsed(body, event.event_id, event.payload_hash)
