"""Stock moto (the pinned version, none of onceflow's engine patches) as the other engine the
conformance cases run on, for benchmarks/conformance.py: `ONCEFLOW_CONFORMANCE_ENGINE=stock`.

Only the real sleeps of Retry and Wait are replaced (by a DelayClock at time scale 0, as on the
embedded engine): that changes how long a case takes, not what it asserts.
"""

from __future__ import annotations

import os
from typing import Any

import requests
from moto.server import ThreadedMotoServer
from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl
from moto.stepfunctions.parser.asl.component.state.wait.wait_function import wait_function

from onceflow.engine.server import DelayClock, free_port

ENGINE_VARIABLE = "ONCEFLOW_CONFORMANCE_ENGINE"


def wanted() -> bool:
    return os.environ.get(ENGINE_VARIABLE) == "stock"


class _Sleeps:
    def __init__(self, clock: DelayClock):
        self._clock = clock

    def sleep(self, seconds: float) -> None:
        self._clock.sleep(seconds)

    def __getattr__(self, name: str) -> Any:
        import time

        return getattr(time, name)


class StockMoto:
    """A plain moto server with Step Functions execution on; `endpoint_url`, `reset()` and `clock`
    as EmbeddedAws has them, for tests/engine/harness.py's Account."""

    def __init__(self) -> None:
        self.port = free_port()
        self.clock = DelayClock(time_scale=0.0)
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> StockMoto:
        os.environ["MOTO_PORT"] = str(self.port)
        retrier_decl.time = _Sleeps(self.clock)
        clock = self.clock
        wait_function.WaitFunction._wait_interval = lambda function, env, seconds: clock.wait(env, seconds)
        self._server.start()
        self.reset()
        return self

    def reset(self) -> None:
        requests.post(f"{self.endpoint_url}/moto-api/reset", timeout=30).raise_for_status()
        requests.post(
            f"{self.endpoint_url}/moto-api/config",
            json={"stepfunctions": {"execute_state_machine": True}},
            timeout=10,
        ).raise_for_status()
        self.clock.reset()

    def stop(self) -> None:
        self._server.stop()
