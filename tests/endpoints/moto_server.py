"""A plain moto server in a subprocess: an "external" Step Functions endpoint for the tests.

Plain means none of the embedded engine's additions: no request lock, no delay clock, no mocked
integrations, and Retry/Wait really sleep. It runs under LocalStack's default account
(000000000000), so ARNs differ from the embedded engine's as they do on LocalStack.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import requests

EXTERNAL_ACCOUNT_ID = "000000000000"
# Variables of the parent session that must not leak into an external run.
_PARENT_ONLY = (
    "MOTO_PORT",
    "MOTO_ACCOUNT_ID",
    "SFN_MOCK_CONFIG",
    "PYTEST_ADDOPTS",
    "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
)


class MotoServerError(RuntimeError):
    pass


def _free_port() -> int:
    # Not onceflow.engine.server.free_port: code using that module counts as embedded-only (markers.py).
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def clean_environment() -> dict[str, str]:
    """This process's environment without endpoint settings (the starter runtime sets AWS_ENDPOINT_URL here)."""
    return {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("AWS_ENDPOINT_URL") and name not in _PARENT_ONLY
    }


def _wait_until_serving(process: subprocess.Popen[bytes], url: str, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if requests.get(f"{url}/moto-api/data.json", timeout=2).ok:
                return
        except requests.ConnectionError:
            pass
        if time.monotonic() > deadline:
            raise MotoServerError(f"moto server at {url} not serving after {timeout}s:\n{log.read_text()[-2000:]}")
        try:
            process.wait(timeout=0.1)  # the pause between polls, and notice if it died
        except subprocess.TimeoutExpired:
            continue
        raise MotoServerError(f"moto server exited with {process.returncode}:\n{log.read_text()[-2000:]}")


@contextmanager
def moto_server(log: Path, startup_timeout: float = 30) -> Iterator[str]:
    """Start `python -m moto.server` on a free port with Step Functions execution on; yield its URL."""
    port = _free_port()
    environment = clean_environment() | {
        # Its Step Functions integrations call back to localhost:$MOTO_PORT: its own port.
        "MOTO_PORT": str(port),
        "MOTO_ACCOUNT_ID": EXTERNAL_ACCOUNT_ID,
    }
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdout=output,
            stderr=subprocess.STDOUT,
            env=environment,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_serving(process, url, log, startup_timeout)
        requests.post(
            f"{url}/moto-api/config", json={"stepfunctions": {"execute_state_machine": True}}, timeout=10
        ).raise_for_status()
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
