"""The `onceflow` commands through their entry points: `onceflow start` as its own process (the real
console script), the client commands through typer's runner and as the console script."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from onceflow.cli import app
from onceflow.engine.server import free_port
from onceflow.local.stack import LocalStack
from onceflow.ops.executions import poll_until
from onceflow.ops.logs import follow, read_lines
from onceflow.ops.observe import drain, scan
from onceflow.ops.stack import StackNotFound, StackResources, Target, find_stack

runner = CliRunner()
CONSOLE_SCRIPT = Path(sys.executable).with_name("onceflow")
# What a user's shell might carry; the local commands must not use any of it.
REAL_LOOKING_ENVIRONMENT = {"AWS_PROFILE": "prod-admin", "AWS_ACCESS_KEY_ID": "AKIAREALLOOKING"}
# `onceflow start` handles the queue, the schedule and the logs once per round of this length: looking
# more often finds nothing new and only costs `start` the reads.
START_ROUND = 0.2


@dataclass
class Started:
    endpoint: str
    stack: StackResources
    banner: str


def _read_banner(process: subprocess.Popen[str], until: str = "Then: onceflow send", timeout: float = 120) -> str:
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    assert process.stdout is not None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            raise AssertionError("`onceflow start` ended early:\n" + "".join(lines))
        lines.append(line)
        if line.startswith(until):
            return "".join(lines)
    raise AssertionError("no banner from `onceflow start`:\n" + "".join(lines))


@pytest.fixture(scope="module")
def started() -> Iterator[Started]:
    """`onceflow start` in its own process, as a user runs it (the installed console script)."""
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    environment = {**os.environ, **REAL_LOOKING_ENVIRONMENT, "COLUMNS": "200"}
    process = subprocess.Popen(
        [str(CONSOLE_SCRIPT), "start", "--port", str(port), "--time-scale", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=environment,
    )
    try:
        banner = _read_banner(process)
        yield Started(endpoint, find_stack(Target(endpoint), "onceflow-local"), banner)
    finally:
        process.terminate()
        process.wait(timeout=20)


@pytest.fixture(autouse=True)
def _environment_restored(monkeypatch) -> None:
    """`demo` (in this process through the runner) makes the process wholly local; undo it after."""
    for name in (
        "AWS_PROFILE",
        "AWS_DEFAULT_PROFILE",
        "AWS_SESSION_TOKEN",
        "AWS_SECURITY_TOKEN",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_CONFIG_FILE",
        "AWS_SHARED_CREDENTIALS_FILE",
    ):
        if name in os.environ:
            monkeypatch.setenv(name, os.environ[name])
        else:
            monkeypatch.delenv(name, raising=False)


def _invoke(*args: str) -> str:
    result = runner.invoke(app, list(args), env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    return result.output


def _wait_until_sent(stack: StackResources, event_ids: set[str], timeout: float = 60) -> list[dict]:
    def all_sent() -> list[dict] | None:
        states = [s for s in scan(stack.client("dynamodb"), stack.processed_events_table) if s["event_id"] in event_ids]
        return states if len(states) == len(event_ids) and all(s["status"] == "sent" for s in states) else None

    return poll_until(all_sent, timeout, f"{len(event_ids)} events marked sent", interval=START_ROUND)


def _sent_ids(output: str) -> tuple[str, set[str]]:
    run_id = re.search(r"--run-id (\w+)", output)
    assert run_id, output
    count = int(re.search(r"(\d+) events? \(", output).group(1))  # "1 event (", "3 events ("
    return run_id.group(1), {f"order-{run_id.group(1)}-{i:05d}" for i in range(count)}


def test_start_prints_the_stack_name_its_outputs_and_what_to_paste(started: Started) -> None:
    banner = started.banner
    assert "Stack onceflow-local is up at " + started.endpoint in banner
    for key in ("SourceQueueUrl", "DeadLetterQueueUrl", "StateMachineArn", "StarterLogGroupName"):
        assert re.search(rf"^  {key} +\S", banner, re.MULTILINE), key
    export = next(line for line in banner.splitlines() if line.strip().startswith("export "))
    for pair in (
        f"AWS_ENDPOINT_URL={started.endpoint}",
        "AWS_DEFAULT_REGION=us-east-1",
        "AWS_ACCESS_KEY_ID=testing",
        "AWS_SECRET_ACCESS_KEY=testing",
        f"ONCEFLOW_ENDPOINT={started.endpoint}",
    ):
        assert pair in export.split(), pair
    assert "unset AWS_PROFILE AWS_SESSION_TOKEN" in banner
    assert f"aws --endpoint-url {started.endpoint} sqs send-message --queue-url " in banner
    assert "in memory" in banner


def _source_queue_drained(started: Started) -> bool:
    attributes = started.stack.client("sqs").get_queue_attributes(
        QueueUrl=started.stack.source_queue_url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return attributes == {"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0"}


def test_send_uses_fresh_order_ids_each_run_and_reuses_them_on_request(started: Started) -> None:
    first_run, first = _sent_ids(_invoke("send", "--endpoint", started.endpoint, "--count", "3"))
    second_run, second = _sent_ids(_invoke("send", "--endpoint", started.endpoint, "--count", "3"))
    assert first_run != second_run and not first & second
    recorded = {s["event_id"]: s for s in _wait_until_sent(started.stack, first | second)}

    again = _invoke("send", "--endpoint", started.endpoint, "--count", "3", "--run-id", first_run)
    assert _sent_ids(again)[1] == first

    poll_until(lambda: _source_queue_drained(started), 60, "the resent orders handled", interval=START_ROUND)
    # the same orders with the same payloads: already sent, not a payload conflict
    after = {s["event_id"]: s for s in _wait_until_sent(started.stack, first)}
    assert {i: after[i]["payload_hash"] for i in first} == {i: recorded[i]["payload_hash"] for i in first}
    assert "PayloadConflict" not in _invoke("status", "--endpoint", started.endpoint)


@pytest.fixture
def started_with_an_empty_dlq(started: Started) -> Started:
    """The module's `onceflow start` with its dead-letter queue emptied: other tests of the module
    leave their poison messages there. What they sent is handled first, so none is still on its way."""
    poll_until(lambda: _source_queue_drained(started), 60, "earlier tests' messages handled", interval=START_ROUND)
    drain(started.stack.client("sqs"), started.stack.dead_letter_queue_url)
    return started


def test_status_counts_lists_executions_in_time_order_with_paths_and_reads_the_dlq(
    started_with_an_empty_dlq: Started, tmp_path: Path
):
    started = started_with_an_empty_dlq
    status = _invoke("status", "--endpoint", started.endpoint, "--last", "100")
    assert "dead-letter queue │ empty" in status
    _, ids = _sent_ids(_invoke("send", "--endpoint", started.endpoint, "--count", "2"))
    _wait_until_sent(started.stack, ids)
    poison = tmp_path / "poison.json"
    poison.write_text("not json")
    _invoke("send", "--endpoint", started.endpoint, "--file", str(poison))

    def shows_the_dead_letter() -> str | None:
        output = _invoke("status", "--endpoint", started.endpoint, "--last", "100")
        return output if "starter: Onceflow.InvalidMessage" in output else None

    status = poll_until(shows_the_dead_letter, 30, "the poison message in status", interval=START_ROUND)
    assert re.search(r"events +│ \d+ recorded: \d+ sent", status)
    assert "dead-letter queue │ 1 waiting" in status
    rows = [line for line in status.splitlines() if "order-" in line and "SUCCEEDED" in line]
    started_times = [line.split("│")[1].strip() for line in rows]
    assert started_times == sorted(started_times) and len(rows) >= 2
    assert any("Record event and business item → Publish notification → Mark as sent" in row for row in rows)


def test_logs_are_in_cloudwatch_logs_and_filter_by_event_id(started: Started) -> None:
    _, ids = _sent_ids(_invoke("send", "--endpoint", started.endpoint, "--count", "3"))
    _wait_until_sent(started.stack, ids)
    wanted = sorted(ids)[1]
    group = started.stack.outputs["StarterLogGroupName"]
    logs = started.stack.client("logs")
    poll_until(lambda: read_lines(logs, group, wanted), 30, f"log lines of {wanted}", interval=START_ROUND)

    lines = [
        json.loads(line) for line in _invoke("logs", "--endpoint", started.endpoint, "--event-id", wanted).splitlines()
    ]
    assert lines and {line["event_id"] for line in lines} == {wanted}
    assert "Execution started" in {line["message"] for line in lines}
    # as CloudWatch Logs holds them: the stream named as Lambda names it, every record's line there
    streams = logs.describe_log_streams(logGroupName=group)["logStreams"]
    assert all(re.fullmatch(r"\d{4}/\d\d/\d\d/\[\$LATEST\][0-9a-f]{32}", s["logStreamName"]) for s in streams)
    nothing = runner.invoke(app, ["logs", "--endpoint", started.endpoint, "--event-id", "order-that-never-was"])
    assert nothing.exit_code == 0 and nothing.output.strip() == (
        f"no log lines in {group} for event_id order-that-never-was yet"
    )
    everything = _invoke("logs", "--endpoint", started.endpoint)
    assert all(any(f'"event_id":"{event_id}"' in line for line in everything.splitlines()) for event_id in ids)


def test_each_function_logs_to_its_own_log_group(started: Started) -> None:
    """The starter and the reconciler run in one process and share a Powertools logging handler;
    their lines still land in their own log groups, as each Lambda function's do on AWS."""
    _, ids = _sent_ids(_invoke("send", "--endpoint", started.endpoint, "--count", "2"))
    _wait_until_sent(started.stack, ids)
    assert set(started.stack.log_groups) >= {"starter", "reconciler"}

    def reconciler_lines() -> list[dict] | None:
        output = _invoke("logs", "--endpoint", started.endpoint, "--function", "reconciler")
        return [json.loads(line) for line in output.splitlines() if line.startswith("{")] or None

    reconciler = poll_until(reconciler_lines, 30, "the reconciler's log lines", interval=START_ROUND)
    starter = [json.loads(line) for line in _invoke("logs", "--endpoint", started.endpoint).splitlines()]
    function = started.stack.outputs
    assert {line["function_name"] for line in reconciler if "function_name" in line} == {
        function["ReconcilerFunctionName"]
    }
    assert {line["function_name"] for line in starter if "function_name" in line} == {function["StarterFunctionName"]}


