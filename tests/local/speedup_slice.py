"""A representative slice of the suite, run on a fresh embedded AWS for each set of speed-ups:

    python -m tests.local.speedup_slice all none all-jsonpath_cache ...

prints one JSON outcome per set. A new process, because the speed-ups are class-level patches of
moto: the suite's own engine (all on) must not be running when one is switched off. The slice goes
through the pipeline end to end (SQS receive, delete and attributes; the starter; the state
machine's DynamoDB and SNS integrations; dead letters) with faults injected on the Record and
Publish paths, so it touches every speed-up; test_speedups_switched_off.py compares the outcomes.
"""

from __future__ import annotations

import io
import json
import logging
import sys
from collections import Counter
from typing import Any

from onceflow.engine import EmbeddedAws, speedups
from onceflow.local import faults
from onceflow.local.pipeline import LocalPipeline
from onceflow.local.stack import deploy
from onceflow.ops.executions import list_executions, wait_for
from onceflow.ops.observe import drain, scan
from tests.support import order

ORDERS = 3  # two pollers at once, a conflict injected on one Record and two throttles on Publish


def outcome(selected: frozenset[str]) -> dict[str, Any]:
    with EmbeddedAws(speedups=selected) as aws:
        stack = deploy(aws.endpoint_url)
        pipeline = LocalPipeline(aws, stack, log_stream=io.StringIO())
        # Record and Publish fail on some attempts: retries, their error names and backoffs.
        with (
            faults.dynamodb_transaction_conflicts(times=1) as conflicts,
            faults.sns_publish_failures(times=2) as throttles,
        ):
            pipeline.send([order(f"slice-{i}") for i in range(ORDERS)] + ["not json"])
            pipeline.process(concurrency=2, timeout=120)
        # Later: a redelivery of a done event, and an id reused with another payload.
        pipeline.send([order("slice-0"), order("slice-1", amount=99)])
        pipeline.process(timeout=60)
        sfn = stack.client("stepfunctions")
        results = [wait_for(sfn, e["executionArn"]) for e in list_executions(sfn, stack.state_machine_arn)]
        dynamodb = stack.client("dynamodb")
        for failure in (f for r in results for f in r.task_failures()):  # shown by the test on a difference
            print(f"task failure: {json.dumps(failure)[:1500]}", file=sys.stderr)
        for failed in (r for r in results if r.status == "FAILED"):
            print(
                f"execution failed: {' > '.join(failed.path)}: {json.dumps(failed.history[-1], default=str)[:3000]}",
                file=sys.stderr,
            )
        return {
            "business_rows": sorted(r["order_id"] for r in scan(dynamodb, stack.business_table)),
            "states": sorted((r["event_id"], r["status"]) for r in scan(dynamodb, stack.processed_events_table)),
            "notified": sorted(Counter(m.attributes.get("event_id") for m in pipeline.inbox.collect())),
            "dead_letters": sorted(
                m.attributes.get("error", "") for m in drain(stack.client("sqs"), stack.dead_letter_queue_url)
            ),
            "statuses": sorted(r.status for r in results),
            "paths": sorted({" > ".join(r.path) for r in results}),
            "task_errors": sorted({f["error"] for r in results for f in r.task_failures()}),
            "injected": {"transaction conflicts": conflicts.injected, "sns throttles": throttles.injected},
            "retry_delays_asked": len(aws.clock.retry_delays) + len(aws.clock.wait_seconds) > 0,
        }


def selection(spec: str) -> frozenset[str]:
    if spec.startswith("all-"):
        return frozenset(speedups.NAMES) - speedups.resolve(spec[len("all-") :])
    return speedups.resolve(spec)


def main(specs: list[str]) -> None:
    logging.getLogger("moto").setLevel(logging.CRITICAL)
    for spec in specs:
        print(json.dumps({"speedups": spec, "outcome": outcome(selection(spec))}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
