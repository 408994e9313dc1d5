"""Shared fixtures: one embedded AWS per session, the stack from template.yaml deployed once and
brought back to just-deployed before each test (onceflow/engine/bookkeeping/baseline.py): executions
forgotten, tables and queues emptied, what the previous test created deleted. Each parameter set is
deployed once per session and kept beside the others (onceflow/engine/bookkeeping/worlds.py): a test
that needs another one, or that called `embedded_aws.reset()` and deployed its own stack, is followed
by one whose deployment is brought back, not deployed again.

With `AWS_ENDPOINT_URL_SFN`, `AWS_ENDPOINT_URL_DYNAMODB`, `AWS_ENDPOINT_URL_SNS`,
`AWS_ENDPOINT_URL_SQS` (or `AWS_ENDPOINT_URL` for all) set, the same tests run against those
external endpoints instead (AWS Step Functions Local, LocalStack): each test gets its own stack,
made through the service APIs and deleted afterwards, and the tests that need the embedded engine
itself are skipped with the reason (see docs/TESTING.md).
"""

from __future__ import annotations

import io
import logging
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from onceflow.devtools.endpoints import EndpointError, Endpoints, from_environment
from onceflow.devtools.external_stack import deploy_external
from onceflow.engine import ACCOUNT_ID, REGION, EmbeddedAws
from onceflow.engine.bookkeeping.worlds import Deployed
from onceflow.engine.iam.decide import forget_denials
from onceflow.local.event_source import SqsEventSource
from onceflow.local.function_runtime import StarterRuntime
from onceflow.local.stack import LocalStack, deploy
from onceflow.local.template import TEMPLATE_PATH
from onceflow.ops.executions import stop_running
from onceflow.ops.observe import NotificationInbox
from tests.endpoints.markers import MARKER, MARKER_HELP, embedded_only_reason
from tests.skip_summary import pytest_terminal_summary  # noqa: F401 (a hook: the skipped tests named at the end)

# moto logs every failed task at ERROR with a long repr; the tests assert on the history instead.
logging.getLogger("moto.stepfunctions").setLevel(logging.CRITICAL)

# Read once, at start-up: the starter runtime later sets AWS_ENDPOINT_URL in this process.
_ENDPOINTS = pytest.StashKey["Endpoints | None"]()
# Fixtures that need a service the external endpoints may not offer.
_NEEDS_SERVICE = {"safety_net": "events"}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)
    try:
        config.stash[_ENDPOINTS] = from_environment()
    except EndpointError as error:
        raise pytest.UsageError(str(error)) from error


def pytest_report_header(config: pytest.Config) -> list[str]:
    endpoints = config.stash.get(_ENDPOINTS, None)
    if endpoints is None:
        return ["endpoints: embedded (moto in this process)"]
    return ["endpoints: external", *(f"  {line}" for line in endpoints.describe())]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the embedded-only tests (so `-m embedded_only` selects them); skip them on external endpoints."""
    endpoints = config.stash.get(_ENDPOINTS, None)
    for item in items:
        reason = embedded_only_reason(item)
        if reason is not None and item.get_closest_marker(MARKER) is None:
            item.add_marker(pytest.mark.embedded_only(reason=reason))
        if endpoints is None:
            continue
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=f"embedded engine only: {reason}"))
        for fixture, service in _NEEDS_SERVICE.items():
            if fixture in getattr(item, "fixturenames", ()) and not endpoints.has(service):
                item.add_marker(pytest.mark.skip(reason=f"no {service} endpoint configured (fixture {fixture})"))


@pytest.fixture(scope="session")
def endpoints(pytestconfig: pytest.Config) -> Endpoints | None:
    """The external endpoints the suite runs against; None on the embedded endpoint (the default)."""
    return pytestconfig.stash.get(_ENDPOINTS, None)


@pytest.fixture(scope="session")
def embedded_aws(endpoints: Endpoints | None) -> Iterator[EmbeddedAws]:
    if endpoints is not None:
        pytest.skip("embedded engine only: the suite runs against external endpoints")
    with EmbeddedAws(time_scale=0.0) as aws:
        yield aws


@dataclass
class _Deployment:
    stack: LocalStack
    deployed: Deployed  # its resources and moto's state as the deploy left them


@pytest.fixture(scope="session")
def _deployed() -> dict[str, _Deployment]:
    """The session's deployments: the default stack's, and one per key of the fixtures that add one."""
    return {}


def fresh_stack(
    embedded: EmbeddedAws,
    deployed: dict[str, _Deployment],
    key: str = "default",
    mode: str = "STANDARD",
    parameters: dict[str, str] | None = None,
    template_path: Path = TEMPLATE_PATH,
) -> LocalStack:
    """The stack as just deployed: restored from the session's deployment (brought back first when
    another is live), or deployed once. Another mode is another deployment: parametrise `mode` with
    scope="module" so a module's tests run mode by mode. `parameters` (other template parameters)
    and `template_path` (another copy of the template) need a `key` of their own."""
    key = key if mode == "STANDARD" else f"{key}:{mode}"
    deployment = deployed.get(key)
    if deployment is not None:
        deployment.deployed.restore(embedded.lock)
        embedded.clock.reset()
        with embedded.lock:
            forget_denials(embedded.iam, ACCOUNT_ID, REGION)
        return deployment.stack
    embedded.reset()
    local_stack = deploy(
        embedded.endpoint_url,
        parameter_overrides={**(mode_parameters(mode) or {}), **(parameters or {})},
        template_path=template_path,
    )
    deployed[key] = _Deployment(local_stack, Deployed.capture(embedded.lock, ACCOUNT_ID, REGION))
    return local_stack


# A FIFO source with either workflow type (tests/starter/test_fifo.py): SourceQueueType alone (the
# batching window's default gives FIFO none, as Lambda requires; tests/starter/test_fifo.py checks it).
FIFO_MODES = {
    "FIFO": {"SourceQueueType": "FIFO"},
    "FIFO_EXPRESS": {"SourceQueueType": "FIFO", "StateMachineType": "EXPRESS"},
}


def mode_parameters(mode: str) -> dict[str, str] | None:
    if mode in FIFO_MODES:
        return dict(FIFO_MODES[mode])
    return None if mode == "STANDARD" else {"StateMachineType": mode}


@pytest.fixture
def mode() -> str:
    """The template's StateMachineType; a test runs in both with
    `@pytest.mark.parametrize("mode", ["STANDARD", "EXPRESS"], scope="module")`."""
    return "STANDARD"


@pytest.fixture
def stack(request: pytest.FixtureRequest, endpoints: Endpoints | None, mode: str) -> Iterator[LocalStack]:
    if endpoints is not None:
        # No reset on an external endpoint: every test gets its own names, and deletes what it made.
        deployment = deploy_external(
            endpoints, stack_name=f"onceflow-{uuid.uuid4().hex[:10]}", parameter_overrides=mode_parameters(mode)
        )
        try:
            yield deployment.stack
        finally:
            stop_running(deployment.stack.client("stepfunctions"), [deployment.stack.state_machine_arn])
            deployment.delete()
        return
    # Looked up here, not declared: a test that uses `stack` runs on any endpoint.
    embedded = request.getfixturevalue("embedded_aws")
    local_stack = fresh_stack(embedded, request.getfixturevalue("_deployed"), mode=mode)
    yield local_stack
    stop_running(local_stack.client("stepfunctions"), [local_stack.state_machine_arn])


@pytest.fixture
def inbox(stack: LocalStack, endpoints: Endpoints | None) -> Iterator[NotificationInbox]:
    if endpoints is None:
        yield NotificationInbox(stack.client("sns"), stack.client("sqs"), stack.notification_topic_arn)
        return
    sqs = stack.client("sqs")
    inbox = NotificationInbox(stack.client("sns"), sqs, stack.notification_topic_arn, name=f"{stack.stack_name}-inbox")
    yield inbox
    sqs.delete_queue(QueueUrl=inbox.queue_url)


class StarterSleptForReal(BaseException):
    """Raised where the starter would sleep for real; a BaseException, so that no handler of the
    starter's own takes it for a failed call and carries on."""


