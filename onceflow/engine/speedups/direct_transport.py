"""boto3 calls to the embedded endpoint handed to its WSGI application in this process.

A boto3 client in the process that runs the embedded AWS (the pipeline's own clients, the starter
and reconciler running in-process, the tests) still builds, signs and parses every request as it
would for AWS; only the socket is left out. botocore's `Endpoint._send` (the step after the
`before-send` hooks, which still run) gives a request whose URL is a registered embedded endpoint
to the same application the HTTP server serves (one request at a time under its lock, the same
moto dispatch, the same response), built into a WSGI environ as werkzeug's server builds it.
Anything else (another endpoint, AWS itself) goes over HTTP as before.

Over HTTP every call costs werkzeug's request parsing and a socket round trip (and, before
keep_alive.py, a TCP connection and a server thread: werkzeug's server closed every connection):
about a third of the CPU of a fault schedule.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from botocore import endpoint as botocore_endpoint
from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.compat import HTTPHeaders
from moto.core.botocore_stubber import MockRawResponse
from werkzeug.test import EnvironBuilder, run_wsgi_app

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.speedups import DIRECT_TRANSPORT
from onceflow.engine.speedups.wsgi_environ import root_environ

Patch = tuple[Any, str, Any]
SPEEDUPS = (DIRECT_TRANSPORT,)
WsgiApp = Callable[..., Iterable[bytes]]

_APPS: dict[str, WsgiApp] = {}  # "127.0.0.1:4747" -> the embedded application listening there
_APPS_LOCK = threading.Lock()


def moto_needs() -> list[Need]:
    return [
        need(botocore_endpoint.Endpoint, "_send"),
        need(AWSPreparedRequest, "__init__", "method", "url", "headers", "body"),
        need(AWSResponse, "__init__", "url", "status_code", "headers", "raw"),
    ]


def serve(endpoint_url: str, app: WsgiApp) -> None:
    """Calls to `endpoint_url` from this process go to `app` (until `forget`)."""
    with _APPS_LOCK:
        _APPS[urlsplit(endpoint_url).netloc] = app


def _app_for(url: str) -> WsgiApp | None:
    """The embedded application here that a call to `url` from this process goes to, if any."""
    return _APPS.get(urlsplit(url).netloc) if _APPS else None


def serves(url: str) -> bool:
    return _app_for(url) is not None


def forget(endpoint_url: str) -> None:
    with _APPS_LOCK:
        _APPS.pop(urlsplit(endpoint_url).netloc, None)


def patches() -> list[Patch]:
    original = botocore_endpoint.Endpoint._send

    def _send(self: Any, request: AWSPreparedRequest) -> AWSResponse:
        app = _app_for(request.url)
        if app is None:
            return original(self, request)
        return call(app, request)

    return [(botocore_endpoint.Endpoint, "_send", _send)]


def call(app: WsgiApp, request: AWSPreparedRequest) -> AWSResponse:
    """One request through `app`, as werkzeug's server would hand it over, and its response."""
    environ = environ_of(request)
    environ["REMOTE_ADDR"] = "127.0.0.1"
    app_iter, status, response_headers = run_wsgi_app(app, environ)
    try:
        content = b"".join(app_iter)
    finally:
        close = getattr(app_iter, "close", None)
        if close is not None:
            close()
    http_headers = HTTPHeaders()
    for name, value in response_headers.items():
        http_headers[name] = value
    return AWSResponse(request.url, int(status.split(" ", 1)[0]), http_headers, MockRawResponse(content))


def environ_of(request: AWSPreparedRequest) -> dict[str, Any]:
    """The WSGI environ werkzeug's EnvironBuilder makes of `request` (a plain POST to `/` built
    directly: wsgi_environ.py)."""
    body = request.body
    if hasattr(body, "read"):
        body = body.read()
    if isinstance(body, str):
        body = body.encode("utf-8")
    headers = {name: value.decode() if isinstance(value, bytes) else value for name, value in request.headers.items()}
    environ = root_environ(request.method, request.url, headers.items(), body)
    if environ is not None:
        return environ
    url = urlsplit(request.url)
    builder = EnvironBuilder(
        path=url.path or "/",
        base_url=f"{url.scheme}://{url.netloc}",
        query_string=url.query,
        method=request.method,
        headers=headers,
        data=body or b"",
    )
    try:
        return builder.get_environ()
    finally:
        builder.close()
