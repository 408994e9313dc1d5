"""The client commands' timestamp parser: botocore's result, without dateutil's `tzlocal` on every value.

botocore turns every timestamp of a response into a datetime in the local time zone
(`botocore.utils.parse_timestamp`: `datetime.fromtimestamp(value, dateutil.tz.tzlocal())` for the
epoch seconds of the JSON protocols). It builds a `tzlocal` for each value, and every later
`utcoffset()` of such a datetime (each comparison of two of them, each `isoformat`, each
`astimezone`) runs dateutil's Python code again: `trace` sorts and writes thousands of them
(ListExecutions' dates, every history event's timestamp). Here an epoch value becomes the same
instant in the local zone with its offset fixed at that instant (`astimezone()`, the C library's
`localtime`): the same wall time, offset, `isoformat()` and ordering, at a fraction of the cost.
Anything else (ISO 8601 and RFC 822 strings, values out of the platform's range) is botocore's.

Installed per botocore session, through the documented `set_parser_defaults` of its response
parser factory, so it touches only the clients the commands make.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from botocore.utils import parse_timestamp as botocore_parse_timestamp

from onceflow.ops import client_speedups


def parse_timestamp(value: Any) -> datetime:
    if type(value) in (int, float):
        try:
            return datetime.fromtimestamp(value, UTC).astimezone()
        except (OSError, OverflowError, ValueError):
            pass
    return botocore_parse_timestamp(value)


def install(session: Any) -> Any:
    """Parse the timestamps of every client `session` makes from now on with parse_timestamp
    (unless switched off: onceflow/ops/client_speedups.py)."""
    if not client_speedups.enabled("timestamps"):
        return session
    session.get_component("response_parser_factory").set_parser_defaults(timestamp_parser=parse_timestamp)
    return session
