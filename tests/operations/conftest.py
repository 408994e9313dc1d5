"""Fixtures for the operations tests: the emulated safety net, and an execution held mid-flight."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from onceflow.engine import EmbeddedAws
from onceflow.local.safety_net import SafetyNet
from onceflow.local.stack import LocalStack
from tests.support import RetryHold


@pytest.fixture
def safety_net(stack: LocalStack) -> SafetyNet:
    return SafetyNet(stack)


@pytest.fixture
def retry_pause(embedded_aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch) -> Iterator[RetryHold]:
    """Between an execution's failed attempt and its retry, the test can act (e.g. stop it)."""
    pause = RetryHold()
    monkeypatch.setattr(embedded_aws.clock, "sleep", pause.sleep)
    yield pause
    pause.released.set()
