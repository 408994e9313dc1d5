"""boto3 clients with timeouts that fit the function, created on first use.

boto3 is imported here, when the first record needs a client, not when the handler module loads.
Every client uses the standard retry mode and explicit timeouts: the default 60 s read timeout
outlasts the function's own 30 s. StartSyncExecution waits for the whole execution, so its client
reads for as long as the workflow may run and does not retry on its own (executions.py decides,
knowing the time left).
"""

from __future__ import annotations

import os
import threading
from typing import Any

CONNECT_TIMEOUT_SECONDS = 2
READ_TIMEOUT_SECONDS = 5
MAX_ATTEMPTS = 3
# Variables that point a client at another endpoint (botocore reads them itself).
ENDPOINT_OVERRIDES = ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_SFN")

_lock = threading.Lock()
_clients: dict[tuple[str, int], Any] = {}


def endpoint_overridden() -> bool:
    if os.environ.get("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "").lower() == "true":
        return False
    return any(os.environ.get(name) for name in ENDPOINT_OVERRIDES)


def client_config(read_timeout: int = READ_TIMEOUT_SECONDS, max_attempts: int = MAX_ATTEMPTS) -> Any:
    from botocore.config import Config

    return Config(
        connect_timeout=CONNECT_TIMEOUT_SECONDS,
        read_timeout=read_timeout,
        retries={"mode": "standard", "total_max_attempts": max_attempts},
        # StartSyncExecution goes to the `sync-states.` host on AWS; a local endpoint (the
        # embedded engine, LocalStack) has no such name, so the prefix is kept only on AWS.
        inject_host_prefix=not endpoint_overridden(),
    )


def client(service: str, read_timeout: int = READ_TIMEOUT_SECONDS) -> Any:
    """One client per service and read timeout, shared by the records' threads (clients are thread-safe)."""
    key = (service, read_timeout)
    with _lock:  # creating a client is not thread-safe
        if key not in _clients:
            import boto3

            long_reads = read_timeout != READ_TIMEOUT_SECONDS
            config = client_config(read_timeout, max_attempts=1 if long_reads else MAX_ATTEMPTS)
            _clients[key] = boto3.client(service, config=config)
        return _clients[key]


def reset() -> None:
    """Forget the clients (the local runtime calls this when the endpoint changes)."""
    with _lock:
        _clients.clear()


def cached() -> int:
    return len(_clients)
