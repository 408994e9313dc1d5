"""`onceflow start` prints a summary every few seconds, not a line per batch (issue 30)."""

from __future__ import annotations

from onceflow.local.start_progress import StartProgress


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_batches_within_the_interval_make_one_line_with_their_sum_and_the_total():
    clock = Clock()
    progress = StartProgress(clock=clock, every=5.0)
    assert [progress.add(10, 0) for _ in range(30)] == [None] * 30  # 300 records, no time passed
    clock.now += 5.0
    assert progress.add(10, 0) == "starter: 310 record(s) handled (total 310)"
    clock.now += 5.0
    assert progress.add(5, 0) == "starter: 5 record(s) handled (total 315)"


def test_subscriber_counts_join_the_line_once_there_are_any():
    clock = Clock()
    progress = StartProgress(clock=clock, every=5.0)
    progress.add(1000, 0)
    clock.now += 6
    assert (
        progress.add(0, 1200)
        == "starter: 1,000 record(s) handled (total 1,000); subscriber: 1,200 notification(s) handled (total 1,200)"
    )
    clock.now += 6
    assert (
        progress.add(3, 0)
        == "starter: 3 record(s) handled (total 1,003); subscriber: 0 notification(s) handled (total 1,200)"
    )


def test_an_idle_stack_prints_nothing_and_a_stop_prints_what_is_left():
    clock = Clock()
    progress = StartProgress(clock=clock, every=5.0)
    clock.now += 60
    assert progress.add(0, 0) is None  # idle: no line however long
    assert progress.flush() is None
    assert (
        progress.add(7, 0) == "starter: 7 record(s) handled (total 7)"
    )  # the first batch after a quiet spell: at once
    assert progress.add(2, 0) is None
    assert progress.flush() == "starter: 2 record(s) handled (total 9)"  # Ctrl-C: counted work is not lost
