"""Conformance tests run on the embedded engine: they check the engine itself against AWS. With
ONCEFLOW_CONFORMANCE_ENGINE=stock they run on stock moto instead (benchmarks/conformance.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from onceflow.ops.executions import stop_running
from tests.engine import stock_moto
from tests.engine.harness import Account


@pytest.fixture(scope="session")
def stock_moto_server() -> Iterator[stock_moto.StockMoto]:
    server = stock_moto.StockMoto().start()
    yield server
    server.stop()


@pytest.fixture
def account(request: pytest.FixtureRequest) -> Iterator[Account]:
    engine: Any = request.getfixturevalue("stock_moto_server" if stock_moto.wanted() else "embedded_aws")
    engine.reset()
    account = Account(engine)
    yield account
    sfn = account.sfn
    stop_running(sfn, [m["stateMachineArn"] for m in sfn.list_state_machines()["stateMachines"]])
