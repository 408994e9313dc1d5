"""The client commands' timestamp parser (onceflow/ops/timestamps.py) gives what botocore's gives:
the same instant, wall time, offset and `isoformat()` in the local zone, in zones with daylight
saving time too (at its changes, both ways), and botocore's own answer for what is not epoch seconds.

Instants are taken under today's rules of each zone (the executions a command reads are recent):
for an instant when a zone had other rules (Lord Howe was +10:00 in 1970), dateutil's `tzlocal`
assumes today's two offsets and the C library's `localtime` gives the offset of then."""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from botocore.utils import parse_timestamp as botocore_parse_timestamp

from onceflow.ops import stack as stack_module
from onceflow.ops.stack import Target
from onceflow.ops.timestamps import parse_timestamp


@pytest.fixture(params=["UTC", "Europe/Paris", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata"])
def zone(request: pytest.FixtureRequest) -> Iterator[str]:
    before = os.environ.get("TZ")
    os.environ["TZ"] = request.param
    time.tzset()
    yield request.param
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()


def _epochs() -> list[float]:
    """Around 2026's daylight saving changes (Paris: 29 March, 25 October; New York: 8 March,
    1 November; Lord Howe: half an hour, 5 April and 4 October), each second of the hours there,
    plus fractions of a second as Step Functions and SQS send them (milliseconds)."""
    changes = [datetime(2026, m, d, tzinfo=UTC) for m, d in ((3, 8), (3, 29), (4, 5), (10, 4), (10, 25), (11, 1))]
    values: list[float] = []
    for change in changes:
        start = int(change.timestamp())
        values += [start + s for s in range(-86_400, 86_400, 900)]
    values += [1_764_000_000.123, 1_764_000_000.999, 1_764_000_000.0005, 1_800_000_000.5]
    return values


def test_epoch_seconds_read_as_botocore_reads_them(zone: str) -> None:
    for value in _epochs():
        for given in (value, int(value)) if value == int(value) else (value,):
            ours, theirs = parse_timestamp(given), botocore_parse_timestamp(given)
            assert ours.timestamp() == theirs.timestamp(), (zone, given)  # the instant (`==` is False
            # for any two zones in a repeated hour, where tzlocal's offset depends on `fold`)
            assert ours.isoformat() == theirs.isoformat(), (zone, given)
            assert ours.utcoffset() == theirs.utcoffset(), (zone, given)
            assert ours.replace(tzinfo=None) == theirs.replace(tzinfo=None), (zone, given)  # the wall time
            assert ours.astimezone(UTC).isoformat() == theirs.astimezone(UTC).isoformat()


def test_differences_and_order_are_botocore_s(zone: str) -> None:
    values = _epochs()
    ours = [parse_timestamp(v) for v in values]
    theirs = [botocore_parse_timestamp(v) for v in values]
    assert sorted(range(len(values)), key=ours.__getitem__) == sorted(range(len(values)), key=theirs.__getitem__)
    for (a, b), (c, d) in zip(itertools.pairwise(ours), itertools.pairwise(theirs), strict=True):
        assert b - a == d - c
        assert isinstance(b - a, timedelta)


@pytest.mark.parametrize(
    "text",
    ["2026-12-02T16:30:00Z", "2026-12-02T16:30:00.123+01:00", "Wed, 02 Dec 2026 16:30:00 GMT", "1764000000.5"],
)
def test_strings_are_botocore_s_own(text: str) -> None:
    assert parse_timestamp(text).timestamp() == botocore_parse_timestamp(text).timestamp()
    assert parse_timestamp(text).isoformat() == botocore_parse_timestamp(text).isoformat()


def test_the_commands_clients_parse_with_it() -> None:
    """Both sessions the commands make clients from (the local endpoint's and AWS's) use it."""
    for session in (stack_module._local_session(), stack_module._aws_session()):
        factory = session.get_component("response_parser_factory")
        assert factory.create_parser("json")._timestamp_parser is parse_timestamp
    client = Target("http://127.0.0.1:1").client("stepfunctions")  # what reads its responses:
    assert client._endpoint._response_parser_factory.create_parser("json")._timestamp_parser is parse_timestamp
