"""Shrunk failing schedules, saved as JSON in tests/properties/regressions/ and replayed by a test.

A file holds the schedule (model.py's JSON form), the violations seen when it was found, and how
it was found. Delete a file only when the schedule it holds has become meaningless; a fixed bug
keeps its schedule as a regression test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from onceflow.devtools.schedules import Schedule

DIRECTORY = Path(__file__).parent / "regressions"


def save(schedule: Schedule, violations: list[str], found_by: str) -> Path:
    DIRECTORY.mkdir(exist_ok=True)
    path = DIRECTORY / f"schedule-{schedule.digest()}.json"
    document = {
        "schedule": schedule.to_json(),
        "description": schedule.describe(),
        "violations_when_found": violations[:20],
        "found_by": found_by,
    }
    path.write_text(json.dumps(document, indent=2) + "\n")
    return path


def load_all() -> list[tuple[str, Schedule]]:
    found: list[tuple[str, Schedule]] = []
    for path in sorted(DIRECTORY.glob("*.json")):
        document: dict[str, Any] = json.loads(path.read_text())
        found.append((path.name, Schedule.from_json(document["schedule"])))
    return found
