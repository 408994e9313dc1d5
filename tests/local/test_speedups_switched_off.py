"""The suite's representative slice (tests/local/speedup_slice.py) gives the same outcome with each
speed-up switched off, and that outcome is the pipeline's contract (R1–R3, the errors AWS names).

The whole suite runs with any set switched off too: `ONCEFLOW_SPEEDUPS_OFF=in_process_integrations
make test` (docs/TESTING.md). This test is its bounded stand-in for CI: one fresh process (the
speed-ups are class-level patches, so the suite's own engine must not be running), one small run
per set (all on, then each one off).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from onceflow.engine.speedups import NAMES
from tests.local.speedup_slice import ORDERS as ORDER_COUNT

ROOT = Path(__file__).resolve().parents[2]
ORDERS = [f"slice-{i}" for i in range(ORDER_COUNT)]


@pytest.mark.embedded_only(reason="switches the embedded engine's speed-ups")
@pytest.mark.timeout(600)  # a deploy and a pipeline run per set in a fresh interpreter, about 12 s of CPU
def test_each_speedup_switched_off_gives_the_same_outcome():
    specs = ["all", *(f"all-{name}" for name in NAMES)]
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "functions/starter"), str(ROOT / "functions/common")]),
    }
    environment.pop("ONCEFLOW_SPEEDUPS_OFF", None)
    done = subprocess.run(
        [sys.executable, "-m", "tests.local.speedup_slice", *specs],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=540,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    outcomes = {run["speedups"]: run["outcome"] for run in map(json.loads, done.stdout.splitlines())}
    assert sorted(outcomes) == sorted(specs)

    reference = outcomes["all"]
    assert reference["business_rows"] == ORDERS  # R2: one row per event, the conflict wrote none
    assert reference["states"] == [[event, "sent"] for event in ORDERS]
    assert reference["notified"] == ORDERS  # R3
    assert reference["dead_letters"] == ["Onceflow.InvalidMessage", "Onceflow.PayloadConflict"]  # R1
    assert reference["task_errors"] == ["DynamoDb.TransactionCanceledException", "SNS.ThrottledException"]
    assert reference["injected"] == {"transaction conflicts": 1, "sns throttles": 2}
    different = {
        spec: {key: (value, reference[key]) for key, value in outcome.items() if value != reference[key]}
        for spec, outcome in outcomes.items()
        if outcome != reference
    }
    assert different == {}, f"(switched off: {{key: (outcome, all on)}}) {different}\n{done.stderr[-6000:]}"
