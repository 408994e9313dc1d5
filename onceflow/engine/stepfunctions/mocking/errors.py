"""What is wrong with a mock configuration: every problem names the file, where in it, and the rule it broke."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    source: str  # the file, as the caller named it
    where: str  # e.g. "StateMachines › pipeline › TestCases › HappyPath › state 'Publish'"
    rule: str  # a stable identifier, e.g. "state-exists", "attempt-ranges-gap"
    message: str

    def __str__(self) -> str:
        return f"{self.source}: {self.where}: {self.message} [rule: {self.rule}]"


class MockConfigError(ValueError):
    """The mock configuration cannot be used; `problems` lists everything found, not only the first."""

    def __init__(self, problems: Sequence[Problem]):
        self.problems = list(problems)
        count = len(self.problems)
        heading = f"{count} problem{'s' if count != 1 else ''} in the mock configuration"
        super().__init__(heading + ":\n" + "\n".join(f"- {p}" for p in self.problems))

    @property
    def rules(self) -> list[str]:
        return [p.rule for p in self.problems]


class MockedResponsesExhausted(RuntimeError):
    """A mocked Task state was invoked more often than its mocked response defines."""
