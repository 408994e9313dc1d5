"""The `backend_lookup` speed-up: `backends[account]` answered at once for an account already there.

Every `backends[account]` in moto (several per request, more per execution step) takes moto's global
backend lock, lists the dict's keys and compares the dict with every registered BackendDict through a
Python `__eq__`, only to find both already there; here an account already present in a dict that is
registered (by identity) is answered at once, anything else goes through moto's own code.
"""

from __future__ import annotations

from typing import Any

from moto.core.base_backend import BackendDict

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.speedups import BACKEND_LOOKUP

Patch = tuple[Any, str, Any]
SPEEDUPS = (BACKEND_LOOKUP,)


def moto_needs() -> list[Need]:
    return [
        need(BackendDict, "_create_account_specific_backend", "account_id"),
        need(BackendDict, "_instances"),  # the registered dicts (BackendDict.reset resets those)
    ]


def patches() -> list[Patch]:
    original = BackendDict._create_account_specific_backend

    def _create_account_specific_backend(self: Any, account_id: str) -> None:
        # moto's: under its lock, add the account if absent, register the dict if not registered.
        if dict.__contains__(self, account_id):
            for registered in BackendDict._instances:
                if registered is self:
                    return
        original(self, account_id)

    return [(BackendDict, "_create_account_specific_backend", _create_account_specific_backend)]
