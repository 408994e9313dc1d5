"""The `collector_thresholds` speed-up: while the embedded AWS runs, Python's cyclic garbage collector
walks the whole heap a tenth as often, and never walks what the process held when the engine started.

The engine's process holds a large heap of long-lived objects: moto's models and what they keep
(executions, histories, items, messages), botocore's service models, about 420,000 objects once
moto is imported and more as a run goes on. CPython's thresholds (700, 10, 10) make every tenth
collection of the middle generation a full one, which walks all of them: at 1,000 pipeline events,
three full collections took 0.9 s of a 17 s run (benchmarks/gc_cost.py, timed with gc.callbacks).
Here, from start():

- the full collection's threshold is FULL_EVERY (the first two stay as they are): the young
  generations are collected as often as before, the full walk a tenth as often (CPython holds it
  back further until what survived since the last one is a quarter of the heap);
- what the process holds at that moment (imported modules, moto's and botocore's models) is moved
  out of the collector's reach with `gc.freeze()`, when nothing else froze anything: a full
  collection then walks only what came later.

Cycles are still collected, old ones later. stop() puts the thresholds back and, if it froze
them, hands the frozen objects back to the collector (`gc.unfreeze()`). Measured at 1,000 events:
one full collection of 0.24 s instead of three of 0.9 s; the collector's time halved, peak RSS the same.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass

from onceflow.engine.speedups import COLLECTOR_THRESHOLDS

SPEEDUPS = (COLLECTOR_THRESHOLDS,)
FULL_EVERY = 100  # collections of the middle generation per full collection (CPython: 10)


@dataclass(frozen=True)
class Was:
    """The collector as start() found it."""

    thresholds: tuple[int, int, int]
    froze: bool  # start() froze the heap (nothing was frozen before)


def raised() -> Was:
    was = Was(gc.get_threshold(), froze=gc.get_freeze_count() == 0)
    if was.froze:
        gc.freeze()
    gc.set_threshold(was.thresholds[0], was.thresholds[1], FULL_EVERY)
    return was


def restore(was: Was) -> None:
    if was.froze:
        gc.unfreeze()
    gc.set_threshold(*was.thresholds)