def test_following_the_logs_yields_each_new_line_once(started: Started) -> None:
    logs = started.stack.client("logs")
    group = started.stack.outputs["StarterLogGroupName"]
    rounds: list[int] = []

    def keep_going() -> bool:
        rounds.append(1)
        if len(rounds) == 1:  # between the first and second read, more orders arrive
            _, ids = _sent_ids(_invoke("send", "--endpoint", started.endpoint, "--count", "2"))
            _wait_until_sent(started.stack, ids)
            poll_until(
                lambda: all(read_lines(logs, group, i) for i in ids),
                30,
                "the new orders' log lines",
                interval=START_ROUND,
            )
        return len(rounds) < 3

    followed = list(follow(logs, group, sleep=lambda _: None, keep_going=keep_going))
    keys = [(line.timestamp, line.message) for line in followed]
    assert len(keys) == len(set(keys))
    assert len(followed) == len(read_lines(logs, group))


def test_trace_writes_the_page_and_redrive_skips_the_errors_named(started: Started, tmp_path: Path) -> None:
    page = tmp_path / "trace.html"
    assert "trace of " in _invoke("trace", "--endpoint", started.endpoint, "--out", str(page))
    assert "Publish notification" in page.read_text()
    poison = tmp_path / "poison.json"
    poison.write_text("still not json")
    _invoke("send", "--endpoint", started.endpoint, "--file", str(poison))
    poll_until(
        lambda: "Onceflow.InvalidMessage" in _invoke("status", "--endpoint", started.endpoint),
        30,
        "a dead letter",
        interval=START_ROUND,
    )

    kept = _invoke("redrive", "--endpoint", started.endpoint, "--skip-error", "Onceflow.InvalidMessage")
    assert re.search(r"moved 0, skipped [1-9]", kept) and "Onceflow.InvalidMessage is not redriven" in kept
    assert "would move" in _invoke("redrive", "--endpoint", started.endpoint, "--dry-run")


