"""collector_thresholds (engine/speedups/collector_thresholds.py): while the embedded AWS runs, the
garbage collector's full collection comes after 100 collections of the middle generation instead of
CPython's 10, and what the process held at start is frozen out of its walks; both are put back when
it stops (a freeze someone else made is left as it was), and left alone with the speed-up off.

The engine's own start and stop are checked in a fresh interpreter: starting a second embedded AWS
in this one would reset moto's backends, which are the process's, under the suite's own engine."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from collections.abc import Iterator

import pytest

from onceflow.engine.speedups import collector_thresholds
from onceflow.engine.speedups.collector_thresholds import FULL_EVERY

ENGINE_STARTED_AND_STOPPED = """
import gc, json, sys
from onceflow.engine import EmbeddedAws
gc.set_threshold(701, 11, 12)  # not CPython's: what the engine found must come back, not the defaults
seen = {}
for side, speedups in (("on", True), ("off", sys.argv[1].split(","))):
    with EmbeddedAws(speedups=speedups):
        seen[side] = {"during": [list(gc.get_threshold()), gc.get_freeze_count()]}
    seen[side]["after"] = [list(gc.get_threshold()), gc.get_freeze_count()]
print(json.dumps(seen))
"""


@pytest.fixture
def thresholds() -> Iterator[tuple[int, int, int]]:
    was = gc.get_threshold()
    gc.set_threshold(701, 11, 12)
    yield gc.get_threshold()
    gc.set_threshold(*was)


@pytest.fixture
def freezes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """gc.freeze and gc.unfreeze counted, not done."""
    calls: list[str] = []
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(gc, "unfreeze", lambda: calls.append("unfreeze"))
    return calls


def test_the_engine_raises_the_threshold_and_freezes_while_it_runs_and_puts_both_back() -> None:
    from onceflow.engine.speedups import COLLECTOR_THRESHOLDS, NAMES

    others = ",".join(name for name in NAMES if name != COLLECTOR_THRESHOLDS)
    done = subprocess.run(
        [sys.executable, "-c", ENGINE_STARTED_AND_STOPPED, others], capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    (thresholds, frozen) = seen["on"]["during"]
    assert thresholds == [701, 11, FULL_EVERY] == [701, 11, 100]
    assert frozen > 100_000  # moto's and botocore's models among them
    assert seen["on"]["after"] == [[701, 11, 12], 0]
    assert seen["off"]["during"] == seen["off"]["after"] == [[701, 11, 12], 0]  # switched off: left alone


def test_raised_then_restored(thresholds: tuple[int, int, int], freezes: list[str], monkeypatch) -> None:
    monkeypatch.setattr(gc, "get_freeze_count", lambda: 0)  # nothing frozen before
    was = collector_thresholds.raised()
    assert gc.get_threshold() == (701, 11, FULL_EVERY) and freezes == ["freeze"]
    collector_thresholds.restore(was)
    assert gc.get_threshold() == thresholds and freezes == ["freeze", "unfreeze"]


def test_a_heap_someone_else_froze_is_left_frozen(thresholds, freezes: list[str], monkeypatch) -> None:
    monkeypatch.setattr(gc, "get_freeze_count", lambda: 1)  # someone (another engine) froze something
    was = collector_thresholds.raised()
    assert gc.get_threshold()[2] == FULL_EVERY
    collector_thresholds.restore(was)
    assert freezes == [] and gc.get_threshold() == thresholds
