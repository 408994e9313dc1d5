"""Many JSON-protocol requests in one HTTP request: the embedded server's batch endpoint, always on.

A client in another process pays for every AWS call twice over: botocore builds, signs, sends and
reads it (about 1.1 ms of CPU for a DescribeExecution), and the server reads an HTTP request and
writes a response around moto's own work (about a third of the server's 0.6 ms). `onceflow trace`
at 20,000 executions makes about 20,000 such calls. Here one signed `POST /_onceflow/batch` carries
up to MAX_REQUESTS of them; each goes, one after another, through the very application an HTTP
request reaches (the request lock taken and released per request, IAM as the batch's signer,
quotas, the history budget's bookkeeping after each), and its status, headers and body come back
as they would have over HTTP. The client parses each body with its own parser
(onceflow/ops/batched_calls.py), so what it reads is what boto3 would have read.

Only JSON-protocol requests (an `X-Amz-Target`, a body sent to `/`) are taken: that is what
`trace` reads. It is a developer endpoint of the embedded AWS, as moto's `/moto-api/` is, not an
AWS API: clients of AWS itself never call it, and an endpoint without it answers something other
than BATCH_MARK, so the client makes its calls one by one. It patches nothing of moto (hence no
`moto_needs`): it hands each request to the server's own application.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterable
from typing import Any

from onceflow.ops.batched_calls import BATCH_MARK, BATCH_PATH, MAX_REQUESTS, framed

WsgiApp = Callable[..., Iterable[bytes]]
_JSON_HEADERS = [("Content-Type", "application/json"), (BATCH_MARK, "1")]  # a refusal


class BatchRefused(ValueError):
    """A batch this endpoint does not take; its message says which rule it breaks."""


class Batching:
    """The server's WSGI application, answering BATCH_PATH itself and handing everything else on."""

    def __init__(self, app: WsgiApp):
        self._app = app

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("PATH_INFO") != BATCH_PATH:
            return self._app(environ, start_response)
        try:
            requests = _requests(environ)
        except BatchRefused as refused:
            start_response("400 Bad Request", _JSON_HEADERS)
            return [json.dumps({"message": str(refused)}).encode()]
        start_response("200 OK", [("Content-Type", "application/octet-stream"), (BATCH_MARK, "1")])
        return [framed(*self._answer(environ, request)) for request in requests]

    def _answer(self, batch: dict[str, Any], request: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        body = request["body"].encode()
        environ = dict(batch)  # the batch's headers: its signer (IAM), host, region
        environ.update(
            {
                "PATH_INFO": "/",
                "QUERY_STRING": "",
                "REQUEST_METHOD": "POST",
                "CONTENT_TYPE": request["contentType"],
                "CONTENT_LENGTH": str(len(body)),
                "HTTP_X_AMZ_TARGET": request["target"],
                "wsgi.input": io.BytesIO(body),
            }
        )
        started: list[Any] = []

        def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
            started[:] = [status, headers]

        content = b"".join(self._app(environ, start_response))
        status, headers = started
        kept = {name: value for name, value in headers if name.lower() != "content-length"}
        return int(status.split(" ", 1)[0]), kept, content


def _requests(environ: dict[str, Any]) -> list[dict[str, str]]:
    if environ.get("REQUEST_METHOD") != "POST":
        raise BatchRefused(f"{BATCH_PATH} takes POST only, not {environ.get('REQUEST_METHOD')}")
    length = int(environ.get("CONTENT_LENGTH") or 0)
    try:
        document = json.loads(environ["wsgi.input"].read(length) or b"null")
    except ValueError as error:
        raise BatchRefused(f"the batch is not JSON: {error}") from None
    requests = document.get("requests") if isinstance(document, dict) else None
    if not isinstance(requests, list):
        raise BatchRefused('the batch is a JSON object with a list "requests"')
    if len(requests) > MAX_REQUESTS:
        raise BatchRefused(f"a batch holds at most {MAX_REQUESTS} requests, not {len(requests)}")
    for position, request in enumerate(requests):
        if not (
            isinstance(request, dict)
            and {"target", "contentType", "body"} <= request.keys()
            and all(isinstance(request[key], str) for key in ("target", "contentType", "body"))
        ):
            raise BatchRefused(f'requests[{position}] needs the strings "target", "contentType" and "body"')
    return requests
