"""os.environ read whole while this process's functions set and unset their variables
(onceflow/local/process_environment.py).

Making a botocore client reads the proxy variables by iterating os.environ.items(); the local
runtime unsets a function's session variables after its invocation while executions make their
clients in other threads. Iterating os.environ lists the keys, then reads each: a key unset in
between raised KeyError from inside botocore (an execution then failed at its first SNS publish or
SQS send of a run). With the runtime installed, a whole read is one snapshot.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import ItemsView, Iterator

import boto3
import pytest

from onceflow.local import process_environment

VARIABLE = "ONCEFLOW_TEST_UNSET_MIDWAY"


@pytest.fixture
def installed() -> Iterator[None]:
    process_environment.install()  # once per process (the local runtime installs it too)
    yield
    os.environ.pop(VARIABLE, None)


def _unset_midway(items: ItemsView) -> list[tuple[str, str]]:
    """Iterate `items`, unsetting VARIABLE (set last, so listed after the first) after the first item."""
    read, iterator = [], iter(items)
    read.append(next(iterator))
    del os.environ[VARIABLE]
    read.extend(iterator)
    return read


def test_a_variable_unset_while_the_environment_is_read_is_no_error(installed: None) -> None:
    os.environ[VARIABLE] = "set"
    with pytest.raises(KeyError, match=VARIABLE):  # the live view os.environ had: the fault
        _unset_midway(ItemsView(os.environ))
    os.environ[VARIABLE] = "set"
    read = dict(_unset_midway(os.environ.items()))
    assert read[VARIABLE] == "set" and VARIABLE not in os.environ  # the snapshot, then the change
    os.environ[VARIABLE] = "again"
    copied = os.environ.copy()
    del os.environ[VARIABLE]
    assert type(copied) is dict and copied[VARIABLE] == "again" and VARIABLE not in os.environ
    assert dict(os.environ.items()) == dict(os.environ) and sorted(os.environ.values()) == sorted(
        dict(os.environ).values()
    )


def test_clients_are_made_while_another_thread_sets_and_unsets_a_variable(installed: None) -> None:
    """botocore's proxy look-up while a function's variables come and go: no KeyError (the fault,
    with the thread switch made frequent: several in a hundred clients before)."""
    stop = threading.Event()
    changes = [0]

    def churn() -> None:
        while not stop.is_set():
            os.environ[VARIABLE] = "session"
            os.environ.pop(VARIABLE, None)
            changes[0] += 1

    session = boto3.session.Session()
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    thread = threading.Thread(target=churn)
    thread.start()
    try:
        for _ in range(60):
            session.client(
                "sqs",
                region_name="us-east-1",
                endpoint_url="http://127.0.0.1:9",
                aws_access_key_id="testing",
                aws_secret_access_key="testing",
            )
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
    assert changes[0] > 60  # the variable really came and went meanwhile
