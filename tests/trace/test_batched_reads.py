"""`trace`'s reads batched to the embedded AWS read what one call at a time reads (issue 33).

The embedded server answers `POST /_onceflow/batch` (engine/speedups/batch_requests.py) by handing
each call to its own application; the client (ops/batched_calls.py) builds, signs and parses them
as boto3 does. Compared here with the one-by-one reads (`ONCEFLOW_CLIENT_SPEEDUPS_OFF=batched_reads`)
on executions that succeeded, failed, were resent and lost their histories to a budget; a call
the endpoint refuses is made again one by one and raises what the client raises; the batch is
authorized as its signer; AWS's endpoints are never asked; bad batches are refused by rule.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import boto3
import pytest
import requests
from botocore.exceptions import ClientError

from onceflow.devtools.trace.collect import Collected, collect
from onceflow.engine import EmbeddedAws
from onceflow.engine.bookkeeping.retention import Retention
from onceflow.local.faults import sns_publish_failures
from onceflow.local.stack import LocalStack
from onceflow.ops.batched_calls import BATCH_PATH, MAX_REQUESTS, BatchedCalls
from onceflow.ops.executions import HISTORY_BUDGET_TAG
from tests.support import order, run_execution

pytestmark = pytest.mark.embedded_only(reason="the batch endpoint is the embedded AWS's")

READS = ("GetExecutionHistory", "DescribeExecution")


class Counted:
    """Batches sent (operation, calls in it) and the client's own calls of READS, one by one."""

    def __init__(self, sfn: Any, monkeypatch: pytest.MonkeyPatch):
        self.batches: list[tuple[str, int]] = []
        self.answers: list[list[dict[str, Any]] | None] = []
        self.one_by_one: Counter[str] = Counter()
        send = BatchedCalls._send

        def counted_send(batched: BatchedCalls, operation: str, sent: list[dict[str, str]]) -> Any:
            answers = send(batched, operation, sent)
            self.batches.append((operation, len(sent)))
            self.answers.append(answers)
            return answers

        monkeypatch.setattr(BatchedCalls, "_send", counted_send)
        for operation in READS:
            sfn.meta.events.register(
                f"before-call.states.{operation}", self._one, unique_id=f"batched-reads-{operation}"
            )
        self._sfn = sfn

    def _one(self, model: Any, **_: Any) -> None:
        self.one_by_one.update([model.name])

    def close(self) -> None:
        for operation in READS:
            self._sfn.meta.events.unregister(f"before-call.states.{operation}", unique_id=f"batched-reads-{operation}")


@pytest.fixture
def counted(stack: LocalStack, monkeypatch: pytest.MonkeyPatch) -> Iterator[Counted]:
    monkeypatch.delenv("ONCEFLOW_CLIENT_SPEEDUPS_OFF", raising=False)  # batched, whatever the run switched off
    counting = Counted(stack.client("stepfunctions"), monkeypatch)
    yield counting
    counting.close()


def _collected(stack: LocalStack, monkeypatch: pytest.MonkeyPatch, batched: bool, margin: int) -> Collected:
    if batched:
        monkeypatch.delenv("ONCEFLOW_CLIENT_SPEEDUPS_OFF", raising=False)
    else:
        monkeypatch.setenv("ONCEFLOW_CLIENT_SPEEDUPS_OFF", "batched_reads")
    return collect(stack.client("stepfunctions"), stack.state_machine_arn, margin=margin)


