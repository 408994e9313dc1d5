"""The client commands read a plain response head without the email parser (onceflow/ops/http_heads.py),
into the message it makes (the comparison over request and response heads alike:
tests/local/test_engine_speedups.py::test_a_request_head_is_read_into_the_message_the_email_parser_makes),
and through the email parser when switched off."""

from __future__ import annotations

import email.parser
import http.client
import http.server
import threading
from collections.abc import Iterator

import pytest

from onceflow.ops import http_heads


class _Answer(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        body = b'{"ok": true}'
        self.send_response(200)
        self.send_header("Content-Type", "application/x-amz-json-1.0")
        self.send_header("x-amzn-RequestId", "r-1")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def port() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def _heads(port: int) -> tuple[list[tuple[str, str]], int]:
    """A response's headers, and how many times the email parser ran to read them."""
    calls = []
    parsestr = email.parser.Parser.parsestr

    def counted(self: email.parser.Parser, text: str, headersonly: bool = False) -> object:
        calls.append(text)
        return parsestr(self, text, headersonly)

    email.parser.Parser.parsestr = counted  # type: ignore[method-assign]
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("GET", "/")
        response = connection.getresponse()
        response.read()
        connection.close()
    finally:
        email.parser.Parser.parsestr = parsestr  # type: ignore[method-assign]
    return [(k, v) for k, v in response.getheaders() if k != "Date"], len(calls)


def test_a_response_head_is_read_without_the_email_parser_into_the_same_headers(port, monkeypatch) -> None:
    monkeypatch.setattr(http.client, "parse_headers", http.client.parse_headers)  # put back after the test
    http_heads.install_response_heads()
    fast, parsed_fast = _heads(port)
    monkeypatch.setenv("ONCEFLOW_CLIENT_SPEEDUPS_OFF", "response_heads")
    http_heads.install_response_heads()
    standard, parsed_standard = _heads(port)
    # Off, twice: the request head this test's server reads (http.server: the same parse_headers) and the response's.
    assert (parsed_fast, parsed_standard) == (0, 2)
    assert fast == standard and ("x-amzn-RequestId", "r-1") in fast
