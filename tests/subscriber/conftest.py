"""The stack deployed with the example subscriber (DeploySubscriber=true), and its pieces."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest

from onceflow.local.event_source import SqsEventSource
from onceflow.local.function_runtime import FunctionRuntime
from onceflow.local.stack import LocalFunction, LocalStack
from onceflow.ops.executions import stop_running
from tests.conftest import fresh_stack

SUBSCRIBER_PARAMETERS = {"DeploySubscriber": "true"}


@pytest.fixture
def subscriber_stack(request: pytest.FixtureRequest) -> Iterator[LocalStack]:
    embedded = request.getfixturevalue("embedded_aws")
    stack = fresh_stack(
        embedded, request.getfixturevalue("_deployed"), key="subscriber", parameters=SUBSCRIBER_PARAMETERS
    )
    yield stack
    stop_running(stack.client("stepfunctions"), [stack.state_machine_arn])


@pytest.fixture
def subscriber(subscriber_stack: LocalStack) -> LocalFunction:
    (function,) = subscriber_stack.subscribers
    return function


@pytest.fixture
def subscriber_logs() -> io.StringIO:
    return io.StringIO()


@pytest.fixture
def subscriber_runtime(subscriber_stack: LocalStack, subscriber: LocalFunction, subscriber_logs) -> FunctionRuntime:
    return FunctionRuntime(subscriber_stack, subscriber.logical_id, log_stream=subscriber_logs)


@pytest.fixture
def subscriber_source(subscriber_stack: LocalStack, subscriber: LocalFunction, subscriber_runtime) -> SqsEventSource:
    assert subscriber.queue_url is not None and subscriber.event_source is not None
    return SqsEventSource(
        subscriber_stack.client("sqs"), subscriber.queue_url, subscriber.event_source, subscriber_runtime.invoke
    )
