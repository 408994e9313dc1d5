"""The starter's tests run on the worked example's domain: where its event_id is and its payload
model, read from template.yaml's starter environment (their one home), set for tests that read the
starter's settings from the process environment."""

from __future__ import annotations

import pytest

from tests.starter.helpers import WORKED_EXAMPLE_DOMAIN


@pytest.fixture(autouse=True)
def worked_example_domain(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in WORKED_EXAMPLE_DOMAIN.items():
        monkeypatch.setenv(name, value)