MISTAKES = [
    (["redrive", "--limit", "-1"], "--limit", "-1: must be 0 or more"),
    (["send", "--count", "-1"], "--count", "-1: must be 0 or more"),
    (["send", "--duplicates", "2"], "--duplicates", "2.0: a share of the messages, at least 0 and below 1"),
    (["send", "--file", "/missing"], "--file", "/missing"),
    (["demo", "--events", "0"], "--events", "0: must be 1 or more"),
]


@pytest.mark.parametrize(("args", "option", "says"), MISTAKES, ids=[" ".join(m[0]) for m in MISTAKES])
def test_a_mistake_gets_one_line_naming_the_value_and_what_is_allowed(args, option, says) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith(f"onceflow {args[0]}: ") and option in lines[0] and says in lines[0]


def test_an_execution_that_does_not_exist_is_named(started: Started, tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["trace", "--endpoint", started.endpoint, "--execution", "nope", "--out", str(tmp_path / "t.html")]
    )
    assert result.exit_code == 2
    [line] = result.output.strip().splitlines()
    assert "--execution" in line and "'nope': no such execution among the" in line


@pytest.mark.parametrize("command", ["send", "status", "trace", "redrive", "logs"])
def test_client_commands_without_a_running_start_say_how_to_start_one(command: str) -> None:
    """The installed console script, as a user types it: one line on stderr, exit 1, no traceback."""
    endpoint = f"http://127.0.0.1:{free_port()}"
    result = subprocess.run(
        [str(CONSOLE_SCRIPT), command, "--endpoint", endpoint],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **REAL_LOOKING_ENVIRONMENT},
    )
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.strip() == (
        f"onceflow {command}: nothing answers at {endpoint}: run `onceflow start` in another terminal "
        "(or pass --endpoint / set ONCEFLOW_ENDPOINT to where it runs)"
    )


