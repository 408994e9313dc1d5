"""Many calls of one boto3 client sent in one HTTP request to the embedded AWS, read as boto3 reads them.

`onceflow start`'s server answers `POST /_onceflow/batch` (onceflow/engine/speedups/batch_requests.py):
each call in it goes through the same application, IAM and quotas as its own HTTP request would, and
comes back with the status, headers and body it would have had. Here each call is built by the
client's own serialiser (its parameter validation included), the batch is signed by the client's own
signer and sent on its own connection pool, and each answer is parsed by its own response parser:
the results are what the client's method returns, less the HTTP round trip per call (about 1.1 ms
of botocore's CPU for a DescribeExecution, most of `trace`'s time at 20,000 executions).

A call answered with an error is made again the ordinary way, so it gets botocore's retries (a
throttled read) and raises exactly the exception the client raises. AWS itself has no such endpoint:
a client of an `amazonaws.com` endpoint never tries it, and any other endpoint that answers without
BATCH_MARK (LocalStack, moto's own server) gets its calls one by one.
The `batched_reads` client speed-up (onceflow/ops/client_speedups.py) switches it off.
"""

from __future__ import annotations

import json
import threading
from typing import Any
from urllib.parse import urlsplit

from botocore import xform_name
from botocore.awsrequest import AWSRequest, HeadersDict

from onceflow.ops import client_speedups

BATCH_PATH = "/_onceflow/batch"
BATCH_MARK = "X-Onceflow-Batch"  # the header an embedded AWS's answer carries
MAX_REQUESTS = 1000  # calls per batch the endpoint takes


def framed(status: int, headers: dict[str, str], body: bytes) -> bytes:
    """One answer of a batch: `STATUS HEADERS-LENGTH BODY-LENGTH\n`, its headers (JSON), its body as sent."""
    head = json.dumps(headers).encode()
    return b"%d %d %d\n%s%s" % (status, len(head), len(body), head, body)


def unframed(content: bytes) -> list[dict[str, Any]]:
    """The answers `framed` wrote, one after another."""
    answers, at = [], 0
    while at < len(content):
        line_end = content.index(b"\n", at)
        status, head_length, body_length = (int(n) for n in content[at:line_end].split())
        head_end = line_end + 1 + head_length
        end = head_end + body_length
        answers.append(
            {"status": status, "headers": json.loads(content[line_end + 1 : head_end]), "body": content[head_end:end]}
        )
        at = end
    return answers


class BatchedCalls:
    """Calls of one JSON-protocol client, batched when its endpoint offers it, one by one otherwise."""

    def __init__(self, client: Any):
        self._client = client
        self._parser = client._endpoint._response_parser_factory.create_parser(
            client.meta.service_model.resolved_protocol
        )
        self._offered: bool | None = None if _may_offer(client) else False
        self._probe = threading.Lock()

    @property
    def offered(self) -> bool:
        """Whether the endpoint takes batches (asked once, with an empty batch)."""
        with self._probe:
            if self._offered is None:
                self._offered = self._send("", []) is not None
        return self._offered

    def call(self, operation: str, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """`operation` (botocore's name, e.g. DescribeExecution) once per parameters in `calls`: the
        results in order, each as the client's method returns it (or its exception raised)."""
        if not calls:
            return []
        if not self.offered:
            return [self._one(operation, params) for params in calls]
        model = self._client.meta.service_model.operation_model(operation)
        results: list[dict[str, Any]] = []
        for start in range(0, len(calls), MAX_REQUESTS):
            part = calls[start : start + MAX_REQUESTS]
            answers = self._send(operation, [self._request(model, params) for params in part])
            if answers is None or len(answers) != len(part):
                raise RuntimeError(f"{self._client.meta.endpoint_url} answered a batch of {len(part)} calls wrongly")
            for params, answer in zip(part, answers, strict=True):
                ok = 200 <= answer["status"] < 300
                results.append(self._parsed(model, answer) if ok else self._one(operation, params))
        return results

    def _one(self, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        return getattr(self._client, xform_name(operation))(**params)  # type: ignore[no-any-return]

    def _request(self, model: Any, params: dict[str, Any]) -> dict[str, str]:
        serialized = self._client._serializer.serialize_to_request(params, model)
        headers = serialized["headers"]
        return {
            "target": headers["X-Amz-Target"],
            "contentType": headers["Content-Type"],
            "body": serialized["body"].decode(),
        }

    def _send(self, operation: str, requests: list[dict[str, str]]) -> list[dict[str, Any]] | None:
        """The answers, or None when the endpoint does not take batches."""
        request = AWSRequest(
            method="POST",
            url=self._client.meta.endpoint_url.rstrip("/") + BATCH_PATH,
            data=json.dumps({"requests": requests}).encode(),
            headers={"Content-Type": "application/json"},
        )
        self._client._request_signer.sign(operation or "Batch", request)
        response = self._client._endpoint.http_session.send(request.prepare())
        if response.status_code != 200 or response.headers.get(BATCH_MARK) != "1":
            return None
        return unframed(response.content)

    def _parsed(self, model: Any, answer: dict[str, Any]) -> dict[str, Any]:
        response = {
            "headers": HeadersDict(answer["headers"]),
            "status_code": answer["status"],
            "body": answer["body"],
            "context": {"operation_name": model.name},
        }
        parsed: dict[str, Any] = self._parser.parse(response, model.output_shape)
        if "ResponseMetadata" in parsed:
            parsed["ResponseMetadata"]["RetryAttempts"] = 0  # as botocore's endpoint sets it
        return parsed


def _may_offer(client: Any) -> bool:
    """An endpoint that may be an embedded AWS: the switch on, an endpoint not AWS's, JSON protocol."""
    host = urlsplit(client.meta.endpoint_url).hostname or ""
    return (
        client_speedups.enabled("batched_reads")
        and client.meta.service_model.resolved_protocol == "json"
        and not host.endswith((".amazonaws.com", ".amazonaws.com.cn", ".api.aws"))
    )
