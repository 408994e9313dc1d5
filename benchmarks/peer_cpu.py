"""The pipeline's own executions on the embedded engine and on a peer, side by side (issue 33).

    .venv/bin/python benchmarks/peer_cpu.py                              # onceflow and ministack, 300 executions
    .venv/bin/python benchmarks/peer_cpu.py --servers onceflow before ministack --before main
    .venv/bin/python benchmarks/peer_cpu.py --executions 300 --rounds 2

Each server runs in its own process on a free port: `onceflow start --no-poll` from this tree
(`onceflow`), the same from another commit (`before`: `git archive REF` unpacked in a scratch folder,
first on PYTHONPATH), and ministack (installed once with pip into `.venv-ministack`, its own venv:
never a dependency of the product). On each, one client thread makes the same resources through the
service APIs (the two tables with the pending index and TTL, the topic with one SQS subscriber, the
dead-letter queue, a role, `statemachine/pipeline.asl.json` with its `${…}` filled in) and then runs
the same executions, a wave of `--wave` at a time (StartExecution each, then ListExecutions of the
running ones until none is left), with inputs built as the starter builds them. The server's CPU
(user + system of its process, from /proc) is read around the executions only: CPU per execution is
what the server spent for each, its requests included; executions/s is per wall second.

Afterwards it checks what each server did (every execution SUCCEEDED, a business row and a `sent`
state record per event, one notification per event on the subscriber's queue with its message
attributes, the history's previousEventId) and prints what it found: a peer that skips fidelity is
cheaper for it. `--rounds 2` runs every server twice, interleaved, every other round in the reverse order (onceflow,
ministack, ministack, onceflow, …: the first of a round is measured slower), and the lower CPU per
execution is the figure (the machine is shared).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config

sys.path.insert(0, str(Path(__file__).resolve().parent))
from long_run import _cpu_seconds, _free_port, interrupt

from onceflow.ops.observe import topic_may_send

ROOT = Path(__file__).resolve().parents[1]
MINISTACK_VENV = ROOT / ".venv-ministack"
MINISTACK_VERSION = "1.5.33"
ASL = ROOT / "statemachine" / "pipeline.asl.json"
ACCOUNT_ID = "000000000000"


@dataclass
class Figures:
    server: str
    executions: int
    seconds: float
    cpu_seconds: float
    checks: dict[str, str]
    rate: float = 0.0  # executions per wall second
    cpu_ms: float = 0.0  # server CPU per execution

    def __post_init__(self) -> None:
        self.rate = self.executions / self.seconds
        self.cpu_ms = self.cpu_seconds / self.executions * 1000


def _ministack_python() -> Path:
    python = MINISTACK_VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(MINISTACK_VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", f"ministack=={MINISTACK_VERSION}"], check=True)
    return python


def _tree_of(ref: str, scratch: Path) -> Path:
    tree = scratch / "tree"
    tree.mkdir()
    archive = subprocess.run(["git", "archive", ref], cwd=ROOT, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return tree


def _command(server: str, port: int, scratch: Path, before: str) -> tuple[list[str], dict[str, str], Path]:
    environment = {**os.environ, "PYTHONUNBUFFERED": "1"}
    environment.pop("ONCEFLOW_SPEEDUPS_OFF", None)
    if server.startswith("off:"):  # this tree with speed-ups switched off
        environment["ONCEFLOW_SPEEDUPS_OFF"] = server[len("off:") :]
    if server == "ministack":
        environment.update(GATEWAY_PORT=str(port), LOG_LEVEL="WARNING")
        return [str(_ministack_python()), "-m", "ministack"], environment, scratch
    start = ["-c", "from onceflow.cli import main; main()", "start", "--no-poll", "--port", str(port)]
    if server == "before":
        tree = _tree_of(before, scratch)
        paths = [str(tree), str(tree / "functions" / "common")]
        environment["PYTHONPATH"] = os.pathsep.join(filter(None, [*paths, environment.get("PYTHONPATH")]))
        return [sys.executable, *start], environment, tree
    return [sys.executable, *start], environment, ROOT


def _wait_ready(server: subprocess.Popen[bytes], log: Path, endpoint: str, name: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    sts = _client("sts", endpoint)
    while True:
        if server.poll() is not None:
            raise SystemExit(f"{name} exited with {server.returncode}:\n{log.read_text()[-4000:]}")
        ready = name == "ministack" or "Then: onceflow send" in log.read_text()
        if ready:
            try:
                sts.get_caller_identity()
                return
            except Exception:
                pass
        if time.monotonic() > deadline:
            raise SystemExit(f"{name} not ready after {timeout} s:\n{log.read_text()[-4000:]}")
        time.sleep(0.3)


def _client(service: str, endpoint: str) -> Any:
    return boto3.client(
        service,
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(retries={"max_attempts": 1}),
    )


@dataclass
class Resources:
    state_machine_arn: str
    processed: str
    business: str
    subscriber_queue_url: str


def _resources(endpoint: str, tag: str) -> Resources:
    """The pipeline's resources, made through the service APIs alike on every server."""
    dynamodb, sns, sqs, iam, sfn = (_client(s, endpoint) for s in ("dynamodb", "sns", "sqs", "iam", "stepfunctions"))
    processed, business = f"processed-{tag}", f"orders-{tag}"
    dynamodb.create_table(
        TableName=processed,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[
            {"AttributeName": name, "AttributeType": "S"} for name in ("event_id", "pending_shard", "pending_since")
        ],
        KeySchema=[{"AttributeName": "event_id", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "pending-since",
                "KeySchema": [
                    {"AttributeName": "pending_shard", "KeyType": "HASH"},
                    {"AttributeName": "pending_since", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["execution_arn", "payload_hash"]},
            }
        ],
    )
    dynamodb.update_time_to_live(TableName=processed, TimeToLiveSpecification={"Enabled": True, "AttributeName": "ttl"})
    dynamodb.create_table(
        TableName=business,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "order_id", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "order_id", "KeyType": "HASH"}],
    )
    topic_arn = sns.create_topic(Name=f"notifications-{tag}")["TopicArn"]
    subscriber_url = sqs.create_queue(QueueName=f"subscriber-{tag}")["QueueUrl"]
    subscriber_arn = sqs.get_queue_attributes(QueueUrl=subscriber_url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    # As on AWS, the queue admits the topic's deliveries only by its policy (the embedded engine
    # enforces it: without one, every notification is refused and the publish costs less).
    sqs.set_queue_attributes(QueueUrl=subscriber_url, Attributes={"Policy": topic_may_send(topic_arn, subscriber_arn)})
    sns.subscribe(TopicArn=topic_arn, Protocol="sqs", Endpoint=subscriber_arn)
    dead_letters_url = sqs.create_queue(QueueName=f"dead-letters-{tag}")["QueueUrl"]
    role_arn = iam.create_role(
        RoleName=f"pipeline-{tag}",
        AssumeRolePolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {"Effect": "Allow", "Principal": {"Service": "states.amazonaws.com"}, "Action": "sts:AssumeRole"}
                ],
            }
        ),
    )["Role"]["Arn"]
    iam.put_role_policy(
        RoleName=f"pipeline-{tag}",
        PolicyName="pipeline",
        PolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {"Effect": "Allow", "Action": ["dynamodb:*", "sns:Publish", "sqs:SendMessage"], "Resource": "*"}
                ],
            }
        ),
    )
    definition = ASL.read_text()
    for name, value in {
        "ProcessedEventsTable": processed,
        "BusinessTable": business,
        "NotificationTopicArn": topic_arn,
        "DeadLetterQueueUrl": dead_letters_url,
    }.items():
        definition = definition.replace("${" + name + "}", value)
    arn = sfn.create_state_machine(name=f"pipeline-{tag}", definition=definition, roleArn=role_arn)["stateMachineArn"]
    return Resources(arn, processed, business, subscriber_url)


