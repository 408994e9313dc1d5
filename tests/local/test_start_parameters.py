"""`onceflow start --parameter KEY=VALUE` runs the setups a team deploys, as its own process (the
console script): a FIFO source with the subscriber (fed from its own queue, as Lambda's event source
mapping feeds it on AWS), and EXPRESS. `onceflow send` feeds each, and the banner's AWS CLI example
fits the queue type (a FIFO queue refuses a message without MessageGroupId:
https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from onceflow.engine.server import free_port
from onceflow.local.template import PROJECT_ROOT
from onceflow.ops.executions import poll_until
from onceflow.ops.observe import scan
from onceflow.ops.stack import StackResources, Target, find_stack

CONSOLE_SCRIPT = Path(sys.executable).with_name("onceflow")
BANNER_END = "Then: onceflow send"


def _console(*args: str) -> str:
    done = subprocess.run(
        [str(CONSOLE_SCRIPT), *args], capture_output=True, text=True, timeout=120, cwd=PROJECT_ROOT, env=_environment()
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _environment() -> dict[str, str]:
    return {**os.environ, "COLUMNS": "250"}


class Started:
    def __init__(self, *parameters: str):
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        arguments = [a for p in parameters for a in ("--parameter", p)]
        self.process = subprocess.Popen(
            [str(CONSOLE_SCRIPT), "start", "--port", str(self.port), "--time-scale", "0", *arguments],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=PROJECT_ROOT,
            env=_environment(),
        )
        self.banner = self._read_banner()
        self.stack: StackResources = find_stack(Target(self.endpoint), "onceflow-local")

    def _read_banner(self, timeout: float = 120) -> str:
        lines: list[str] = []
        deadline = time.monotonic() + timeout
        assert self.process.stdout is not None
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                raise AssertionError("`onceflow start` ended early:\n" + "".join(lines))
            lines.append(line)
            if line.startswith(BANNER_END):
                return "".join(lines)
        raise AssertionError("no banner from `onceflow start`:\n" + "".join(lines))

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=20)


@pytest.fixture(scope="module")
def fifo_with_subscriber() -> Iterator[Started]:
    started = Started("SourceQueueType=FIFO", "DeploySubscriber=true")
    yield started
    started.stop()


def _sent_ids(output: str) -> set[str]:
    found = re.search(r"sent (\d+) messages: (\d+) events \((\w+)-(\w+)-00000…\)", output)
    assert found, output
    prefix, run_id = found.group(3), found.group(4)
    return {f"{prefix}-{run_id}-{i:05d}" for i in range(int(found.group(2)))}


def _all_sent(stack: StackResources, event_ids: set[str]) -> None:
    def done() -> bool:
        states = scan(stack.client("dynamodb"), stack.processed_events_table)
        return {s["event_id"] for s in states if s["status"] == "sent"} >= event_ids

    poll_until(done, 60, f"{len(event_ids)} events marked sent", interval=0.2)


def test_a_fifo_source_with_the_subscriber_is_deployed_fed_and_subscribed(fifo_with_subscriber: Started) -> None:
    started = fifo_with_subscriber
    assert "(deployed with DeploySubscriber=true SourceQueueType=FIFO)" in started.banner
    assert started.stack.source_queue_url.endswith(".fifo")

    event_ids = _sent_ids(_console("send", "--endpoint", started.endpoint, "--count", "12", "--groups", "3"))
    _all_sent(started.stack, event_ids)
    markers_table = started.stack.outputs["SubscriberMarkersTableName"]

    def applied() -> set[str]:
        return {m["event_id"] for m in scan(started.stack.client("dynamodb"), markers_table)}

    poll_until(lambda: applied() >= event_ids, 60, "the subscriber applied every notification", interval=0.2)
    status = _console("status", "--endpoint", started.endpoint)  # the module's other test may have sent one more
    recorded = re.search(r"events\s+│ (\d+) recorded: (\d+) sent", status)
    assert recorded and int(recorded.group(1)) == int(recorded.group(2)) >= 12, status
    assert re.search(r"subscriber\s+│ 0 notifications waiting", status), status


def test_the_banners_aws_cli_example_sends_to_a_fifo_queue(fifo_with_subscriber: Started) -> None:
    """The example line, run as the AWS CLI would send it, with boto3: a FIFO queue takes it."""
    (line,) = [line.strip() for line in fifo_with_subscriber.banner.splitlines() if " sqs send-message " in line]
    words = shlex.split(line)
    arguments = dict(zip(words[5::2], words[6::2], strict=True))
    assert set(arguments) == {"--queue-url", "--message-body", "--message-group-id", "--message-deduplication-id"}
    sqs = fifo_with_subscriber.stack.client("sqs")
    response = sqs.send_message(
        QueueUrl=arguments["--queue-url"],
        MessageBody=arguments["--message-body"],
        MessageGroupId=arguments["--message-group-id"],
        MessageDeduplicationId=arguments["--message-deduplication-id"],
    )
    assert response["MessageId"]
    _all_sent(fifo_with_subscriber.stack, {arguments["--message-group-id"]})


def test_express_is_deployed_and_its_events_finish() -> None:
    started = Started("StateMachineType=EXPRESS")
    try:
        assert "(deployed with StateMachineType=EXPRESS)" in started.banner
        assert " --message-group-id " not in started.banner  # a standard queue takes none
        event_ids = _sent_ids(_console("send", "--endpoint", started.endpoint, "--count", "8"))
        _all_sent(started.stack, event_ids)
        status = _console("status", "--endpoint", started.endpoint)
        assert "EXPRESS: running executions are not listed" in status
        assert re.search(r"events\s+│ 8 recorded: 8 sent", status), status
    finally:
        started.stop()
