"""A validated mock configuration: test cases of state machines, each mapping Task states to mocked responses."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from onceflow.engine.stepfunctions.mocking.errors import MockConfigError, Problem


@dataclass(frozen=True)
class Return:
    """The Task succeeds with this result (any JSON value), as if the service had answered it."""

    payload: Any


@dataclass(frozen=True)
class Throw:
    """The Task fails with this error and cause; Retry and Catch see `error` as the error name."""

    error: str
    cause: str


Outcome = Return | Throw


@dataclass(frozen=True)
class AttemptRange:
    """One entry of a mocked response: invocations `first`..`last` (inclusive, from 0) get `outcome`."""

    key: str
    first: int
    last: int
    outcome: Outcome


@dataclass(frozen=True)
class MockedResponse:
    """What a mocked Task state answers on each invocation; ranges are sorted, contiguous and start at 0."""

    name: str
    ranges: tuple[AttemptRange, ...]

    @property
    def invocations(self) -> int:
        """How many invocations are defined (a further one has no answer and fails the execution)."""
        return self.ranges[-1].last + 1 if self.ranges else 0

    def outcome_for(self, invocation: int) -> Outcome | None:
        for attempt_range in self.ranges:
            if attempt_range.first <= invocation <= attempt_range.last:
                return attempt_range.outcome
        return None


@dataclass(frozen=True)
class MockTestCase:
    """One test case: started as `stateMachineArn#name`, its states answer with mocked responses."""

    __test__ = False  # not a pytest test class

    state_machine: str
    name: str
    states: Mapping[str, MockedResponse]


@dataclass(frozen=True)
class MockConfig:
    """A whole MockConfigFile.json, validated."""

    source: str
    test_cases: Mapping[str, Mapping[str, MockTestCase]]  # state machine name -> test case name -> case
    responses: Mapping[str, MockedResponse]

    @property
    def state_machines(self) -> list[str]:
        return list(self.test_cases)

    def test_case(self, state_machine: str, name: str) -> MockTestCase:
        cases = self.test_cases.get(state_machine)
        if cases is None:
            known = ", ".join(repr(n) for n in self.test_cases) or "none"
            raise MockConfigError(
                [
                    Problem(
                        self.source,
                        f"StateMachines › {state_machine}",
                        "state-machine-exists",
                        f"no test cases for a state machine named {state_machine!r} (the key must be the name the "
                        f"state machine was created with); state machines in the file: {known}",
                    )
                ]
            )
        case = cases.get(name)
        if case is None:
            known = ", ".join(repr(n) for n in cases) or "none"
            raise MockConfigError(
                [
                    Problem(
                        self.source,
                        f"StateMachines › {state_machine} › TestCases › {name}",
                        "test-case-exists",
                        f"no test case named {name!r}; test cases of {state_machine!r}: {known}",
                    )
                ]
            )
        return case
