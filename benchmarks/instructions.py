"""Machine instructions per pipeline execution (or per batched DescribeExecution), counted by valgrind's
callgrind, this tree against another commit or with speed-ups switched off, side by side in one run.

    .venv/bin/python benchmarks/instructions.py                                  # this tree and main
    .venv/bin/python benchmarks/instructions.py --variants onceflow off:json_copies
    .venv/bin/python benchmarks/instructions.py --workload describe --before 9e028a1 --rounds 2

Why instructions: on a shared 2-core machine the same code's CPU time per execution swung 30-40 %
between runs minutes apart (benchmarks/peer_cpu.py), which hides any change worth less than that.
The count of instructions a run executes moves about 1-2 % between identical runs here, so a change of
a few percent shows. Instructions are not time: vector instructions (the RSA signature of every SNS
notification, OpenSSL's AVX2 code: about a sixth of a pipeline execution's instructions but a
twentieth of its CPU) do more per instruction than the interpreter's. Use this to compare code, and
peer_cpu.py / demo_time.py for the seconds a user waits.

Each variant runs in a fresh `python` under `valgrind --tool=callgrind --instr-atstart=no` (about
50 times slower while counting): an embedded AWS in that process, the peer benchmark's resources and
inputs (benchmarks/peer_cpu.py), a warm-up, then counting switched on (`callgrind_control -i on`) for
the measured part only:
- `pipeline`: --executions StartExecution calls of statemachine/pipeline.asl.json, waited for until none
  runs (the client's calls to the in-process endpoint are counted too, as in one process they are);
- `describe`: a Pass machine's executions, their histories pruned (a history budget), read back with
  DescribeExecution in batches of 120 as `onceflow trace` reads them (onceflow/ops/batched_calls.py);
- `calls`: --executions pairs of in-process calls (a DynamoDB GetItem and an SQS GetQueueAttributes
  from boto3 clients in the engine's process, as the functions and the tests make them: the direct
  transport, no socket), their client side included.
Needs valgrind (Debian's package); nothing in the product or the tests does.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peer_cpu import ROOT, _tree_of

COLLECTED = re.compile(r"Collected : (\d+)")
DESCRIBE_BATCH = 120


def _counting(on: bool) -> None:
    subprocess.run(["callgrind_control", "-i", "on" if on else "off", str(os.getpid())], capture_output=True)


def _pipeline(executions: int) -> int:
    """Run `executions` pipeline executions (counted); how many."""
    import peer_cpu

    from onceflow.engine.server import EmbeddedAws

    aws = EmbeddedAws(history_budget=1000).start()
    try:
        endpoint = aws.endpoint_url
        resources = peer_cpu._resources(endpoint, "counted1")
        peer_cpu._run_executions(endpoint, resources, 10, 10, "warm1")
        sfn = peer_cpu._client("stepfunctions", endpoint)
        _counting(True)
        for index in range(executions):
            name, text = peer_cpu._execution_input(index, "counted1")
            sfn.start_execution(stateMachineArn=resources.state_machine_arn, name=name, input=text)
        while sfn.list_executions(stateMachineArn=resources.state_machine_arn, statusFilter="RUNNING", maxResults=1)[
            "executions"
        ]:
            time.sleep(1.0)  # few polls: each is counted
        _counting(False)
    finally:
        aws.stop()
    return executions


def _describe(executions: int) -> int:
    """Describe `executions` pruned executions in batches (counted); how many."""
    import peer_cpu

    from onceflow.engine import ACCOUNT_ID
    from onceflow.engine.server import EmbeddedAws
    from onceflow.ops.batched_calls import BatchedCalls

    kept = 50
    aws = EmbeddedAws(history_budget=kept).start()
    try:
        sfn = peer_cpu._client("stepfunctions", aws.endpoint_url)
        passes_input_on = {"StartAt": "Pass", "States": {"Pass": {"Type": "Pass", "End": True}}}
        machine = sfn.create_state_machine(
            name="described",
            definition=json.dumps(passes_input_on),
            roleArn=f"arn:aws:iam::{ACCOUNT_ID}:role/described",
        )["stateMachineArn"]
        arns = []
        for index in range(executions + kept + 10):
            name, text = peer_cpu._execution_input(index, "described")
            arns.append(sfn.start_execution(stateMachineArn=machine, name=name, input=text)["executionArn"])
        while sfn.list_executions(stateMachineArn=machine, statusFilter="RUNNING", maxResults=1)["executions"]:
            time.sleep(0.05)
        pruned = arns[:executions]
        batched = BatchedCalls(sfn)
        batched.call("DescribeExecution", [{"executionArn": arn} for arn in arns[executions : executions + 10]])
        _counting(True)
        for start in range(0, executions, DESCRIBE_BATCH):
            batched.call("DescribeExecution", [{"executionArn": arn} for arn in pruned[start : start + DESCRIBE_BATCH]])
        _counting(False)
    finally:
        aws.stop()
    return executions


def _calls(pairs: int) -> int:
    """Make `pairs` pairs of in-process calls (counted); how many pairs."""
    import peer_cpu

    from onceflow.engine.server import EmbeddedAws

    aws = EmbeddedAws().start()
    try:
        dynamodb = peer_cpu._client("dynamodb", aws.endpoint_url)
        sqs = peer_cpu._client("sqs", aws.endpoint_url)
        dynamodb.create_table(
            TableName="counted",
            KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        dynamodb.put_item(TableName="counted", Item={"k": {"S": "1"}})
        queue = sqs.create_queue(QueueName="counted")["QueueUrl"]

        def pair() -> None:
            dynamodb.get_item(TableName="counted", Key={"k": {"S": "1"}})
            sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["All"])

        for _ in range(30):
            pair()
        _counting(True)
        for _ in range(pairs):
            pair()
        _counting(False)
    finally:
        aws.stop()
    return pairs


WORKLOADS = {"pipeline": (_pipeline, 40), "describe": (_describe, 240), "calls": (_calls, 200)}
UNITS = {"pipeline": "pipeline execution", "describe": "batched DescribeExecution", "calls": "pair of in-process calls"}


def count(variant: str, workload: str, executions: int, before_tree: Path | None) -> int:
    """Instructions of one variant's measured part."""
    environment = {**os.environ, "PYTHONUNBUFFERED": "1"}
    environment.pop("ONCEFLOW_SPEEDUPS_OFF", None)
    if variant.startswith("off:"):
        environment["ONCEFLOW_SPEEDUPS_OFF"] = variant[len("off:") :]
    cwd = ROOT
    if variant == "before":
        assert before_tree is not None
        paths = [str(before_tree), str(before_tree / "functions" / "common")]
        environment["PYTHONPATH"] = os.pathsep.join(filter(None, [*paths, environment.get("PYTHONPATH")]))
        cwd = before_tree
    with tempfile.TemporaryDirectory(prefix="onceflow-instructions-") as scratch:
        command = [
            "valgrind",
            "--tool=callgrind",
            "--instr-atstart=no",
            f"--callgrind-out-file={scratch}/callgrind.out",
            sys.executable,
            str(Path(__file__).resolve()),
            "--inner",
            workload,
            "--executions",
            str(executions),
        ]
        done = subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True)
    found = COLLECTED.findall(done.stderr)
    if done.returncode != 0 or not found:
        raise SystemExit(f"{variant}: the counted run failed:\n{done.stdout[-1500:]}\n{done.stderr[-1500:]}")
    return int(found[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workload", choices=tuple(WORKLOADS), default="pipeline")
    parser.add_argument(
        "--executions", type=int, help="executions or pairs of calls counted (pipeline 40, describe 240, calls 200)"
    )
    parser.add_argument(
        "--variants", nargs="+", default=["onceflow", "before"], help="onceflow, before, or off:NAME[,NAME]"
    )
    parser.add_argument("--before", default="main", help="the commit `before` runs (git archive)")
    parser.add_argument("--rounds", type=int, default=1, help="run every variant this many times, interleaved")
    parser.add_argument("--inner", choices=tuple(WORKLOADS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    run, default_count = WORKLOADS[args.inner or args.workload]
    executions = args.executions or default_count
    if args.inner:
        run(executions)
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    print(f"{args.workload}: {executions} counted; this tree at {commit.stdout.strip()}; before = {args.before}")
    counts: dict[str, list[int]] = {variant: [] for variant in args.variants}
    with tempfile.TemporaryDirectory(prefix="onceflow-instructions-tree-") as scratch:
        before_tree = _tree_of(args.before, Path(scratch)) if "before" in args.variants else None
        for round_number in range(args.rounds):
            for variant in args.variants if round_number % 2 == 0 else args.variants[::-1]:
                counts[variant].append(count(variant, args.workload, executions, before_tree))
                print(f"  {variant:<28}{counts[variant][-1] / executions / 1e6:10.2f} M instructions each", flush=True)
    first = args.variants[0]
    lowest = {variant: min(found) / executions for variant, found in counts.items()}
    for variant in args.variants[1:]:
        print(
            f"{first}: {lowest[first] / 1e6:.2f} M instructions per {UNITS[args.workload]} against {variant}'s "
            f"{lowest[variant] / 1e6:.2f} M: {lowest[first] / lowest[variant]:.3f}x"
        )


if __name__ == "__main__":
    main()