def _execution_input(index: int, tag: str) -> tuple[str, str]:
    """(name, input) as the starter makes them for an order (functions/starter/starter/messages.py)."""
    event_id = f"order-{tag}-{index:06d}"
    payload = {"order_id": event_id, "customer_id": f"customer-{index % 17}", "amount": 10 + index % 90}
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    body = json.dumps(payload)
    document = {
        "event_id": event_id,
        "payload_hash": hashlib.sha256(canonical.encode()).hexdigest(),
        "payload": payload,
        "received_at": "2026-01-01T00:00:00.000Z",
        "ttl": 1_800_000_000,
        "pending_shard": str(index % 8),
        "message": {"id": str(uuid.uuid4()), "body": body},
    }
    return f"{event_id}-{index}", json.dumps(document, sort_keys=True, separators=(",", ":"))


def _run_executions(endpoint: str, resources: Resources, count: int, wave: int, tag: str) -> None:
    sfn = _client("stepfunctions", endpoint)
    for start in range(0, count, wave):
        for index in range(start, min(count, start + wave)):
            name, text = _execution_input(index, tag)
            sfn.start_execution(stateMachineArn=resources.state_machine_arn, name=name, input=text)
        deadline = time.monotonic() + 120
        while sfn.list_executions(stateMachineArn=resources.state_machine_arn, statusFilter="RUNNING", maxResults=1)[
            "executions"
        ]:
            if time.monotonic() > deadline:
                raise SystemExit("executions still running after 120 s")
            time.sleep(0.005)


