"""The embedded server keeps HTTP/1.1 connections of clients in other processes open
(onceflow/engine/speedups/keep_alive.py): one socket carries request after request.

Driven with http.client from this process: boto3 here would be handed to the application
without a socket (onceflow/engine/speedups/direct_transport.py), and a client in another process
is what keeps the connection.
"""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

import pytest

from onceflow.engine import EmbeddedAws
from onceflow.engine.speedups import keep_alive

_HEADERS = {
    "Content-Type": "application/x-amz-json-1.0",
    "X-Amz-Target": "AWSStepFunctions.ListStateMachines",
    # moto routes by the credential scope's service; it does not check the signature
    "Authorization": "AWS4-HMAC-SHA256 Credential=t/20260101/us-east-1/states/aws4_request, SignedHeaders=host, Signature=0",
}


@pytest.fixture
def connection(embedded_aws: EmbeddedAws) -> http.client.HTTPConnection:
    url = urlsplit(embedded_aws.endpoint_url)
    opened = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    yield opened
    opened.close()


def _list(connection: http.client.HTTPConnection, headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
    connection.request("POST", "/", body=b"{}", headers={**_HEADERS, **(headers or {})})
    response = connection.getresponse()
    assert response.status == 200
    assert "stateMachines" in json.loads(response.read())
    return response


def test_one_connection_carries_request_after_request(connection: http.client.HTTPConnection) -> None:
    first = _list(connection)
    socket = connection.sock
    assert first.getheader("Connection") is None  # werkzeug's server says `close` on every response
    assert socket is not None  # http.client drops a socket the server said it closes
    for _ in range(3):
        _list(connection)
        assert connection.sock is socket


def test_a_body_the_application_leaves_unread_does_not_become_the_next_request(
    connection: http.client.HTTPConnection,
) -> None:
    body = b"x" * 5000  # moto answers an unknown path without reading the body
    connection.request("POST", "/no-such-path-here", body=body, headers={**_HEADERS, "X-Amz-Target": ""})
    connection.getresponse().read()
    _list(connection)


def test_a_client_that_asks_to_close_is_answered_and_closed(connection: http.client.HTTPConnection) -> None:
    _list(connection, {"Connection": "close"})
    assert connection.sock is None


def test_the_connections_a_server_keeps_are_closed_with_it(
    embedded_aws: EmbeddedAws, connection: http.client.HTTPConnection
) -> None:
    """EmbeddedAws.stop() closes them after the server's shutdown; here without stopping the
    session's server (a second EmbeddedAws would reset the process-wide backends)."""
    _list(connection)
    assert keep_alive.close_kept(embedded_aws._server) >= 1
    with pytest.raises((ConnectionError, http.client.HTTPException)):
        connection.request("POST", "/", body=b"{}", headers=_HEADERS)
        connection.getresponse()
