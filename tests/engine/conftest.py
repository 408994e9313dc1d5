"""Conformance tests run on the embedded engine only: they check the engine itself against AWS."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from onceflow.local.embedded import EmbeddedAws
from onceflow.ops.executions import stop_running
from tests.engine.harness import Account


@pytest.fixture
def account(embedded_aws: EmbeddedAws) -> Iterator[Account]:
    embedded_aws.reset()
    account = Account(embedded_aws)
    yield account
    sfn = account.sfn
    stop_running(sfn, [m["stateMachineArn"] for m in sfn.list_state_machines()["stateMachines"]])
