"""The client commands' botocore connections read a plain response head without the email parser
(onceflow/ops/http_heads.py), into the message it makes (the comparison over heads of every kind:
tests/local/test_engine_speedups.py::test_a_request_head_is_read_into_the_message_the_email_parser_makes),
and through the email parser when switched off; an HTTP server in the same process keeps the
standard library's parser either way."""

from __future__ import annotations

import email.parser
import http.server
import threading
from collections.abc import Iterator

import botocore.session
import pytest
from botocore.awsrequest import AWSHTTPConnection, AWSHTTPSConnection

from onceflow.ops import http_heads


class _Answer(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # a Step Functions ListStateMachines answer
        self.rfile.read(int(self.headers["Content-Length"]))
        body = b'{"stateMachines": []}'
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


def _call(port: int) -> tuple[dict[str, str], int]:
    """A botocore call's response headers, and how many heads the email parser read meanwhile."""
    client = botocore.session.Session().create_client(
        "stepfunctions",
        endpoint_url=f"http://127.0.0.1:{port}",
        region_name="us-east-1",
        aws_access_key_id="t",
        aws_secret_access_key="t",
    )
    calls = []
    parsestr = email.parser.Parser.parsestr

    def counted(self: email.parser.Parser, text: str, headersonly: bool = False) -> object:
        calls.append(text)
        return parsestr(self, text, headersonly)

    email.parser.Parser.parsestr = counted  # type: ignore[method-assign]
    try:
        response = client.list_state_machines()
    finally:
        email.parser.Parser.parsestr = parsestr  # type: ignore[method-assign]
    headers = {k: v for k, v in response["ResponseMetadata"]["HTTPHeaders"].items() if k != "date"}
    assert response["stateMachines"] == []
    return headers, len(calls)


def test_a_response_head_is_read_without_the_email_parser_into_the_same_headers(port, monkeypatch) -> None:
    for connection in (AWSHTTPConnection, AWSHTTPSConnection):  # put back after the test
        monkeypatch.setattr(connection, "response_class", connection.response_class)
    http_heads.install_response_heads()
    fast, parsed_fast = _call(port)
    monkeypatch.setenv("ONCEFLOW_CLIENT_SPEEDUPS_OFF", "response_heads")
    http_heads.install_response_heads()
    standard, parsed_standard = _call(port)
    # The request head this test's server reads (http.server: the standard parser both times), and
    # the response's only when switched off.
    assert (parsed_fast, parsed_standard) == (1, 2)
    assert fast == standard and fast["x-amzn-requestid"] == "r-1"
