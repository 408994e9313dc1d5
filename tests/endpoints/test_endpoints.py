"""Endpoint configuration follows boto3: the same variables, the same precedence."""

from __future__ import annotations

import boto3
import pytest

from onceflow.devtools.endpoints import (
    GLOBAL_VARIABLE,
    OPTIONAL_SERVICES,
    STACK_SERVICES,
    EndpointError,
    from_environment,
    variable_for,
)

SERVICES = STACK_SERVICES + OPTIONAL_SERVICES


def test_variable_names_are_boto3s():
    assert [variable_for(s) for s in SERVICES] == [
        "AWS_ENDPOINT_URL_SFN",
        "AWS_ENDPOINT_URL_DYNAMODB",
        "AWS_ENDPOINT_URL_SNS",
        "AWS_ENDPOINT_URL_SQS",
        "AWS_ENDPOINT_URL_EVENTBRIDGE",
    ]


@pytest.mark.parametrize("service", SERVICES)
def test_boto3_reads_the_same_variable_and_prefers_it_to_the_fallback(monkeypatch, service):
    for name in (GLOBAL_VARIABLE, *map(variable_for, SERVICES)):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(GLOBAL_VARIABLE, "http://fallback.invalid:4566")
    monkeypatch.setenv(variable_for(service), "http://own.invalid:8083")

    made_by_boto3 = boto3.client(
        service, region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing"
    )

    resolved = from_environment()
    assert resolved is not None
    assert made_by_boto3.meta.endpoint_url == resolved.urls[service] == "http://own.invalid:8083"
    assert resolved.sources[service] == variable_for(service)
    others = [s for s in SERVICES if s != service]
    assert {resolved.urls[s] for s in others} == {"http://fallback.invalid:4566"}


def test_nothing_set_means_the_embedded_endpoint():
    assert from_environment({}) is None
    assert from_environment({"AWS_ENDPOINT_URL_S3": "http://localhost:9000"}) is None, "not a service of the stack"


def test_the_fallback_alone_serves_every_service():
    resolved = from_environment({GLOBAL_VARIABLE: "http://localhost:4566/"})
    assert resolved is not None
    assert dict(resolved.urls) == {service: "http://localhost:4566" for service in SERVICES}
    assert resolved.primary == "http://localhost:4566"


def test_step_functions_local_with_its_services_elsewhere():
    resolved = from_environment(
        {
            "AWS_ENDPOINT_URL_SFN": "http://localhost:8083",
            "AWS_ENDPOINT_URL_DYNAMODB": "http://localhost:8000",
            "AWS_ENDPOINT_URL_SNS": "http://localhost:4566",
            "AWS_ENDPOINT_URL_SQS": "http://localhost:4566",
        }
    )
    assert resolved is not None
    assert resolved.primary == "http://localhost:8083"
    assert resolved.urls["dynamodb"] == "http://localhost:8000"
    assert not resolved.has("events"), "EventBridge is optional: the safety net tests are skipped without it"


def test_a_service_without_an_endpoint_is_named_with_its_variable():
    with pytest.raises(EndpointError) as raised:
        from_environment({"AWS_ENDPOINT_URL_SFN": "http://localhost:8083"})
    message = str(raised.value)
    for variable in ("AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_SNS", "AWS_ENDPOINT_URL_SQS", GLOBAL_VARIABLE):
        assert variable in message


def test_a_malformed_url_is_refused():
    with pytest.raises(EndpointError, match="AWS_ENDPOINT_URL='localhost:4566'"):
        from_environment({GLOBAL_VARIABLE: "localhost:4566"})


def test_boto3s_switch_to_ignore_configured_endpoints_is_honoured():
    environment = {GLOBAL_VARIABLE: "http://localhost:4566", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true"}
    assert from_environment(environment) is None
