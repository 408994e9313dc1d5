"""The `request_headers` speed-up: the embedded server reads a plain request head without the email
parser.

http.server's `parse_request` (under werkzeug's handler) hands every request's header block to
`email.parser` (http.client.parse_headers), a line-by-line feed parser with its regular expressions
and policies: about a sixth of the server's CPU per request from another process (a boto3 call
sends ten headers). Here a request whose line is `METHOD /path HTTP/1.1` and whose head is plain
gets the same message without that parser (onceflow/ops/http_heads.py's read_head, which the client
commands use for their responses too), and the same connection and `Expect: 100-continue` handling
as http.server's. Anything else is parsed by the standard library as before (the lines read by its
own `_read_headers`, with its limits and errors).
"""

from __future__ import annotations

import http.client
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import Any

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.speedups import REQUEST_HEADERS
from onceflow.ops.http_heads import read_head

Patch = tuple[Any, str, Any]
SPEEDUPS = (REQUEST_HEADERS,)


def moto_needs() -> list[Need]:
    """What this reads or replaces of the standard library's HTTP server (werkzeug's base)."""
    return [
        need(BaseHTTPRequestHandler, "parse_request"),
        need(BaseHTTPRequestHandler, "handle_expect_100"),
        need(http.client, "_read_headers", "fp"),  # the header lines, limited as parse_headers limits them
        need(http.client, "LineTooLong"),
    ]


def patches() -> list[Patch]:
    return [(PlainHeadRequestHandler, "plain_heads", True)]


class PlainHeadRequestHandler(BaseHTTPRequestHandler):
    """http.server's request parsing, a plain HTTP/1.1 head read without the email parser."""

    plain_heads = False  # switched on by the speed-up

    def parse_request(self) -> bool:
        requestline = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        words = requestline.split()
        if not (
            self.plain_heads
            and len(words) == 3
            and words[2] == "HTTP/1.1"
            and words[1].startswith("/")
            and not words[1].startswith("//")
            and self.protocol_version >= "HTTP/1.1"
        ):
            return super().parse_request()
        self.requestline = requestline
        self.command, self.path, self.request_version = words
        self.close_connection = False  # HTTP/1.1 on both sides, as http.server decides it
        try:
            self.headers = read_head(http.client._read_headers(self.rfile), self.MessageClass)  # type: ignore[attr-defined]
        except http.client.LineTooLong as err:
            self.send_error(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "Line too long", str(err))
            return False
        except http.client.HTTPException as err:
            self.send_error(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "Too many headers", str(err))
            return False
        if self.headers.get("Connection", "").lower() == "close":
            self.close_connection = True
        if self.headers.get("Expect", "").lower() == "100-continue":
            return bool(self.handle_expect_100())
        return True