def _count(dynamodb: Any, table: str, **kwargs: Any) -> int:
    return sum(
        page["Count"] for page in dynamodb.get_paginator("scan").paginate(TableName=table, Select="COUNT", **kwargs)
    )


def _checks(endpoint: str, resources: Resources, count: int) -> dict[str, str]:
    """What the server did for the executions, checked the same way on each."""
    sfn, dynamodb, sqs = (_client(s, endpoint) for s in ("stepfunctions", "dynamodb", "sqs"))
    statuses: dict[str, int] = {}
    for page in sfn.get_paginator("list_executions").paginate(stateMachineArn=resources.state_machine_arn):
        for execution in page["executions"]:
            statuses[execution["status"]] = statuses.get(execution["status"], 0) + 1
    sent = _count(
        dynamodb,
        resources.processed,
        FilterExpression="#s = :sent",
        ExpressionAttributeNames={"#s": "status"},
        ExpressionAttributeValues={":sent": {"S": "sent"}},
    )
    rows = _count(dynamodb, resources.business)
    queued = sqs.get_queue_attributes(QueueUrl=resources.subscriber_queue_url, AttributeNames=["All"])["Attributes"]
    notifications = int(queued.get("ApproximateNumberOfMessages", 0))
    message = sqs.receive_message(QueueUrl=resources.subscriber_queue_url, MaxNumberOfMessages=1).get("Messages", [])
    envelope = json.loads(message[0]["Body"]) if message else {}
    attributes = sorted(envelope.get("MessageAttributes", {}))
    first = sfn.list_executions(stateMachineArn=resources.state_machine_arn, maxResults=1)["executions"][0]
    events = sfn.get_execution_history(executionArn=first["executionArn"], maxResults=1000)["events"]
    linked = sum(1 for e in events[1:] if "previousEventId" in e)
    return {
        "executions": ", ".join(f"{n} {s}" for s, n in sorted(statuses.items())),
        "sent records": f"{sent}/{count}",
        "business rows": f"{rows}/{count}",
        "notifications": f"{notifications}/{count}",
        "message attributes": ",".join(attributes) or "none",
        "history": f"{len(events)} events, {linked} with previousEventId",
    }


def _profiled(pid: int, output: Path, rate: int) -> subprocess.Popen[bytes]:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from profile_engine import _attach_py_spy

    return _attach_py_spy(pid, output, rate)


