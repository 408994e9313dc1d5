"""The starter's boto3 clients: explicit timeouts that fit the function, the standard retry mode,
and the `sync-` host prefix of StartSyncExecution kept on AWS but dropped for a local endpoint.

botocore: https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html (standard
mode), https://docs.aws.amazon.com/sdkref/latest/guide/feature-ss-endpoints.html (AWS_ENDPOINT_URL,
AWS_ENDPOINT_URL_SFN). Pure: no AWS is called.
"""

from __future__ import annotations

import pytest

from starter import clients

OVERRIDES = ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_SFN", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")


@pytest.fixture
def no_endpoint(monkeypatch):
    for name in OVERRIDES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")  # signed, never sent: request_url stops before sending
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    clients.reset()
    yield monkeypatch
    clients.reset()


def request_url(client, operation: str, **params) -> str:
    """The URL botocore would send `operation` to (stopped before it is sent)."""
    seen: list[str] = []

    def capture(request, **kwargs):
        seen.append(request.url)
        raise RuntimeError("stop before sending")

    client.meta.events.register_first("before-send", capture)
    with pytest.raises(RuntimeError, match="stop before sending"):
        getattr(client, operation)(**params)
    return seen[0]


def test_every_client_has_explicit_timeouts_and_standard_retries(no_endpoint):
    sqs = clients.client("sqs")
    config = sqs.meta.config
    assert (config.connect_timeout, config.read_timeout) == (
        clients.CONNECT_TIMEOUT_SECONDS,
        clients.READ_TIMEOUT_SECONDS,
    )
    assert config.retries == {"mode": "standard", "total_max_attempts": clients.MAX_ATTEMPTS}
    # Three attempts of connect + read fit in the 30 s function with room to report the batch.
    assert clients.MAX_ATTEMPTS * (clients.CONNECT_TIMEOUT_SECONDS + clients.READ_TIMEOUT_SECONDS) < 30


def test_the_synchronous_client_reads_as_long_as_an_execution_runs_and_leaves_retries_to_the_starter(no_endpoint):
    sfn = clients.client("stepfunctions", read_timeout=315)
    assert sfn.meta.config.read_timeout == 315
    assert sfn.meta.config.retries == {"mode": "standard", "total_max_attempts": 1}
    assert clients.client("stepfunctions", read_timeout=315) is sfn  # one per service and timeout
    assert clients.client("stepfunctions") is not sfn


def test_on_aws_start_sync_execution_goes_to_the_sync_host(no_endpoint):
    sfn = clients.client("stepfunctions", read_timeout=315)
    url = request_url(
        sfn, "start_sync_execution", stateMachineArn="arn:aws:states:us-east-1:123456789012:stateMachine:p"
    )
    assert url == "https://sync-states.us-east-1.amazonaws.com/"


@pytest.mark.parametrize("variable", ["AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_SFN"])
def test_with_a_local_endpoint_it_goes_to_that_endpoint(no_endpoint, variable):
    no_endpoint.setenv(variable, "http://127.0.0.1:4566")
    sfn = clients.client("stepfunctions", read_timeout=315)
    url = request_url(
        sfn, "start_sync_execution", stateMachineArn="arn:aws:states:us-east-1:123456789012:stateMachine:p"
    )
    assert url == "http://127.0.0.1:4566/"


def test_ignoring_configured_endpoints_keeps_the_prefix(no_endpoint):
    no_endpoint.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:4566")
    no_endpoint.setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true")
    assert clients.client_config().inject_host_prefix is True
