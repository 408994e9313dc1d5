"""Mocked-integration fixtures: the engine honours `arn#TestCase`, and SFN_MOCK_CONFIG names the repo's file."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from onceflow.engine import ACCOUNT_ID, EmbeddedAws
from onceflow.engine.stepfunctions.mocking import SFN_MOCK_CONFIG, mocked_integrations
from onceflow.local.stack import LocalStack, client
from tests.mockconfig.cases import ASL_FILE, MOCK_CONFIG_FILE, mocked_state_machine_name


@pytest.fixture(scope="session")
def mocking_engine(embedded_aws: EmbeddedAws) -> Iterator[EmbeddedAws]:
    """Mocked integrations on (a no-op once EmbeddedAws.start() has applied the same patches,
    onceflow.engine.stepfunctions.mocking.moto_engine.patches())."""
    with mocked_integrations():
        yield embedded_aws


@pytest.fixture
def mock_stack(mocking_engine: EmbeddedAws, stack: LocalStack, monkeypatch: pytest.MonkeyPatch) -> LocalStack:
    """A fresh stack whose `#TestCase` executions read statemachine/test/MockConfigFile.json."""
    monkeypatch.setenv(SFN_MOCK_CONFIG, str(MOCK_CONFIG_FILE))
    return stack


@pytest.fixture
def bare_state_machine(mocking_engine: EmbeddedAws, monkeypatch: pytest.MonkeyPatch) -> str:
    """Only the state machine, under the name the mock file uses (no tables or queues): for starts that are
    refused before anything runs. Returns its ARN."""
    mocking_engine.reset()
    monkeypatch.setenv(SFN_MOCK_CONFIG, str(MOCK_CONFIG_FILE))
    return client(mocking_engine.endpoint_url, "stepfunctions").create_state_machine(
        name=mocked_state_machine_name(),
        definition=ASL_FILE.read_text(),
        roleArn=f"arn:aws:iam::{ACCOUNT_ID}:role/onceflow-mock-config-tests",
    )["stateMachineArn"]
