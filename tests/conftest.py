"""Shared fixtures: one embedded AWS per session, a fresh stack from template.yaml per test."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest

from onceflow.embedded import EmbeddedAws
from onceflow.event_source import SqsEventSource
from onceflow.executions import stop_running
from onceflow.observe import NotificationInbox
from onceflow.stack import LocalStack, deploy
from onceflow.starter_runtime import StarterRuntime

# moto logs every failed task at ERROR with a long repr; the tests assert on the history instead.
logging.getLogger("moto.stepfunctions").setLevel(logging.CRITICAL)


@pytest.fixture(scope="session")
def embedded_aws() -> Iterator[EmbeddedAws]:
    with EmbeddedAws(time_scale=0.0) as aws:
        yield aws


@pytest.fixture
def stack(embedded_aws: EmbeddedAws) -> Iterator[LocalStack]:
    embedded_aws.reset()
    local_stack = deploy(embedded_aws.endpoint_url)
    yield local_stack
    stop_running(local_stack.client("stepfunctions"), [local_stack.state_machine_arn])


@pytest.fixture
def inbox(stack: LocalStack) -> NotificationInbox:
    return NotificationInbox(stack.client("sns"), stack.client("sqs"), stack.notification_topic_arn)


@pytest.fixture
def starter_logs() -> io.StringIO:
    return io.StringIO()


@pytest.fixture
def starter(stack: LocalStack, starter_logs: io.StringIO) -> StarterRuntime:
    return StarterRuntime(stack, log_stream=starter_logs)


@pytest.fixture
def event_source(stack: LocalStack, starter: StarterRuntime) -> SqsEventSource:
    return SqsEventSource(stack.client("sqs"), stack.source_queue_url, stack.event_source, starter.invoke)
