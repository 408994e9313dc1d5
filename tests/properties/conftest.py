"""Prints how many fault schedules ran (CI's note quotes it)."""

from __future__ import annotations

from typing import Any

from tests.properties.tally import TALLY


def pytest_terminal_summary(terminalreporter: Any) -> None:
    lines = TALLY.lines()
    if lines:
        terminalreporter.section("onceflow fault schedules")
        for line in lines:
            terminalreporter.write_line(line)
