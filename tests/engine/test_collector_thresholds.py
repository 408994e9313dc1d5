"""collector_thresholds (engine/speedups/collector_thresholds.py): while the embedded AWS runs, the
garbage collector's full collection comes after 100 collections of the middle generation instead of
CPython's 10, and what the process held at start is frozen out of its walks; both are put back when
it stops (a freeze someone else made is left as it was), and left alone with the speed-up off."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from onceflow.engine import EmbeddedAws
from onceflow.engine.speedups import COLLECTOR_THRESHOLDS, NAMES, collector_thresholds
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
    """Without counting: from a process where nothing is frozen, start freezes what the process holds
    (moto's and botocore's models among it) and stop hands it all back. The suite's own engine may have
    frozen this process's heap: unfrozen first, frozen again after (only the collector's work changes)."""
    someone_froze = gc.get_freeze_count() > 0
    gc.unfreeze()
    try:
        was = collector_thresholds.raised()
        during = gc.get_freeze_count()
        collector_thresholds.restore(was)
        assert during > 100_000 and gc.get_freeze_count() == 0
    finally:
        if someone_froze:
            gc.freeze()