def measure(
    server: str, count: int, wave: int, before: str, profile: Path | None = None, profile_rate: int = 250
) -> Figures:
    port = _free_port()
    endpoint = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix=f"onceflow-peer-{server}-") as scratch_name:
        scratch = Path(scratch_name)
        command, environment, cwd = _command(server, port, scratch, before)
        log = scratch / "server.log"
        with log.open("w") as out:
            process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=cwd, env=environment)
        try:
            _wait_ready(process, log, endpoint, server)
            tag = uuid.uuid4().hex[:8]
            resources = _resources(endpoint, tag)
            _run_executions(endpoint, resources, 5, 5, f"warm{tag}")  # first-use costs (imports, caches) left out
            time.sleep(0.5)
            recorder = _profiled(process.pid, profile, profile_rate) if profile is not None else None
            cpu, began = _cpu_seconds(process.pid), time.monotonic()
            _run_executions(endpoint, resources, count, wave, tag)
            seconds, cpu = time.monotonic() - began, _cpu_seconds(process.pid) - cpu
            if recorder is not None:
                recorder.send_signal(signal.SIGINT)
                recorder.wait(timeout=120)
            checks = _checks(endpoint, resources, count + 5)
        finally:
            interrupt(process, 30)
    return Figures(server, count, seconds, cpu, checks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--executions", type=int, default=300)
    parser.add_argument("--wave", type=int, default=10, help="executions started before waiting for them")
    parser.add_argument(
        "--servers",
        nargs="+",
        default=["onceflow", "ministack"],
        help="onceflow, before, ministack, or off:NAME[,NAME] (this tree with those speed-ups switched off)",
    )
    parser.add_argument("--before", default="main", help="the commit `before` runs (git archive)")
    parser.add_argument("--rounds", type=int, default=1, help="run every server this many times, interleaved")
    parser.add_argument(
        "--profile", type=Path, help="py-spy the first server's executions into this raw file and summarise it"
    )
    parser.add_argument("--profile-rate", type=int, default=250, help="py-spy's samples per second")
    args = parser.parse_args()
    if args.profile is not None:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from profile_engine import summarise

        figures = measure(args.servers[0], args.executions, args.wave, args.before, args.profile, args.profile_rate)
        print(f"{figures.server}: {figures.cpu_ms:.2f} ms of server CPU per execution (under the profiler)")
        summarise(args.profile, 40)
        return
    load = Path("/proc/loadavg").read_text().split()[:3]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    print(f"load average at start: {' '.join(load)}; commit {commit.stdout.strip()}; before = {args.before}")
    best: dict[str, Figures] = {}
    width = max(10, *(len(server) + 2 for server in args.servers))
    print(f"{'server':<{width}}{'execs':>6}{'wall s':>8}{'execs/s':>9}{'server CPU ms/exec':>20}")
    for round_number in range(args.rounds):
        # every other round in the reverse order: the first server of a round came out slower than the
        # same code measured second (9.63 against 8.00 ms, then 8.33 against 8.40 with the order swapped)
        for server in args.servers if round_number % 2 == 0 else args.servers[::-1]:
            figures = measure(server, args.executions, args.wave, args.before)
            print(
                f"{server:<{width}}{figures.executions:>6}{figures.seconds:>8.1f}{figures.rate:>9.1f}{figures.cpu_ms:>20.2f}",
                flush=True,
            )
            if server not in best or figures.cpu_ms < best[server].cpu_ms:
                best[server] = figures
    print(f"load average at end: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    print("\nwhat each server did (the executions of the measured round and the warm-up's 5):")
    for server, figures in best.items():
        print(f"  {server}: " + "; ".join(f"{k} {v}" for k, v in figures.checks.items()))
    if "onceflow" in best:
        ours = best["onceflow"]
        for other in best:
            if other != "onceflow":
                print(
                    f"onceflow's server CPU per execution is {ours.cpu_ms / best[other].cpu_ms:.2f}x {other}'s "
                    f"({ours.cpu_ms:.2f} against {best[other].cpu_ms:.2f} ms); its rate {ours.rate / best[other].rate:.2f}x"
                )


if __name__ == "__main__":
    main()
