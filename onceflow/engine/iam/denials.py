"""Every request the enforcement refused, kept for the local stack's log and `onceflow status`.

Each denial is one line naming the principal, the action and the resource (`Denial.line`), logged
at WARNING on the `onceflow.iam` logger and appended to the embedded CloudWatch Logs group
`/onceflow/access-denied` (DENIAL_LOG_GROUP), which `onceflow status` reads, as CloudTrail would
record an AccessDenied on AWS.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field

logger = logging.getLogger("onceflow.iam")
DENIAL_LOG_GROUP = "/onceflow/access-denied"


@dataclass(frozen=True)
class Denial:
    principal: str
    action: str
    resource: str
    reason: str  # AWS's "because ..." / "with an explicit deny in ..."
    at: float = field(default_factory=time.time)

    @property
    def line(self) -> str:
        return f"AccessDenied: {self.principal} is not authorized to perform {self.action} on {self.resource} ({self.reason})"


class DenialLog:
    """The denials since the engine started or was reset (bounded: the newest `limit`)."""

    def __init__(self, limit: int = 10_000):
        self.limit = limit
        self._lock = threading.Lock()
        self._denials: list[Denial] = []
        self.total = 0

    def add(self, denial: Denial) -> None:
        with self._lock:
            self._denials.append(denial)
            self.total += 1
            del self._denials[: -self.limit]
        logger.warning(denial.line)

    def all(self) -> list[Denial]:
        with self._lock:
            return list(self._denials)

    def clear(self) -> None:
        with self._lock:
            self._denials.clear()
            self.total = 0
