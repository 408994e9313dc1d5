"""What an on-call engineer reaches for next (issue 30, item 3), through the console script.

One dead letter's body and attributes (`onceflow dead-letters`), locally and with `--aws`; the
region `--aws` uses and where it came from (AWS_REGION first, as the AWS CLI v2 reads it:
https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-envvars.html; botocore's own session
reads only AWS_DEFAULT_REGION and the profile); what to do without credentials; `--version`; the
latest executions' names kept whole in an 80-column terminal.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

from rich.console import Console

from onceflow.engine.server import free_port
from onceflow.ops.counts import EventCounts, ExecutionCounts
from onceflow.ops.redrive import QueueView
from onceflow.ops.status import ExecutionLine, StatusReport
from onceflow.ops.status_view import latest_executions
from tests.support import order

CONSOLE_SCRIPT = Path(sys.executable).with_name("onceflow")


def _run(*args: str, env: dict[str, str | None] | None = None) -> subprocess.CompletedProcess[str]:
    """The installed script as a user runs it: the shell's environment with `env` set (None: unset)."""
    environment = {**os.environ, "COLUMNS": "200", **(env or {})}
    chosen = {name: value for name, value in environment.items() if value is not None}
    return subprocess.run([str(CONSOLE_SCRIPT), *args], capture_output=True, text=True, timeout=120, env=chosen)


def test_dead_letters_lists_them_and_shows_one_in_full_locally_and_with_aws(embedded_aws, stack) -> None:
    from onceflow.local.pipeline import LocalPipeline

    pipeline = LocalPipeline(embedded_aws, stack)
    bad = dict(order("order-poison"))
    bad["amount"] = "not a number"
    pipeline.send([json.dumps(bad), "not json at all"])
    pipeline.process()
    local = ["--endpoint", embedded_aws.endpoint_url, "--stack-name", stack.stack_name]

    listed = _run("dead-letters", *local)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0].startswith("2 dead letters in ")
    ids = [line.split()[0] for line in lines[1:5:2]]
    assert all(len(message_id) == 36 for message_id in ids)  # whole, on a line each
    assert "starter: Onceflow.InvalidMessage  event_id order-poison" in listed.stdout
    assert lines[-1] == "show one: onceflow dead-letters --message-id ID (or --event-id ID)"

    shown = _run("dead-letters", *local, "--event-id", "order-poison")
    assert shown.returncode == 0, shown.stderr
    assert "attribute field" in shown.stdout and "amount" in shown.stdout  # the rule it broke, named
    assert "attribute source" in shown.stdout and "ApproximateReceiveCount" in shown.stdout
    assert '"order_id": "order-poison"' in shown.stdout  # the body, as sent
    again = _run("dead-letters", *local)
    assert again.stdout.startswith("2 dead letters")  # reading moved nothing

    aws_environment = {
        "AWS_ENDPOINT_URL": embedded_aws.endpoint_url,  # as a user's configuration points boto3 at AWS
        "AWS_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_CONFIG_FILE": os.devnull,
    }
    on_aws = _run(
        "dead-letters", "--aws", "--stack-name", stack.stack_name, "--message-id", ids[1], env=aws_environment
    )
    assert on_aws.returncode == 0, on_aws.stderr
    assert f"Dead letter {ids[1]}" in on_aws.stdout

    unknown = _run("dead-letters", *local, "--message-id", "no-such-id")
    assert unknown.returncode == 1 and unknown.stdout == ""
    [line] = unknown.stderr.strip().splitlines()
    assert line.startswith("onceflow dead-letters: --message-id 'no-such-id': none of the 2 dead letters read has it")


def test_aws_uses_aws_region_before_aws_default_region_and_says_where_it_came_from(tmp_path) -> None:
    nothing_there = f"http://127.0.0.1:{free_port()}"
    base = {
        "AWS_ENDPOINT_URL": nothing_there,
        "AWS_CONFIG_FILE": str(tmp_path / "none"),
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
    }
    both = _run("status", "--aws", env={**base, "AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "us-west-2"})
    assert "cannot reach CloudFormation on AWS (eu-west-1, from AWS_REGION)" in both.stderr
    only_default = _run("status", "--aws", env={**base, "AWS_REGION": "", "AWS_DEFAULT_REGION": "us-west-2"})
    assert "cannot reach CloudFormation on AWS (us-west-2, from AWS_DEFAULT_REGION)" in only_default.stderr


def test_aws_without_credentials_says_how_to_provide_them(tmp_path) -> None:
    environment = {
        "AWS_REGION": "us-east-1",
        "AWS_CONFIG_FILE": str(tmp_path / "none"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_ACCESS_KEY_ID": None,
        "AWS_SECRET_ACCESS_KEY": None,
        "AWS_SESSION_TOKEN": None,
        "AWS_PROFILE": None,
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{free_port()}",
    }
    result = _run("status", "--aws", env=environment)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("onceflow status: no AWS credentials found")
    assert "aws configure" in line and "AWS_PROFILE" in line and "AWS_ACCESS_KEY_ID" in line


def test_version() -> None:
    result = _run("--version")
    assert (result.returncode, result.stdout) == (0, f"onceflow {version('onceflow')}\n")


def _report(names: list[str]) -> StatusReport:
    latest = [
        ExecutionLine(
            "2026-12-06T05:12:31.066+00:00", name, "SUCCEEDED", name.rsplit("-", 1)[0], ["Record", "Publish", "Mark"]
        )
        for name in names
    ]
    return StatusReport(
        EventCounts(recorded=len(names), pending=0, exact=True),
        ExecutionCounts(
            started=len(names),
            ended=Counter(SUCCEEDED=len(names)),
            running=0,
            redriven=0,
            since=datetime.now(UTC),
            exact=True,
        ),
        latest,
        0,
        0,
        QueueView(0, 0, [], []),
    )


def test_status_keeps_each_execution_name_on_one_line_at_80_columns() -> None:
    names = [f"order-d62d08-0002{i}-7a51b7af59c016738ead388{i}" for i in range(3)]
    for width in (80, 200):
        console = Console(width=width, record=True, force_terminal=False)
        console.print(latest_executions(_report(names), console.width))
        text = console.export_text()
        for name in names:
            assert any(name in line for line in text.splitlines()), f"{name} broken at {width} columns:\n{text}"
