"""`onceflow trace --watch`: the page rewritten while `onceflow start` runs, then once more to share.

Each round reads what changed (collect.py reuses the executions that had ended by the last round:
an ended execution's history no longer changes) and replaces the file whole; the page carries
`live` (its period and when it was written) and reloads itself that often, keeping its selection,
filters and zoom. Ctrl-C ends the watch and writes the page without `live`: a snapshot that does
not reload, the file users share. If the endpoint stops answering, the watch ends the same way with
what it read last.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Generic, TypeVar

from botocore.exceptions import BotoCoreError, ClientError

Read = TypeVar("Read")


@dataclass(frozen=True)
class Watched(Generic[Read]):
    path: Path
    last: Read  # what the last page was written from
    rounds: int  # pages written while live
    ended_by: str  # "interrupted" (Ctrl-C) or why the endpoint could not be read


def _live(every: float, now: Callable[[], datetime]) -> Mapping[str, object]:
    return {"every": every, "written": now().isoformat(timespec="seconds")}


@contextmanager
def _ctrl_c_sets(stop: threading.Event) -> Iterator[None]:
    """In the main thread: Ctrl-C sets `stop`, so the read or write under way finishes instead of
    being cut wherever the program is (inside botocore, a thread pool's shutdown); a second Ctrl-C
    raises KeyboardInterrupt as usual."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        yield  # not ours to handle: another thread, or a process started to ignore Ctrl-C (`cmd &`)
        return

    def interrupted(signum: int, frame: Any) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    previous = signal.signal(signal.SIGINT, interrupted)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def watch(
    read: Callable[[], Read],
    write: Callable[[Read, Mapping[str, object] | None], Path],
    every: float,
    sleep: Callable[[float], None] | None = None,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    on_round: Callable[[Read, Path], None] = lambda read, path: None,
) -> Watched[Read]:
    """Write `read()` every `every` seconds as a live page until Ctrl-C or the endpoint goes; then the
    last page without `live`. Ctrl-C lets a read or write under way finish (`sleep`, given by tests,
    may raise KeyboardInterrupt instead)."""
    stop = threading.Event()
    wait = sleep if sleep is not None else stop.wait
    rounds, ended_by = 0, "interrupted"
    with _ctrl_c_sets(stop):
        last = read()
        try:
            while not stop.is_set():
                path = write(last, _live(every, now))
                rounds += 1
                on_round(last, path)
                wait(every)
                if stop.is_set():
                    break
                try:
                    last = read()
                except (BotoCoreError, ClientError) as error:
                    ended_by = f"the endpoint stopped answering ({error})"
                    break
        except KeyboardInterrupt:
            pass
    return Watched(write(last, None), last, rounds, ended_by)
