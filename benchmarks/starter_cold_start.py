"""The starter's cold start, before and after: `import app` in a fresh interpreter, then its first
and second invocation (one record) against a local stack.

Lazy imports only move cost from the import to the first invocation, so both are printed. Each
figure is the median of several fresh interpreters; the local stack runs in its own process so
that moto is not in the measured one.

    python -m benchmarks.starter_cold_start                 # before = the starter at BEFORE_COMMIT
    python -m benchmarks.starter_cold_start --before REV --runs 7
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The starter before issue 12's cold-start work (Powertools Tracer, BatchProcessor, eager boto3 and pydantic).
BEFORE_COMMIT = "0f9c2ce"

_STACK = """
import json, logging, sys
logging.disable(logging.CRITICAL)  # the old starter's executions may fail on today's workflow: not measured here
from onceflow.engine import EmbeddedAws
from onceflow.local.stack import deploy
aws = EmbeddedAws().start()
stack = deploy(aws.endpoint_url)
print(json.dumps({"endpoint": aws.endpoint_url, "environment": stack.starter_environment}), flush=True)
sys.stdin.read()  # until the benchmark closes it
aws.stop()
"""

_PROBE = """
import json, sys, time, uuid
started = time.perf_counter()
import app
imported = time.perf_counter()

class Context:
    function_name = "starter"
    memory_limit_in_mb = 256
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:starter"
    aws_request_id = "bench"
    def get_remaining_time_in_millis(self):
        return 30_000

def event():
    order = {"order_id": "bench-" + uuid.uuid4().hex, "customer_id": "c", "amount": 1, "currency": "EUR"}
    return {"Records": [{"messageId": str(uuid.uuid4()), "body": json.dumps(order),
                         "attributes": {"SentTimestamp": str(int(time.time() * 1000))}}]}

response = app.lambda_handler(event(), Context())
first = time.perf_counter()
assert response == {"batchItemFailures": []}, response
app.lambda_handler(event(), Context())
second = time.perf_counter()
print(json.dumps({"import": imported - started, "first": first - imported, "second": second - first}))
"""


def _extract(revision: str, target: Path) -> Path:
    """functions/starter (and functions/common, if it existed) as they were at `revision`."""
    archive = subprocess.run(
        ["git", "archive", revision, "functions"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target / "functions"


def _wait_until_idle(environment: dict[str, str]) -> None:
    """The local stack answers under one lock: measure each run with no execution of the last one running."""
    import boto3

    sfn = boto3.client(
        "stepfunctions",
        endpoint_url=environment["AWS_ENDPOINT_URL"],
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    arn = environment["STATE_MACHINE_ARN"]
    deadline = time.monotonic() + 60
    while sfn.list_executions(stateMachineArn=arn, statusFilter="RUNNING")["executions"]:
        if time.monotonic() > deadline:
            raise RuntimeError("executions of the last run are still running after 60 s")
        time.sleep(0.05)


def _measure(functions_dir: Path, environment: dict[str, str], runs: int) -> dict[str, float]:
    samples: dict[str, list[float]] = {"import": [], "first": [], "second": []}
    for _ in range(runs):
        _wait_until_idle(environment)
        done = subprocess.run(
            [sys.executable, "-c", _PROBE],
            cwd=functions_dir / "starter",
            env=environment | {"PYTHONPATH": str(functions_dir / "common")},
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode != 0:
            raise RuntimeError(done.stderr)
        for key, value in json.loads(done.stdout.strip().splitlines()[-1]).items():
            samples[key].append(value)
    return {key: statistics.median(values) for key, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=BEFORE_COMMIT, help="git revision of the 'before' starter")
    parser.add_argument("--runs", type=int, default=5, help="fresh interpreters per figure (median)")
    options = parser.parse_args()

    stack = subprocess.Popen(
        [sys.executable, "-c", _STACK],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert stack.stdout is not None
        described = json.loads(stack.stdout.readline())
        base = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "POWERTOOLS_"))}
        environment = (
            base
            | described["environment"]
            | {
                "AWS_ENDPOINT_URL": described["endpoint"],
                "AWS_DEFAULT_REGION": "us-east-1",
                "AWS_ACCESS_KEY_ID": "testing",
                "AWS_SECRET_ACCESS_KEY": "testing",
                "AWS_LAMBDA_FUNCTION_NAME": "starter",
                "POWERTOOLS_TRACE_DISABLED": "true",  # no X-Ray daemon here; the SDK is imported all the same
                "POWERTOOLS_METRICS_NAMESPACE": "Bench",
            }
        )
        with tempfile.TemporaryDirectory() as scratch:
            before = _measure(_extract(options.before, Path(scratch)), environment, options.runs)
        after = _measure(ROOT / "functions", environment, options.runs)
    finally:
        if stack.stdin is not None:
            stack.stdin.close()
        stack.wait(timeout=30)

    print(f"starter cold start, median of {options.runs} fresh interpreters (seconds)")
    print(f"{'':24}{'before (' + options.before + ')':>18}{'after':>10}")
    for key, label in (("import", "import app"), ("first", "first invocation"), ("second", "second invocation")):
        print(f"{label:24}{before[key]:>18.3f}{after[key]:>10.3f}")
    total_before, total_after = before["import"] + before["first"], after["import"] + after["first"]
    print(f"{'import + first':24}{total_before:>18.3f}{total_after:>10.3f}")


if __name__ == "__main__":
    main()
