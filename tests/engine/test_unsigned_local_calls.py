"""`unsigned_local_calls` (engine/speedups/unsigned_local_calls.py): a boto3 call from this process to
its embedded AWS computes no SigV4 signature, yet carries the headers the engine reads (the credential
scope, whose access key IAM maps to the caller); calls elsewhere, and S3's, are signed as before."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSResponse
from moto.core.botocore_stubber import MockRawResponse

from onceflow.engine import EmbeddedAws
from onceflow.engine.speedups import UNSIGNED_LOCAL_CALLS

pytestmark = pytest.mark.embedded_only(reason="a speed-up of the embedded engine's own process")
CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}


@pytest.fixture
def signatures(embedded_aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The signatures botocore computes from now on."""
    if UNSIGNED_LOCAL_CALLS not in embedded_aws.speedups:
        pytest.skip("unsigned_local_calls is switched off in this run (ONCEFLOW_SPEEDUPS_OFF)")
    computed: list[str] = []
    signature = SigV4Auth.signature

    def counted(self: SigV4Auth, string_to_sign: str, request: Any) -> str:
        computed.append(signature(self, string_to_sign, request))
        return computed[-1]

    monkeypatch.setattr(SigV4Auth, "signature", counted)
    yield computed


def _authorization(client: Any) -> list[str]:
    sent: list[str] = []

    def note(request: Any, **_: Any) -> None:
        value = request.headers["Authorization"]
        sent.append(value.decode() if isinstance(value, bytes) else value)

    client.meta.events.register("before-send", note)
    return sent


def test_a_call_to_the_embedded_aws_in_this_process_computes_no_signature(
    embedded_aws: EmbeddedAws, signatures: list[str]
) -> None:
    sqs = boto3.client("sqs", endpoint_url=embedded_aws.endpoint_url, **CREDENTIALS)
    sent = _authorization(sqs)
    url = sqs.create_queue(QueueName="unsigned-local-calls")["QueueUrl"]
    assert sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    assert signatures == []
    (first, _) = sent
    assert re.fullmatch(
        r"AWS4-HMAC-SHA256 Credential=testing/\d{8}/us-east-1/sqs/aws4_request, SignedHeaders=[a-z0-9;-]+, Signature=0{64}",
        first,
    ), first


def test_calls_to_anywhere_else_and_s3s_are_signed(embedded_aws: EmbeddedAws, signatures: list[str]) -> None:
    s3 = boto3.client("s3", endpoint_url=embedded_aws.endpoint_url, **CREDENTIALS)
    s3.list_buckets()
    assert len(signatures) == 1  # S3's signer (it hashes the payload into a header S3 reads)
    elsewhere = boto3.client("sqs", endpoint_url="http://127.0.0.1:9", **CREDENTIALS)
    sent = _authorization(elsewhere)
    elsewhere.meta.events.register(
        "before-send",
        lambda request, **_: AWSResponse(request.url, 200, {}, MockRawResponse(b"{}")),
        unique_id="answered-here",
    )
    elsewhere.list_queues()
    assert len(signatures) == 2 and sent[0].endswith(f"Signature={signatures[1]}")


@pytest.mark.parametrize(
    "headers",
    [
        {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AmazonSQS.ListQueues", "User-Agent": "ua"},
        {"X-Amz-Date": "20261207T000000Z", "Expect": "100-continue", "Connection": "keep-alive", "Host": "h:1"},
        {"X-Amz-Security-Token": "t", "x-amz-meta-A": "1", "X-AMZ-META-a": "2", "traceparent": "00-1", " Odd ": "x"},
        {},
    ],
)
def test_the_signed_header_names_are_the_ones_botocore_computes(headers: dict[str, str]) -> None:
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    from onceflow.engine.speedups.unsigned_local_calls import signed_header_names

    request = AWSRequest(method="POST", url="http://127.0.0.1:4747/", data=b"{}", headers=headers)
    signer = SigV4Auth(Credentials("testing", "testing"), "sqs", "us-east-1")
    assert signed_header_names(request) == signer.signed_headers(signer.headers_to_sign(request))
