"""The requests the local stack's IAM enforcement refused, as `onceflow status` shows them: read with
boto3 from the CloudWatch Logs group the embedded AWS writes each denial to (one line each,
onceflow/engine/iam/denials.py), grouped by who was refused what on which resource.

On AWS a denial is an AccessDenied event in CloudTrail, not in this group: `status --aws` reads none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

DENIAL_LOG_GROUP = "/onceflow/access-denied"  # engine/iam/denials.py writes here
READ_AT_MOST = 10_000  # lines read back; the engine keeps its newest 10,000 denials too
_LINE = re.compile(
    r"^AccessDenied: (?P<principal>\S+) is not authorized to perform (?P<action>\S+) "
    r"on (?P<resource>\S+) \((?P<reason>.*)\)$"
)


@dataclass(frozen=True)
class DeniedAccess:
    """One distinct denial: who, what, on which resource, how often, and AWS's reason."""

    principal: str
    action: str
    resource: str
    reason: str
    count: int

    def line(self) -> str:
        times = f"{self.count}x " if self.count > 1 else ""
        return f"{times}{self.principal} is not authorized to perform {self.action} on {self.resource} ({self.reason})"


def parse(message: str) -> tuple[str, str, str, str] | None:
    """A denial line's principal, action, resource and reason; None for any other line."""
    found = _LINE.match(message.strip())
    return (found["principal"], found["action"], found["resource"], found["reason"]) if found else None


def distinct(messages: list[str]) -> list[DeniedAccess]:
    """One entry per (principal, action, resource), in the order each was first refused."""
    seen: dict[tuple[str, str, str], tuple[str, int]] = {}
    for message in messages:
        parsed = parse(message)
        if parsed is None:
            continue
        key = parsed[:3]
        reason, count = seen.get(key, (parsed[3], 0))
        seen[key] = (reason, count + 1)
    return [DeniedAccess(*key, reason, count) for key, (reason, count) in seen.items()]


def read_denials(logs: Any) -> list[DeniedAccess]:
    """The distinct denials logged so far (none when the group does not exist: nothing was refused)."""
    messages: list[str] = []
    request: dict[str, Any] = {"logGroupName": DENIAL_LOG_GROUP}
    try:
        while len(messages) < READ_AT_MOST:
            page = logs.filter_log_events(**request)
            messages.extend(str(event.get("message", "")) for event in page.get("events", []))
            token = page.get("nextToken")
            if not token or not page.get("events"):
                break
            request["nextToken"] = token
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") == "ResourceNotFoundException":
            return []
        raise
    return distinct(messages)
