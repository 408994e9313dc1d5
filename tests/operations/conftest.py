"""Fixtures for the operations tests: the emulated safety net, and an execution held mid-flight."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from onceflow.local.embedded import EmbeddedAws
from onceflow.local.safety_net import SafetyNet
from onceflow.local.stack import LocalStack


@pytest.fixture
def safety_net(stack: LocalStack) -> SafetyNet:
    return SafetyNet(stack)


@dataclass
class RetryPause:
    """Holds the first retry delay of any execution until released (bounded waits only)."""

    reached: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)

    def sleep(self, seconds: float) -> None:  # stands in for the engine's retry sleep
        self.reached.set()
        self.released.wait(timeout=10)

    def wait_until_reached(self, timeout: float = 10) -> None:
        assert self.reached.wait(timeout), f"no execution reached a retry within {timeout}s"


@pytest.fixture
def retry_pause(embedded_aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch) -> Iterator[RetryPause]:
    """Between an execution's failed attempt and its retry, the test can act (e.g. stop it)."""
    pause = RetryPause()
    monkeypatch.setattr(embedded_aws.clock, "sleep", pause.sleep)
    yield pause
    pause.released.set()