def test_batched_reads_are_the_one_by_one_reads_of_every_kind_of_execution(
    stack: LocalStack, embedded_aws: EmbeddedAws, counted: Counted, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two succeeded, a duplicate, a conflict (FAILED), an SNS outage (FAILED) and its resend; a budget
    of 3 histories prunes the rest; read with the budget known (pruned ones described at once) and
    with a margin that reads every history first (then describes the empty ones)."""
    sfn = stack.client("stepfunctions")
    run_execution(stack, order("order-1"), name="new-order-1")
    run_execution(stack, order("order-1"), name="duplicate-order-1")
    assert run_execution(stack, order("order-1", amount=1), name="conflict-order-1").status == "FAILED"
    with sns_publish_failures() as outage:
        failed = run_execution(stack, order("order-2"), name="outage-order-2")
    assert outage.injected > 0 and failed.status == "FAILED"
    assert run_execution(stack, order("order-2"), name="resent-order-2").status == "SUCCEEDED"
    run_execution(stack, order("order-3"), name="new-order-3")
    with embedded_aws.lock:
        assert Retention(max_histories=3).prune() > 0
    sfn.tag_resource(resourceArn=stack.state_machine_arn, tags=[{"key": HISTORY_BUDGET_TAG, "value": "3"}])
    try:
        for margin in (0, 100):
            counted.one_by_one.clear()  # the executions' own polls
            one_by_one = _collected(stack, monkeypatch, batched=False, margin=margin)
            assert counted.batches == [] and counted.one_by_one["DescribeExecution"] == one_by_one.pruned
            counted.one_by_one.clear()
            batched = _collected(stack, monkeypatch, batched=True, margin=margin)
            assert batched == one_by_one, margin
            assert 0 < batched.pruned < len(batched.executions), margin  # both kinds were read
            assert not counted.one_by_one, counted.one_by_one  # every read went in a batch
            sent = Counter()
            for operation, calls in counted.batches:
                sent[operation] += calls
            read_first = len(batched.executions) if margin else len(batched.executions) - batched.pruned
            assert sent == {"": 0, "GetExecutionHistory": read_first, "DescribeExecution": batched.pruned}, sent
            counted.batches.clear()
    finally:
        sfn.untag_resource(resourceArn=stack.state_machine_arn, tagKeys=[HISTORY_BUDGET_TAG])


def test_a_call_the_batch_answers_with_an_error_raises_what_the_client_raises(
    stack: LocalStack, counted: Counted
) -> None:
    sfn = stack.client("stepfunctions")
    good = run_execution(stack, order("order-1"), name="new-order-1").arn
    missing = good.replace("new-order-1", "no-such-execution")
    with pytest.raises(ClientError) as one_call:
        sfn.describe_execution(executionArn=missing)
    counted.one_by_one.clear()
    with pytest.raises(ClientError) as batched:
        BatchedCalls(sfn).call("DescribeExecution", [{"executionArn": good}, {"executionArn": missing}])
    assert type(batched.value) is type(one_call.value)
    assert batched.value.response["Error"] == one_call.value.response["Error"]
    assert batched.value.response["Error"]["Code"] == "ExecutionDoesNotExist"
    (answers,) = [a for a in counted.answers if a]  # the batch's own answers: one good, one refused
    assert [a["status"] for a in answers] == [200, 400]
    assert counted.one_by_one == {"DescribeExecution": 1}  # the refused call, made again the ordinary way


def test_a_batch_is_authorized_as_its_signer(stack: LocalStack, embedded_aws: EmbeddedAws, counted: Counted) -> None:
    """A role allowed nothing: the call in the batch is denied as its own request would be (IAM on)."""
    if not embedded_aws.iam.on:
        pytest.skip("IAM enforcement switched off (ONCEFLOW_IAM=off)")
    arn = run_execution(stack, order("order-1"), name="new-order-1").arn
    kwargs = {"endpoint_url": embedded_aws.endpoint_url, "region_name": "us-east-1"}
    root = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
    iam, sts = boto3.client("iam", **kwargs, **root), boto3.client("sts", **kwargs, **root)
    trust = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}],
    }
    role = iam.create_role(RoleName="allowed-nothing", AssumeRolePolicyDocument=json.dumps(trust))["Role"]
    credentials = sts.assume_role(RoleArn=role["Arn"], RoleSessionName="batch")["Credentials"]
    nobody = boto3.client(
        "stepfunctions",
        **kwargs,
        aws_access_key_id=credentials["AccessKeyId"],
        aws_secret_access_key=credentials["SecretAccessKey"],
        aws_session_token=credentials["SessionToken"],
    )
    with pytest.raises(ClientError) as denied:
        BatchedCalls(nobody).call("DescribeExecution", [{"executionArn": arn}])
    assert denied.value.response["Error"]["Code"] == "AccessDeniedException"
    (answer,) = [a for answers in counted.answers if answers for a in answers]
    assert answer["status"] == 400 and "not authorized to perform: states:DescribeExecution" in answer["body"].decode()


def test_aws_itself_is_never_asked_for_a_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    sfn = boto3.client(
        "stepfunctions",
        endpoint_url="https://states.us-east-1.amazonaws.com",  # whatever AWS_ENDPOINT_URL says in this process
        region_name="us-east-1",
        aws_access_key_id="k",
        aws_secret_access_key="s",
    )
    monkeypatch.setattr(sfn._endpoint.http_session, "send", lambda *_: pytest.fail("AWS was asked"))
    assert BatchedCalls(sfn).offered is False


class _NotFound(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *_: Any) -> None:
        pass


def test_an_endpoint_without_the_batch_gets_its_calls_one_by_one() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NotFound)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        sfn = boto3.client(
            "stepfunctions",
            endpoint_url=f"http://127.0.0.1:{server.server_port}",
            region_name="us-east-1",
            aws_access_key_id="k",
            aws_secret_access_key="s",
        )
        assert BatchedCalls(sfn).offered is False
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("body", "rule"),
    [
        (b"{not json", "the batch is not JSON"),
        (b'{"requests": {}}', 'a JSON object with a list "requests"'),
        (b'{"requests": [{"target": "AWSStepFunctions.ListActivities"}]}', "requests[0] needs the strings"),
        (json.dumps({"requests": [{}] * (MAX_REQUESTS + 1)}).encode(), f"at most {MAX_REQUESTS} requests"),
    ],
    ids=["not-json", "no-list", "incomplete", "too-many"],
)
def test_a_bad_batch_is_refused_by_its_rule(embedded_aws: EmbeddedAws, body: bytes, rule: str) -> None:
    answer = requests.post(embedded_aws.endpoint_url + BATCH_PATH, data=body, timeout=10)
    assert answer.status_code == 400
    assert rule in answer.json()["message"]


def test_a_batch_is_posted(embedded_aws: EmbeddedAws) -> None:
    answer = requests.get(embedded_aws.endpoint_url + BATCH_PATH, timeout=10)
    assert answer.status_code == 400 and "POST only" in answer.json()["message"]
