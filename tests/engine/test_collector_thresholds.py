"""collector_thresholds (engine/speedups/collector_thresholds.py): while the embedded AWS runs, the
garbage collector's full collection comes after 100 collections of the middle generation instead of
CPython's 10, and what the process held at start is frozen out of its walks; both are put back when
it stops (a freeze someone else made is left as it was), and left alone with the speed-up off."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Iterator

import pytest

from onceflow.engine import EmbeddedAws
from onceflow.engine.speedups import COLLECTOR_THRESHOLDS, NAMES
from onceflow.engine.speedups.collector_thresholds import FULL_EVERY


@pytest.fixture
def thresholds() -> Iterator[tuple[int, int, int]]:
    was = gc.get_threshold()
    gc.set_threshold(701, 11, 12)  # not CPython's: what the engine found must come back, not the defaults
    yield gc.get_threshold()
    gc.set_threshold(*was)


def test_the_full_collection_waits_longer_while_the_engine_runs(thresholds: tuple[int, int, int]) -> None:
    with EmbeddedAws():
        assert gc.get_threshold() == (701, 11, FULL_EVERY) == (701, 11, 100)
    assert gc.get_threshold() == thresholds


def test_switched_off_the_collector_is_left_alone(thresholds: tuple[int, int, int], freezes: list[str]) -> None:
    with EmbeddedAws(speedups=[name for name in NAMES if name != COLLECTOR_THRESHOLDS]):
        assert gc.get_threshold() == thresholds
    assert gc.get_threshold() == thresholds and freezes == []


@pytest.fixture
def freezes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """gc.freeze and gc.unfreeze counted, not done: another engine of this process (the suite's) may
    run and have frozen the heap already."""
    calls: list[str] = []
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(gc, "unfreeze", lambda: calls.append("unfreeze"))
    return calls


def test_what_the_process_held_at_start_is_frozen_until_the_engine_stops(
    freezes: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gc, "get_freeze_count", lambda: 0)  # nothing frozen before
    with EmbeddedAws():
        assert freezes == ["freeze"]
    assert freezes == ["freeze", "unfreeze"]


def test_a_heap_someone_else_froze_is_left_frozen(freezes: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gc, "get_freeze_count", lambda: 1)  # someone (another engine) froze something
    with EmbeddedAws():
        assert gc.get_threshold()[2] == FULL_EVERY
    assert freezes == []


def test_frozen_for_real_the_heap_holds_moto_s_models() -> None:
    """Without counting: an engine started in a process where nothing is frozen yet freezes what it
    holds (in a fresh interpreter, as the suite's own engine may run in this one)."""
    script = (
        "import gc\n"
        "from onceflow.engine import EmbeddedAws\n"
        "with EmbeddedAws():\n"
        "    during = gc.get_freeze_count()\n"
        "print(during, gc.get_freeze_count())\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120)
    during, after = (int(n) for n in done.stdout.split())
    assert during > 100_000 and after == 0
