"""The end of a test run names every skipped test under its reason, so that a skip is never taken
for a pass, and a reason that says how to get what its tests need (e.g. the browser tests' one
install command) is read once, not once per test. tests/conftest.py plugs it in; pytest's own
`-r` summary leaves skips to it (pyproject.toml)."""

from __future__ import annotations

from typing import Any

import pytest

SECTION = "skipped tests, by what they need"
SHOWN_PER_REASON = 50  # the browser module alone has over 10; an external-endpoint run skips hundreds


def reason_of(report: pytest.TestReport) -> str:
    longrepr: Any = report.longrepr
    text = str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return text.removeprefix("Skipped: ")


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    by_reason: dict[str, list[str]] = {}
    for report in terminalreporter.stats.get("skipped", []):
        by_reason.setdefault(reason_of(report), []).append(report.nodeid)
    if not by_reason:
        return
    terminalreporter.section(SECTION, sep="=", yellow=True)
    for reason, nodeids in by_reason.items():
        terminalreporter.write_line(f"{len(nodeids)} skipped: {reason}")
        for nodeid in nodeids[:SHOWN_PER_REASON]:
            terminalreporter.write_line(f"  {nodeid}")
        if len(nodeids) > SHOWN_PER_REASON:
            terminalreporter.write_line(f"  … and {len(nodeids) - SHOWN_PER_REASON} more")
