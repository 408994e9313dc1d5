"""The `onceflow` commands through their real entry points on the embedded endpoint."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from botocore.exceptions import BotoCoreError, ClientError
from typer.testing import CliRunner

from onceflow.cli import app
from onceflow.local.embedded import free_port
from onceflow.local.stack import LocalStack, StackError, attach
from onceflow.ops.executions import poll_until
from onceflow.ops.observe import scan

runner = CliRunner()


def _wait_for_stack(endpoint: str, process: subprocess.Popen[str], timeout: float = 60) -> LocalStack:
    def attached() -> LocalStack | None:
        if process.poll() is not None:
            raise AssertionError(f"`onceflow start` exited early: {process.stdout.read() if process.stdout else ''}")
        try:
            return attach(endpoint)
        except (StackError, OSError, ClientError, BotoCoreError):
            return None

    return poll_until(attached, timeout, f"the local stack at {endpoint}", interval=0.2)


@pytest.fixture(scope="module")
def started() -> Iterator[tuple[str, LocalStack]]:
    """`onceflow start` in its own process, as a user runs it."""
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
    process = subprocess.Popen(
        [sys.executable, "-m", "onceflow", "start", "--port", str(port), "--time-scale", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    try:
        yield endpoint, _wait_for_stack(endpoint, process)
    finally:
        process.terminate()
        process.wait(timeout=20)


def _wait_until_sent(stack: LocalStack, count: int, timeout: float = 60) -> list[dict]:
    def all_sent() -> list[dict] | None:
        states = scan(stack.client("dynamodb"), stack.processed_events_table)
        return states if sum(s["status"] == "sent" for s in states) >= count else None

    return poll_until(all_sent, timeout, f"{count} events marked sent", interval=0.2)


def test_start_send_status_trace_redrive(started, tmp_path: Path):
    endpoint, stack = started
    result = runner.invoke(app, ["send", "--endpoint", endpoint, "--count", "5"])
    assert result.exit_code == 0, result.output
    assert "sent 5 messages" in result.output
    states = _wait_until_sent(stack, 5)
    assert len(states) == 5

    poison = tmp_path / "poison.json"
    poison.write_text("not json")
    assert runner.invoke(app, ["send", "--endpoint", endpoint, "--file", str(poison)]).exit_code == 0

    status = runner.invoke(app, ["status", "--endpoint", endpoint], terminal_width=200)
    assert status.exit_code == 0, status.output
    for state in states:
        assert state["event_id"] in status.output
    assert status.output.count(" sent ") >= 5

    def status_shows_the_dead_letter() -> str | None:
        output = runner.invoke(app, ["status", "--endpoint", endpoint], terminal_width=200).output
        return output if "Onceflow.InvalidMessage" in output else None

    assert "Onceflow.InvalidMessage" in poll_until(status_shows_the_dead_letter, 30, "the poison message in status")

    page = tmp_path / "trace.html"
    traced = runner.invoke(app, ["trace", "--endpoint", endpoint, "--out", str(page)])
    assert traced.exit_code == 0, traced.output
    assert "Publish notification" in page.read_text()

    dry = runner.invoke(app, ["redrive", "--endpoint", endpoint, "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "1" in dry.output


def test_status_without_a_running_stack_says_how_to_start_one():
    result = runner.invoke(app, ["status", "--endpoint", f"http://127.0.0.1:{free_port()}"])
    assert result.exit_code != 0


def test_demo_command_passes_and_writes_report_and_trace(tmp_path: Path, embedded_aws):
    # The demo builds its own embedded AWS; the session's one is idle meanwhile.
    result = runner.invoke(
        app,
        ["demo", "--events", "15", "--poison", "2", "--conflicts", "1", "--time-scale", "0", "--out", str(tmp_path)],
        terminal_width=200,
    )
    assert result.exit_code == 0, result.output
    assert result.output.count("PASS") == 3
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["passed"] and report["business_rows"] == 15
    assert (tmp_path / "trace.html").stat().st_size > 10_000
