"""The WSGI environ werkzeug's EnvironBuilder makes for a plain request to `/`, built directly.

Both in-process lanes hand moto a request as a WSGI environ: direct_integrations (a Task's call,
through moto's normalize_request, whose builder is EnvironBuilder) and direct_transport (a boto3 call
from this process to the embedded endpoint, as werkzeug's server would hand it over). The builder, its
header objects and its URL parsing were about a third of an integration call's dispatch and a tenth of
the instructions of an in-process call, client side included (`benchmarks/instructions.py --workload
calls`); every JSON- and query-protocol call (DynamoDB, SQS, SNS, Step Functions, EventBridge...) is a
POST of a body to `/`, which needs none of it.

`root_environ` answers None for anything else (a path or query, a host other than plain lower-case
letters, digits, dots and dashes with an optional port, an empty or streaming body, a
Transfer-Encoding header, a header value with a line break, which werkzeug refuses): the caller then
builds it as before. tests/engine/test_wsgi_environ.py compares both, request by request.
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Iterable
from typing import Any

PLAIN_HOST = re.compile(r"[a-z0-9.-]+(?::([0-9]+))?")
DEFAULT_PORTS = {"http": "80", "https": "443"}


def root_environ(method: str, url: str, headers: Iterable[tuple[str, str | bytes]], body: Any) -> dict[str, Any] | None:
    """EnvironBuilder(method, url, headers, data=body).get_environ() for a POST-like request to `/`,
    or None when the request is not of that kind."""
    scheme, _, rest = url.partition("://")
    host, slash, path = rest.partition("/")
    if isinstance(body, str):
        body = body.encode()
    port_match = PLAIN_HOST.fullmatch(host)
    if (
        slash != "/"
        or path
        or scheme not in DEFAULT_PORTS
        or port_match is None
        or not isinstance(body, bytes)
        or not body
    ):
        return None
    port = port_match.group(1)
    environ: dict[str, Any] = {
        "REQUEST_METHOD": method,
        "SCRIPT_NAME": "",
        "PATH_INFO": "/",
        "QUERY_STRING": "",
        "REQUEST_URI": "/",
        "RAW_URI": "/",
        "SERVER_NAME": host if port is None else host[: -len(port) - 1],
        "SERVER_PORT": port or DEFAULT_PORTS[scheme],
        "HTTP_HOST": host,
        "SERVER_PROTOCOL": "HTTP/1.1",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scheme,
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": False,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    }
    entries = header_entries(headers)
    if entries is None:
        return None
    content_type, combined = entries
    if content_type is not None:
        environ["CONTENT_TYPE"] = content_type
    environ["CONTENT_LENGTH"] = str(len(body))
    environ.update(combined)
    return environ


def header_entries(headers: Iterable[tuple[str, str | bytes]]) -> tuple[str | None, dict[str, str]] | None:
    """The Content-Type and the HTTP_* entries of werkzeug's environ for these headers (the values of
    one name joined by ", "), Content-Length left out; None for a Transfer-Encoding or a header value
    with a line break, which werkzeug refuses."""
    content_type = None
    combined: dict[str, list[str]] = {}
    for name, value in headers:
        text = value.decode("utf-8") if isinstance(value, bytes) else value
        lowered = name.lower()
        if lowered == "transfer-encoding" or "\n" in text or "\r" in text:
            return None
        if lowered == "content-type":
            content_type = text
        elif lowered != "content-length":
            combined.setdefault(f"HTTP_{name.upper().replace('-', '_')}", []).append(text)
    return content_type, {key: ", ".join(values) for key, values in combined.items()}