def test_with_aws_the_commands_use_the_default_credential_chain(started: Started, monkeypatch) -> None:
    """`--aws --stack-name NAME`: boto3's own configuration decides where to go; pointed here at the
    local endpoint through AWS_ENDPOINT_URL, as a user of a deployed stack would point at AWS."""
    for name, value in {
        "AWS_ENDPOINT_URL": started.endpoint,
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    output = _invoke("status", "--aws", "--stack-name", "onceflow-local", "--last", "0")
    assert "Stack onceflow-local on AWS (us-east-1, from " in output  # the region, and where it came from
    result = runner.invoke(app, ["status", "--aws", "--stack-name", "no-such-stack"])
    assert result.exit_code == 1 and "stack 'no-such-stack' not found on AWS (us-east-1, from " in result.output


def test_start_on_a_port_in_use_says_so(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [str(CONSOLE_SCRIPT), "start", "--port", str(port)], capture_output=True, text=True, timeout=120
        )
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"onceflow start: --port {port}: cannot listen there")


def test_a_local_endpoint_never_uses_the_users_credentials(monkeypatch) -> None:
    for name, value in REAL_LOOKING_ENVIRONMENT.items():
        monkeypatch.setenv(name, value)
    credentials = Target("http://127.0.0.1:1").client("sqs")._request_signer._credentials
    assert (credentials.access_key, credentials.secret_key) == ("testing", "testing")
    with pytest.raises(StackNotFound, match=re.escape("nothing answers at http://127.0.0.1:1")):
        find_stack(Target("http://127.0.0.1:1"), "onceflow-local")


