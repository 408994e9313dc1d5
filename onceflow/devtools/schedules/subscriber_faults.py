"""The example subscriber's faults in a schedule: crashes armed by `CrashSubscriber`, counted so a
test can prove they happened (R4 must hold whatever they did)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from onceflow.local.event_source import Invoke


class SubscriberCrashed(RuntimeError):
    pass


class SubscriberCrashes:
    """Wraps the subscriber's invoke: an armed crash fires on its next invocation."""

    def __init__(self) -> None:
        self.armed: list[str] = []
        self.fired: Counter[str] = Counter()

    def arm(self, where: str) -> None:
        self.armed.append(where)

    def disarm(self) -> None:
        self.armed.clear()

    def wrap(self, invoke: Invoke) -> Invoke:
        def wrapped(event: dict[str, Any]) -> dict[str, Any]:
            if not self.armed:
                return invoke(event)
            where = self.armed.pop(0)
            self.fired[where] += 1
            if where == "before_write":
                raise SubscriberCrashed("injected: the subscriber died before its write")
            invoke(event)
            raise SubscriberCrashed("injected: the subscriber died after its write, before the acknowledgement")

        return wrapped
