"""What `onceflow start` prints while it runs: one summary line every few seconds with what the
starter and the subscribers handled since the last line and in all, instead of a line per batch
(a busy stack reads a batch of 10 many times a second)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

SUMMARY_EVERY_SECONDS = 5.0


@dataclass
class StartProgress:
    """Counts the rounds' work and says when a summary line is due."""

    clock: Callable[[], float]
    every: float = SUMMARY_EVERY_SECONDS
    handled: int = 0  # records the starter got since the last line
    notified: int = 0  # notifications the subscribers got since the last line
    handled_total: int = 0
    notified_total: int = 0

    def __post_init__(self) -> None:
        self._last_line = self.clock()

    def add(self, handled: int, notified: int) -> str | None:
        """Count a round; the summary line when one is due (something happened, `every` seconds passed)."""
        self.handled += handled
        self.notified += notified
        if self.clock() - self._last_line < self.every:
            return None
        return self.flush()

    def flush(self) -> str | None:
        """The summary of what was counted since the last line (None when nothing was)."""
        if not (self.handled or self.notified):
            return None
        self.handled_total += self.handled
        self.notified_total += self.notified
        parts = [f"starter: {self.handled:,} record(s) handled (total {self.handled_total:,})"]
        if self.notified_total:
            parts.append(f"subscriber: {self.notified:,} notification(s) handled (total {self.notified_total:,})")
        self.handled = self.notified = 0
        self._last_line = self.clock()
        return "; ".join(parts)
