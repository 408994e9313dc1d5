"""The repo's own conformance cases on the embedded engine and on stock moto, side by side.

    .venv/bin/python benchmarks/conformance.py            # both engines, one table by area
    .venv/bin/python benchmarks/conformance.py -- -k map  # pytest arguments after --

Each case (tests/engine/test_conformance.py, test_conformance_jsonata.py, test_test_state_api.py,
test_conformance_services.py, test_conformance_api.py, test_conformance_versions.py)
asserts one behaviour AWS documents or recorded; run on stock moto (ONCEFLOW_CONFORMANCE_ENGINE=stock,
tests/engine/stock_moto.py) the same cases show what the engine's patches add. Both runs are child
pytest processes (moto's patches are process-wide), one after the other; a case counts as matched
when it passes, and a case that errors or fails on stock moto is simply not matched there.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODULES = (
    "tests/engine/test_conformance.py",
    "tests/engine/test_conformance_jsonata.py",
    "tests/engine/test_test_state_api.py",
    "tests/engine/test_conformance_services.py",
    "tests/engine/test_conformance_api.py",
    "tests/engine/test_conformance_versions.py",
)
ENGINES = {"embedded": {}, "stock moto": {"ONCEFLOW_CONFORMANCE_ENGINE": "stock"}}
# (area, words in the module or test name that put a case there), first match wins.
AREAS = (
    ("TestState", ("test_test_state_api",)),
    ("service integrations", ("test_conformance_services",)),
    ("state machine APIs", ("test_conformance_api",)),
    ("versions and aliases", ("test_conformance_versions",)),
    ("JSONata and variables", ("jsonata", "variable", "assign")),
    ("Choice", ("choice", "is_present", "not_does_not")),
    ("error handling", ("catch", "retry", "runtime", "error")),
    ("payload limits", ("256", "payload", "data_limit")),
    ("execution APIs", ("start_execution", "describe", "stop", "create_state_machine", "history")),
)


def area_of(module: str, name: str) -> str:
    text = f"{module}::{name}"
    for area, words in AREAS:
        if any(word in text for word in words):
            return area
    return "other"


def run(engine: str, extra: list[str], report: Path) -> dict[str, bool]:
    env = dict(os.environ, **ENGINES[engine])
    command = [sys.executable, "-m", "pytest", *MODULES, "-q", "-p", "no:cacheprovider", f"--junitxml={report}"]
    subprocess.run([*command, *extra], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, check=False)
    passed = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        key = f"{case.get('classname')}::{case.get('name')}"
        passed[key] = case.find("failure") is None and case.find("error") is None and case.find("skipped") is None
    return passed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pytest_args", nargs="*", help="after --: passed to pytest")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = {engine: run(engine, args.pytest_args, Path(tmp) / f"{i}.xml") for i, engine in enumerate(ENGINES)}
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for key in results["embedded"]:
        module, _, name = key.rpartition("::")
        area = area_of(module, name)
        counts[area]["cases"] += 1
        for engine, passed in results.items():
            counts[area][engine] += passed.get(key, False)
    engines = list(ENGINES)
    print(f"{'area':<24}{'cases':>7}" + "".join(f"{engine:>14}" for engine in engines))
    total: dict[str, int] = defaultdict(int)
    for area in [a for a, _ in AREAS] + ["other"]:
        if area not in counts:
            continue
        row = counts[area]
        for key in ("cases", *engines):
            total[key] += row[key]
        print(f"{area:<24}{row['cases']:>7}" + "".join(f"{row[engine]:>14}" for engine in engines))
    print(f"{'all':<24}{total['cases']:>7}" + "".join(f"{total[engine]:>14}" for engine in engines))
    ratio = total["embedded"] / max(total["stock moto"], 1)
    print(
        f"embedded matches {total['embedded']}/{total['cases']}, stock moto {total['stock moto']}/{total['cases']} "
        f"({ratio:.1f}x)"
    )


if __name__ == "__main__":
    main()
