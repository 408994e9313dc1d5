"""A cache that computes each key once, even when threads ask for it at the same time.

functools.cache and lru_cache let concurrent misses all run: after a burst of StartExecution every
execution's first task misses at once, and each built its own botocore client or service model
(tens of ms and about a MB each). Hundreds of executions waited in botocore's model loader and a
`onceflow start` filled with 5,000 executions reached 1.2 GB (issue 21)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Hashable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def once_per_key(compute: Callable[P, R]) -> Callable[P, R]:
    """`compute` memoised by its positional arguments; a key being computed makes the others wait
    for its result instead of computing it again."""
    results: dict[tuple[Hashable, ...], R] = {}
    computing = threading.Lock()

    @functools.wraps(compute)
    def cached(*args: P.args, **kwargs: P.kwargs) -> R:
        key = (*args, *sorted(kwargs.items()))
        try:
            return results[key]
        except KeyError:
            pass
        with computing:
            if key not in results:
                results[key] = compute(*args, **kwargs)
            return results[key]

    return cached
