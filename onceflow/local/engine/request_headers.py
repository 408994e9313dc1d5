"""The `request_headers` speed-up: the embedded server reads a plain request head without the email
parser.

http.server's `parse_request` (under werkzeug's handler) hands every request's header block to
`email.parser` (http.client.parse_headers), a line-by-line feed parser with its regular expressions
and policies: about a sixth of the server's CPU per request from another process (a boto3 call
sends ten headers). Here a request whose line is `METHOD /path HTTP/1.1` and whose header lines are
each a plain `Name: value` (a name of the characters the email parser accepts as one, no folded
line, no carriage return or line feed inside a line) gets the same message, built directly: each
header as the email parser stores it (the name as written, the value with its leading blanks and
its line end stripped: email's compat32 `header_source_parse`), and the same connection and
`Expect: 100-continue` handling as http.server's. Anything else, and every header block that is not
plain, is parsed by the standard library as before (the lines read by its own `_read_headers`, with
its limits and errors).
"""

from __future__ import annotations

import email.parser
import http.client
import re
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import Any

from onceflow.local.engine.shape import Need, need

Patch = tuple[Any, str, Any]
# One plain header line: the email parser's header name characters (headerRE, \041-\071 \073-\176),
# a colon, a value without CR or LF, the line's end.
_PLAIN_LINE = rb"[\x21-\x39\x3b-\x7e]+:[^\r\n]*\r?\n"
_PLAIN_LINES = re.compile(rb"(?:" + _PLAIN_LINE + rb")*")  # a block of them, matched in one call
_END = (b"\r\n", b"\n")


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


def read_head(lines: list[bytes], message_class: Any) -> Any:
    """The message http.client.parse_headers makes of these header lines (the last one ends the head)."""
    if lines[-1] in _END and _PLAIN_LINES.fullmatch(block := b"".join(lines[:-1])):
        message = message_class()
        for line in block.decode("iso-8859-1").split("\n")[:-1]:  # not splitlines: \x85 is a value's
            name, value = line.split(":", 1)
            message.set_raw(name, value.lstrip(" \t").removesuffix("\r"))
        message.set_payload("")
        return message
    return email.parser.Parser(_class=message_class).parsestr(b"".join(lines).decode("iso-8859-1"))


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
