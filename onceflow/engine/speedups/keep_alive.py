"""HTTP/1.1 keep-alive for the embedded server's clients in other processes (the CLI, the AWS CLI).

werkzeug's development server ends every response with `Connection: close` and then reads the
socket for up to 10 ms in case a body was left unread (WSGIRequestHandler.run_wsgi), so every
call of a boto3 client in another process costs a TCP connection, a server thread and that
drain: `onceflow trace` at 5,000 executions makes about 6,000 calls. Here a request whose body
has a Content-Length is read whole before the application runs, so the next request line is the
next thing on the socket, and the response (the embedded application produces its body whole,
under its lock) is written with its Content-Length and no `Connection: close`: botocore's pool
keeps the connection. A chunked request body (no Content-Length) goes through werkzeug's own
path, which closes the connection; so does a request that says `Connection: close` (http.server
honours it). An idle connection is closed after IDLE_SECONDS; botocore reconnects. A stopped
server's kept connections are closed with it (`close_kept`): none goes on being served after stop.

In-process clients do not come here (direct_transport.py hands them to the application).
"""

from __future__ import annotations

import contextlib
import io
import socket
import sys
import threading
from collections.abc import Callable
from typing import Any

from werkzeug.serving import WSGIRequestHandler

from onceflow.engine.moto_shape import Need, need

IDLE_SECONDS = 60
# Headers this handler writes itself: the body's length, and nothing that would end the connection.
_OWN_HEADERS = {"content-length", "connection", "transfer-encoding"}


def moto_needs() -> list[Need]:
    """What this builds on in werkzeug (the server moto runs on): the environ it makes, the WSGI run
    it replaces for bodies of known length, and the drain-and-close it leaves out."""
    return [
        need(WSGIRequestHandler, "make_environ"),
        need(WSGIRequestHandler, "run_wsgi"),
        need(WSGIRequestHandler, "handle_one_request"),
        need(WSGIRequestHandler, "flush_headers"),  # writes and empties _headers_buffer (http.server)
    ]


_OPEN: dict[int, set[socket.socket]] = {}  # id(server) -> its connections being served
_OPEN_LOCK = threading.Lock()


def close_kept(server: object) -> int:
    """Shut the connections `server` still serves (after its shutdown()); returns how many."""
    with _OPEN_LOCK:
        connections = _OPEN.pop(id(server), set())
    for connection in connections:
        with contextlib.suppress(OSError):  # the client closed it already
            connection.shutdown(socket.SHUT_RDWR)
    return len(connections)


def _kept(handler: WSGIRequestHandler) -> bool:
    """A body of known length (or none): it can be read whole, and the connection kept."""
    if "chunked" in handler.headers.get("Transfer-Encoding", "").lower():
        return False
    return handler.headers.get("Expect", "").lower() != "100-continue"


class KeepAliveRequestHandler(WSGIRequestHandler):
    """werkzeug's handler, answering requests of a known length on a kept connection."""

    timeout = IDLE_SECONDS  # StreamRequestHandler: a connection idle this long is closed

    def setup(self) -> None:
        super().setup()
        with _OPEN_LOCK:
            _OPEN.setdefault(id(self.server), set()).add(self.connection)
        # A kept connection's response would otherwise wait on the client's delayed ACK of the last
        # one (Nagle's algorithm: about 40 ms a call); the response is written in one piece anyway.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def finish(self) -> None:
        with _OPEN_LOCK:
            _OPEN.get(id(self.server), set()).discard(self.connection)
        super().finish()

    def run_wsgi(self) -> None:
        if not _kept(self):
            super().run_wsgi()  # werkzeug's own path: dechunks, continues, closes
            return
        environ = self.make_environ()
        length = int(self.headers.get("Content-Length") or 0)
        environ["wsgi.input"] = io.BytesIO(self.rfile.read(length) if length > 0 else b"")
        self.environ = environ
        started: list[Any] = []

        def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[..., None]:
            started[:] = [status, headers]
            return _no_write

        try:
            body = b"".join(self.server.app(environ, start_response))  # type: ignore[attr-defined]
        except Exception:  # nothing is written yet: a 500, and the connection closed (send_error)
            sys.excepthook(*sys.exc_info())
            self.send_error(500)
            return
        status, headers = started
        code, _, reason = status.partition(" ")
        self.send_response(int(code), reason)
        for name, value in headers:
            if name.lower() not in _OWN_HEADERS:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        if self.close_connection:  # the client asked to close (or spoke HTTP/1.0): say it, as HTTP/1.1 does
            self.send_header("Connection", "close")
        self._headers_buffer.append(b"\r\n")  # type: ignore[attr-defined]  # end_headers, with the body
        if self.command != "HEAD":
            self._headers_buffer.append(body)  # type: ignore[attr-defined]
        self.flush_headers()


def _no_write(data: bytes) -> None:
    raise RuntimeError("the embedded application returns its body; it does not call write()")
