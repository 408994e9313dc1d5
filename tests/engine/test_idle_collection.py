"""After a busy spell, `onceflow start`'s background round makes the garbage collector's due full
collection while nothing happens (engine/speedups/idle_gates.py), once per spell: counted here with a
collect function of the test's own, the spell told by the engine's count of execution status settings.
"""

from __future__ import annotations

import pytest

from onceflow.engine.speedups import idle_gates
from onceflow.engine.speedups.idle_gates import QUIET_ROUNDS, IdleGates


@pytest.fixture
def changes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The engine's count of execution status settings, as the test moves it."""
    count = [0]
    monkeypatch.setattr(idle_gates, "_LAST", count)
    return count


def _gates(collected: list[int], enabled: bool = True) -> IdleGates:
    return IdleGates(enabled, "us-east-1", collect=lambda: collected.append(1))


def test_nothing_changed_nothing_collected(changes: list[int]) -> None:
    collected: list[int] = []
    gates = _gates(collected)
    assert not any(gates.collect_when_quiet() for _ in range(4 * QUIET_ROUNDS))
    assert collected == []


def test_a_busy_spell_is_collected_once_after_its_quiet_rounds(changes: list[int]) -> None:
    collected: list[int] = []
    gates = _gates(collected)
    for _ in range(3):  # busy: every round sees executions change
        changes[0] += 7
        assert not gates.collect_when_quiet()
    made = [gates.collect_when_quiet() for _ in range(3 * QUIET_ROUNDS)]
    assert made.index(True) == QUIET_ROUNDS - 1 and made.count(True) == 1
    assert collected == [1]


def test_a_change_during_the_quiet_rounds_starts_them_again(changes: list[int]) -> None:
    collected: list[int] = []
    gates = _gates(collected)
    changes[0] += 1
    gates.collect_when_quiet()
    for _ in range(QUIET_ROUNDS - 1):
        assert not gates.collect_when_quiet()
    changes[0] += 1
    assert not gates.collect_when_quiet()
    made = [gates.collect_when_quiet() for _ in range(QUIET_ROUNDS)]
    assert made == [False] * (QUIET_ROUNDS - 1) + [True]
    assert collected == [1]


def test_with_the_gates_off_nothing_is_collected(changes: list[int]) -> None:
    collected: list[int] = []
    gates = _gates(collected, enabled=False)
    changes[0] += 1
    assert not any(gates.collect_when_quiet() for _ in range(3 * QUIET_ROUNDS))
    assert collected == []