@pytest.mark.parametrize(
    "args",
    [["send", "--count", "2"], ["status"], ["trace", "--out", "{tmp}/t.html"], ["redrive", "--dry-run"], ["logs"]],
)
def test_client_commands_import_botocore_but_neither_boto3_moto_the_translator_nor_powertools(
    started: Started, args: list[str], tmp_path: Path
) -> None:
    """What keeps them quick (boto3 only adds its resource layer: onceflow/ops/stack.py); their CPU
    is measured in benchmarks/cli_cpu.py."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "onceflow", *[a.format(tmp=tmp_path) for a in args]],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "ONCEFLOW_ENDPOINT": started.endpoint},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    imported = {line.split("|")[-1].strip().split(".")[0] for line in result.stderr.splitlines() if "|" in line}
    assert "botocore" in imported
    assert not imported & {"boto3", "moto", "samtranslator", "aws_lambda_powertools"}


def test_demo_command_passes_and_writes_report_and_trace(tmp_path: Path, embedded_aws):
    # The demo builds its own embedded AWS; the session's one is idle meanwhile.
    result = runner.invoke(
        app,
        ["demo", "--events", "15", "--poison", "2", "--conflicts", "1", "--time-scale", "0", "--out", str(tmp_path)],
        terminal_width=200,
    )
    assert result.exit_code == 0, result.output
    assert result.output.count("PASS") == 4  # R1–R3 and R4 (the example subscriber is subscribed)
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["passed"] and report["business_rows"] == 15
    assert (tmp_path / "trace.html").stat().st_size > 10_000


def test_demo_mode_reaches_the_deployed_stack(tmp_path: Path, embedded_aws):
    """EXPRESS is deployed with the template's StateMachineType; the demo refuses it (one line) only
    while the template does not tell the starter the type."""
    args = ["demo", "--mode", "express", "--events", "6", "--poison", "1", "--conflicts", "1", "--time-scale", "0"]
    result = runner.invoke(app, [*args, "--out", str(tmp_path)], env={"COLUMNS": "200"})
    if result.exit_code == 1 and not (tmp_path / "report.json").exists():
        assert result.output.strip().splitlines()[-1].startswith("onceflow demo: --mode EXPRESS: ")
        return
    assert result.exit_code == 0, result.output
    assert result.output.count("PASS") == 4 and "EXPRESS: executions are not listed" in result.output
    assert json.loads((tmp_path / "report.json").read_text())["mode"] == "EXPRESS"


def _console(
    *args: str, env: dict[str, str | None] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    """The installed console script, as a user types it: the shell's environment with `env` set
    (None: unset)."""
    environment = {**os.environ, "COLUMNS": "200", **(env or {})}
    return subprocess.run(
        [str(CONSOLE_SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={name: value for name, value in environment.items() if value is not None},
    )


def _one_line(result: subprocess.CompletedProcess, code: int) -> str:
    """The command failed with `code`, saying so on one line of stderr, no traceback."""
    assert result.returncode == code, result.stdout + result.stderr
    [line] = result.stderr.strip().splitlines()
    return line


@pytest.mark.parametrize(
    ("args", "env", "named"),
    [
        (["status", "--endpoint", "127.0.0.1:4747"], {}, "'--endpoint'"),
        (["send"], {"ONCEFLOW_ENDPOINT": "localhost:4747"}, "ONCEFLOW_ENDPOINT"),
    ],
    ids=["flag", "environment"],
)
def test_an_endpoint_without_its_scheme_is_named_with_the_url_to_give(args, env, named) -> None:
    line = _one_line(_console(*args, env=env), 2)
    value = args[-1] if len(args) > 1 else env["ONCEFLOW_ENDPOINT"]
    assert line == (
        f"onceflow {args[0]}: Invalid value for {named}: {value!r}: an http:// or https:// URL with a host, "
        f"e.g. http://{value}"
    )


@pytest.mark.parametrize("region", [None, ""], ids=["unset", "empty"])
def test_status_on_aws_with_no_region_configured_says_how_to_set_one(tmp_path: Path, region: str | None) -> None:
    """An empty AWS_REGION is no region either (botocore would build `cloudformation..amazonaws.com`)."""
    environment = {"AWS_CONFIG_FILE": str(tmp_path / "none"), "AWS_REGION": region, "AWS_DEFAULT_REGION": region}
    line = _one_line(_console("status", "--aws", env=environment), 1)
    assert line == (
        "onceflow status: no AWS region configured: export AWS_REGION=us-east-1 (or AWS_DEFAULT_REGION), or set "
        "one in your AWS profile: aws configure set region us-east-1"
    )


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"", "the file is empty (SQS refuses an empty body)"),
        (b"x" * 262_145, "262,145 bytes, more than SQS's 262,144 per message"),
        (b"\xff\xfe", "not UTF-8 text (an SQS body is text)"),
    ],
    ids=["empty", "too-large", "not-text"],
)
def test_send_refuses_a_file_sqs_would_refuse_before_looking_for_the_stack(tmp_path: Path, content, says) -> None:
    body = tmp_path / "body.json"
    body.write_bytes(content)
    line = _one_line(_console("send", "--file", str(body), "--endpoint", "http://127.0.0.1:1"), 2)
    assert line == f"onceflow send: Invalid value for '--file': {body}: {says}"


def test_a_stack_name_that_is_not_there_is_told_with_the_stacks_that_are(started: Started) -> None:
    line = _one_line(_console("status", "--endpoint", started.endpoint, "--stack-name", "nope"), 1)
    assert line == (
        f"onceflow status: no stack 'nope' at {started.endpoint}: it has onceflow-local "
        "(pass --stack-name or set ONCEFLOW_STACK_NAME)"
    )


class VanishingEndpoint:
    """A TCP relay to `onceflow start` that goes away after relaying `requests` HTTP requests: it
    closes its listener and every connection, as `onceflow start` stopped (Ctrl-C) mid-command does."""

    def __init__(self, target: str, requests: int):
        import socket
        import threading

        self._target = ("127.0.0.1", int(target.rsplit(":", 1)[1]))
        self._left = requests
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.endpoint = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self.gone = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import socket
        import threading

        while not self.gone.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self._target)
            with self._lock:
                self._sockets += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, False), daemon=True).start()

    def _pump(self, source, sink, requests: bool) -> None:
        while True:
            try:
                data = source.recv(65536)
            except OSError:
                return
            if not data:
                return
            if requests and data.startswith((b"POST ", b"GET ")):
                with self._lock:
                    self._left -= 1
                    if self._left < 0:
                        self.close()
                        return
            try:
                sink.sendall(data)
            except OSError:
                return

    def close(self) -> None:
        self.gone.set()
        self._listener.close()
        for connection in self._sockets:
            connection.close()


def test_send_with_start_stopped_midway_says_how_many_were_sent(started: Started) -> None:
    """DescribeStacks and two batches of ten reach `onceflow start`; then it is gone."""
    relay = VanishingEndpoint(started.endpoint, requests=3)
    try:
        line = _one_line(_console("send", "--count", "3000", "--endpoint", relay.endpoint), 1)
    finally:
        relay.close()
    assert line.startswith(
        "onceflow send: sent 20 of 3000 messages (maybe the next 10 too), then the endpoint stopped answering "
    )
    assert line.endswith("was `onceflow start` stopped, or the network lost?")


def test_following_logs_with_start_stopped_ends_with_one_line(started: Started) -> None:
    """DescribeStacks, ListTagsLogGroup (what the log budget dropped) and the first FilterLogEvents
    reach `onceflow start`; the next read finds it gone."""
    _, ids = _sent_ids(_invoke("send", "--endpoint", started.endpoint, "--count", "1"))
    _wait_until_sent(started.stack, ids)
    relay = VanishingEndpoint(started.endpoint, requests=3)
    try:
        result = _console("logs", "--follow", "--endpoint", relay.endpoint)
    finally:
        relay.close()
    line = _one_line(result, 1)
    assert relay.gone.is_set() and result.stdout.strip(), "lines were followed before it went away"
    assert line.startswith("onceflow logs: the endpoint stopped answering (")


def test_trace_by_default_leaves_the_demos_page_alone(started: Started, tmp_path: Path) -> None:
    demo_page = tmp_path / "reports" / "trace.html"
    demo_page.parent.mkdir()
    demo_page.write_text("the demo's page")
    result = _console("trace", "--endpoint", started.endpoint, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    written = tmp_path / "reports" / "onceflow-local-trace.html"
    assert result.stdout.strip().endswith(f"written to {written.relative_to(tmp_path)}")
    assert demo_page.read_text() == "the demo's page" and "Publish notification" in written.read_text()


def test_redrive_refuses_a_skip_error_nothing_has_and_moves_nothing(started: Started, tmp_path: Path) -> None:
    poison = tmp_path / "poison.json"
    poison.write_text("never json")
    _invoke("send", "--endpoint", started.endpoint, "--file", str(poison))
    poll_until(
        lambda: "Onceflow.InvalidMessage" in _invoke("status", "--endpoint", started.endpoint),
        30,
        "a dead letter",
        interval=START_ROUND,
    )
    line = _one_line(_console("redrive", "--endpoint", started.endpoint, "--skip-error", "NotAnError"), 2)
    assert line.startswith(
        "onceflow redrive: Invalid value for '--skip-error': 'NotAnError': no dead letter has this error and "
        "the pipeline writes none such (the queue's: "
    )
    assert "Onceflow.InvalidMessage" in line and line.endswith("); nothing was moved")
    still = _invoke("redrive", "--endpoint", started.endpoint, "--dry-run", "--skip-error", "Onceflow.PayloadConflict")
    assert re.search(r"would move [1-9]", still), "a pipeline error absent from the queue is accepted"


@pytest.mark.embedded_only(
    reason="the CLI finds the stack through CloudFormation; an external endpoint's stack has none"
)
@pytest.mark.parametrize("mode", ["EXPRESS"])
def test_status_and_trace_of_an_express_stack_say_what_aws_does_not_list(stack: LocalStack) -> None:
    """AWS lists no Express execution and keeps no history of one (API_ListExecutions:
    StateMachineTypeNotSupported): status says so and exits 0; trace, with nothing to draw, says why
    on one line and exits 1 (before: a StateMachineTypeNotSupported traceback from both)."""
    where = ["--endpoint", stack.endpoint_url, "--stack-name", stack.stack_name]
    shown = _console("status", *where)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "EXPRESS: AWS keeps no list or history of Express executions" in shown.stdout
    line = _one_line(_console("trace", *where), 1)
    assert "runs an EXPRESS state machine: AWS keeps no list or history of its executions" in line
