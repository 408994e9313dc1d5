"""Deployments kept side by side in one process, one live at a time: switching to another brings its
moto state back instead of deploying it again (about half a second of CPU each time).

moto's state is its registered BackendDicts (`BackendDict._instances`): each maps an account to an
AccountSpecificBackend, which maps a region to a backend object. A reset (`BackendDict.reset`, what
`EmbeddedAws.reset` asks moto for) gives every backend object a new `__dict__` and drops the accounts
from every dict; the old `__dict__`s live on while something refers to them. A `World` is those
references, taken right after a deploy. `bring_back` stops the executions running in whatever is live,
then puts the world's accounts, regions and each backend's `__dict__` back and registers exactly the
world's dicts again (a dict the world did not have is emptied, as a reset empties it). It replaces
references, never the contents of a kept `__dict__`: the caller then restores the deployment's
Baseline (baseline.py), which forgets what the tests did in it since.

What lives outside moto's backends is not part of a world: the engine's clock and recorded denials (the
callers reset those as after a deploy), and caches keyed by text (parsed policies, expressions),
which hold for every world.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from moto.core.base_backend import AccountSpecificBackend, BackendDict
from moto.sts.models import sts_backends

from onceflow.engine.bookkeeping.baseline import Baseline, stop_executions
from onceflow.engine.moto_shape import Need, need

STS_PARTITION = "aws"  # STS's backends are kept per partition, not per region (as iam/identities.py reads them)


def moto_needs() -> list[Need]:
    return [
        need(BackendDict, "_instances"),  # the registered dicts: what BackendDict.reset resets
        need(BackendDict, "reset"),
        need(AccountSpecificBackend, "reset"),
    ]


@dataclass(frozen=True)
class World:
    """moto's state as a deploy left it: references to its dicts and objects, not copies."""

    accounts: tuple[tuple[BackendDict, dict[str, Any]], ...]  # each registered dict: account -> its backends
    regions: tuple[tuple[Any, dict[str, Any]], ...]  # each AccountSpecificBackend: region -> backend
    states: tuple[tuple[Any, dict[str, Any]], ...]  # each backend object and its __dict__

    @classmethod
    def capture(cls, lock: threading.RLock, account_id: str) -> World:
        with lock:
            # The account's STS made first, so that it is this world's: the role sessions issued later
            # (a function runtime's, a task's) are kept in process-wide caches (local/function_credentials.py,
            # iam/task_credentials.py) that must find them again when this world is brought back.
            sts_backends[account_id][STS_PARTITION]
            registered = list(BackendDict._instances)
            accounts = tuple((services, dict(dict.items(services))) for services in registered)
            regions = tuple(
                (by_region, dict(dict.items(by_region))) for _, kept in accounts for by_region in kept.values()
            )
            states = tuple((backend, backend.__dict__) for _, kept in regions for backend in kept.values())
            return cls(accounts, regions, states)

    def is_live(self) -> bool:
        """Every dict and backend still holds what this world kept (no reset, no other world since)."""
        return (
            {id(services) for services in BackendDict._instances} == {id(services) for services, _ in self.accounts}
            and all(_holds(services, kept) for services, kept in self.accounts)
            and all(_holds(by_region, kept) for by_region, kept in self.regions)
            and all(backend.__dict__ is state for backend, state in self.states)
        )

    def bring_back(self, lock: threading.RLock, account_id: str, region: str) -> None:
        """Make this world live: what runs now is stopped first (its threads would write into it)."""
        stop_executions(lock, account_id, region)
        with lock:
            kept = {id(services) for services, _ in self.accounts}
            for services in list(BackendDict._instances):
                if id(services) not in kept:  # not in this world: empty, as a reset leaves it
                    for by_region in dict.values(services):
                        by_region.reset()
                    dict.clear(services)
            BackendDict._instances[:] = [services for services, _ in self.accounts]
            for services, by_account in self.accounts:
                dict.clear(services)
                dict.update(services, by_account)
            for by_region, backends in self.regions:
                dict.clear(by_region)
                dict.update(by_region, backends)
            for backend, state in self.states:
                backend.__dict__ = state


def _holds(live: dict[str, Any], kept: dict[str, Any]) -> bool:
    """The same keys, each with the very object kept."""
    return dict.__len__(live) == len(kept) and all(dict.get(live, key) is value for key, value in kept.items())


@dataclass(frozen=True)
class Deployed:
    """What a deploy left: the resources as deployed (Baseline) and moto's state around them (World)."""

    baseline: Baseline
    world: World

    @classmethod
    def capture(cls, lock: threading.RLock, account_id: str, region: str) -> Deployed:
        return cls(Baseline.capture(lock, account_id, region), World.capture(lock, account_id))

    def restore(self, lock: threading.RLock) -> None:
        """Just-deployed again: its world brought back if another is live (or a reset came since)."""
        if not self.world.is_live():
            self.world.bring_back(lock, self.baseline.account_id, self.baseline.region)
        self.baseline.restore(lock)