@pytest.fixture(autouse=True)
def _starter_waits_guarded(monkeypatch: pytest.MonkeyPatch, endpoints: Endpoints | None) -> Iterator[None]:
    """The starter's module-level waits and caps as they were before the test: LocalPipeline sets
    them for its whole process (the engine's clock), and a test that ran after one would otherwise
    run with what an earlier test left behind. On the embedded endpoint a test that lets the
    starter sleep for real (its throttling backoff, or the pause between its DescribeExecution
    polls) fails: tests replace the backoff, and the polls wait on the engine
    (`starter_polls_wait_on_the_engine`)."""
    from starter import executions, throttling

    for module, name in (
        (executions, "sleep"),
        (executions, "poll_sleep"),
        (throttling, "MAX_DELAY_SECONDS"),
        (throttling, "MAX_BACKOFF_SECONDS"),
    ):
        monkeypatch.setattr(module, name, getattr(module, name))
    if endpoints is not None:
        yield
        return
    slept: list[str] = []

    def noting(name: str) -> Callable[[float], None]:
        def sleep_refused(seconds: float) -> None:
            slept.append(f"{name}({seconds:.2f})")
            raise StarterSleptForReal(f"{name}({seconds:.2f})")  # no real sleep: the test fails here

        return sleep_refused

    for name in ("sleep", "poll_sleep"):
        if getattr(executions, name) is time.sleep:  # not what a module-scoped LocalPipeline set
            monkeypatch.setattr(executions, name, noting(name))
    yield
    assert not slept, (
        f"the starter slept for real: {', '.join(slept)} (starter/executions.py). Replace `sleep` (its "
        "throttling backoff) or use the fixture starter_polls_wait_on_the_engine (its DescribeExecution polls)"
    )


@pytest.fixture
def starter_polls_wait_on_the_engine(embedded_aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch) -> None:
    """The starter's DescribeExecution polls (FIFO STANDARD: starter/executions.py `poll_sleep`) wait
    for an execution's end on the embedded engine, bounded (DelayClock.poll_sleep): no real sleep
    between polls, and no poll back to back either, which would spin against the execution's own
    thread for the interpreter lock and the request lock (on a fresh stack, while that thread still
    builds its first clients, for minutes)."""
    from starter import executions

    monkeypatch.setattr(executions, "poll_sleep", embedded_aws.clock.poll_sleep)


@pytest.fixture
def starter_logs() -> io.StringIO:
    return io.StringIO()


@pytest.fixture
def starter(stack: LocalStack, starter_logs: io.StringIO) -> StarterRuntime:
    return StarterRuntime(stack, log_stream=starter_logs)


@pytest.fixture
def event_source(stack: LocalStack, starter: StarterRuntime) -> SqsEventSource:
    return SqsEventSource(stack.client("sqs"), stack.source_queue_url, stack.event_source, starter.invoke)
