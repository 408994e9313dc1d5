"""A plain HTTP head read into the message the standard library's email parser makes of it, without
that parser.

http.client's `parse_headers` (every response botocore reads; every request head http.server reads)
hands the header block to `email.parser`, a line-by-line feed parser with its regular expressions
and policies: about a tenth of a client command's CPU per request, a sixth of the embedded server's.
A head whose lines are each a plain `Name: value` (a name of the characters the email parser accepts
as one, no folded line, no carriage return or line feed inside a line) and which ends with an empty
line gets the same message, built directly: each header as the email parser stores it (the name as
written, the value with its leading blanks and its line end stripped: email's compat32
`header_source_parse`). Every other head is the email parser's, as before.

Used by the embedded server (onceflow/engine/speedups/request_headers.py) and by the client commands
(`install_response_heads`, a switchable speed-up: onceflow/ops/client_speedups.py), for botocore's
connections only: http.server and anything else in the process keep the standard library's parser.
"""

from __future__ import annotations

import email.parser
import http.client
import re
import types
from collections.abc import Callable
from typing import Any

from botocore.awsrequest import AWSHTTPConnection, AWSHTTPSConnection

from onceflow.ops import client_speedups

# One plain header line: the email parser's header name characters (headerRE, \041-\071 \073-\176),
# a colon, a value without CR or LF, the line's end.
_PLAIN_LINE = rb"[\x21-\x39\x3b-\x7e]+:[^\r\n]*\r?\n"
_PLAIN_LINES = re.compile(rb"(?:" + _PLAIN_LINE + rb")*")  # a block of them, matched in one call
_END = (b"\r\n", b"\n")


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


def parse_headers(fp: Any, _class: Any = http.client.HTTPMessage) -> Any:
    """http.client.parse_headers, with a plain head read by read_head (the lines read, limited and
    refused by http.client's own `_read_headers`)."""
    return read_head(http.client._read_headers(fp), _class)  # type: ignore[attr-defined]


def _begin_reading_heads_with(parse: Callable[..., Any]) -> Callable[..., Any]:
    """http.client.HTTPResponse.begin, the standard library's own code, with `parse` where it calls
    its module's parse_headers."""
    begin = http.client.HTTPResponse.begin
    return types.FunctionType(
        begin.__code__, {**vars(http.client), "parse_headers": parse}, begin.__name__, begin.__defaults__
    )


class PlainHeadResponse(http.client.HTTPResponse):
    """A response whose plain head is read by read_head."""

    begin = _begin_reading_heads_with(parse_headers)  # type: ignore[assignment]


def install_response_heads() -> None:
    """Read the heads of the responses botocore's connections receive in this process with
    PlainHeadResponse (unless switched off)."""
    response = PlainHeadResponse if client_speedups.enabled("response_heads") else http.client.HTTPResponse
    for connection in (AWSHTTPConnection, AWSHTTPSConnection):
        connection.response_class = response
