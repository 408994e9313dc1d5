"""`onceflow trace --watch`: the page rewritten while `onceflow start` runs, then once more to share.

Each round reads what changed (collect.py reuses the executions that had ended by the last round:
an ended execution's history no longer changes) and replaces the file whole; the page carries
`live` (its period and when it was written) and reloads itself that often, keeping its selection,
filters and zoom. Ctrl-C ends the watch and writes the page without `live`: a snapshot that does
not reload, the file users share. If the endpoint stops answering, the watch ends the same way with
what it read last.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Generic, TypeVar

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


def watch(
    read: Callable[[], Read],
    write: Callable[[Read, Mapping[str, object] | None], Path],
    every: float,
    sleep: Callable[[float], None] = time.sleep,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    on_round: Callable[[Read, Path], None] = lambda read, path: None,
) -> Watched[Read]:
    """Write `read()` every `every` seconds as a live page until Ctrl-C or the endpoint goes; then the
    last page without `live`."""
    last = read()
    rounds, ended_by = 0, "interrupted"
    try:
        while True:
            path = write(last, _live(every, now))
            rounds += 1
            on_round(last, path)
            sleep(every)
            try:
                last = read()
            except (BotoCoreError, ClientError) as error:
                ended_by = f"the endpoint stopped answering ({error})"
                break
    except KeyboardInterrupt:
        pass
    return Watched(write(last, None), last, rounds, ended_by)
