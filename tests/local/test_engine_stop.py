"""Stopping an embedded AWS ends its server at once, not at the idle server's next poll."""

from __future__ import annotations

import socket
import threading

import pytest

from onceflow.engine import EmbeddedAws

pytestmark = pytest.mark.embedded_only(reason="the embedded engine's own server")


def test_stopping_does_not_wait_for_the_idle_servers_next_poll(monkeypatch: pytest.MonkeyPatch) -> None:
    # An hour between polls: a stop that waited for the next one would not return within the join.
    monkeypatch.setattr(EmbeddedAws, "SERVE_POLL_SECONDS", 3600.0)
    aws = EmbeddedAws().start()
    port = aws.port
    stopping = threading.Thread(target=aws.stop, daemon=True)
    stopping.start()
    stopping.join(timeout=30)
    assert not stopping.is_alive(), "stop() waited for the server's poll"
    with pytest.raises(OSError):  # nothing listens there any more
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
