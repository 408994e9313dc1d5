"""The engine's speed-ups take effect (counted: each test here fails with its speed-up switched off,
`ONCEFLOW_SPEEDUPS_OFF=<name>`) and answer as moto (and AWS) do. The pipeline with each speed-up
switched off: test_speedups_switched_off.py."""

from __future__ import annotations

import email.parser
import gc
import http.client
import importlib
import inspect
import io
import json
import os
import re
import socket
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import boto3
import pytest
from botocore.client import ClientCreator
from botocore.exceptions import ClientError
from botocore.session import Session as BotocoreSession
from jsonpath_ng.ext.parser import ExtendedJsonPathParser
from moto.core.base_backend import BackendDict
from moto.sqs import models as sqs_models
from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser
from moto.stepfunctions.parser.models import stepfunctions_parser_backends
from urllib3.util import connection as urllib3_connection

from onceflow.engine import ACCOUNT_ID, REGION, speedups
from onceflow.engine.bookkeeping.retention import Retention
from onceflow.engine.speedups import direct_transport, idle_gates, integration_clients, request_headers
from onceflow.engine.stepfunctions.integrations import sdk_shapes
from onceflow.local.pipeline import LocalPipeline, RoundReport
from onceflow.ops import http_heads
from onceflow.ops.executions import list_executions, wait_for
from tests.support import execution_input, order, run_execution, sqs_subscribed_topic

pytestmark = pytest.mark.embedded_only(reason="counts what happens inside the embedded engine")


@contextmanager
def counting(owner: Any, name: str) -> Iterator[Counter[str]]:
    """Count calls of `owner.name` (a class attribute or property getter) while open."""
    calls: Counter[str] = Counter()
    original = owner.__dict__[name]
    if isinstance(original, property):
        getter = original.fget

        def counted_getter(self: Any) -> Any:
            calls[name] += 1
            return getter(self)

        replacement: Any = property(counted_getter)
    else:

        def replacement(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            if threading.current_thread() is threading.main_thread():
                calls["on the test's thread"] += 1
            return original(*args, **kwargs)

    setattr(owner, name, replacement)
    try:
        yield calls
    finally:
        setattr(owner, name, original)


def run_orders(stack: Any, prefix: str, count: int) -> None:
    for i in range(count):
        result = run_execution(stack, order(f"{prefix}-{i}"), name=f"{prefix}-{i}")
        assert result.status == "SUCCEEDED", result.path


def test_integration_clients_are_built_once_not_per_task(stack):
    """moto builds a boto3 client for every task and always passes state_credentials, so a cache
    applied only without credentials (before issue 13) never took effect."""
    run_orders(stack, "warm", 1)
    with counting(ClientCreator, "create_client") as calls:
        run_orders(stack, "cached", 3)  # the test's own clients are made on this thread
        by_tasks = calls["create_client"] - calls["on the test's thread"]
    assert by_tasks == 0  # 3 tasks per execution: 9 before


def _at_once(call: Callable[[], Any], threads: int = 8) -> list[Any]:
    """`call` from `threads` threads released together; their results."""
    start = threading.Barrier(threads)
    results: list[Any] = []

    def one() -> None:
        start.wait()
        results.append(call())

    workers = [threading.Thread(target=one) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return results


def test_executions_started_together_build_one_client_per_service(stack):
    """A burst of StartExecution: every task's first call misses the cache at once. Each building
    its own client (functools.lru_cache lets concurrent misses all run) held 734 of 5,000 executions
    in botocore's model loader and the server at 1.2 GB in benchmarks/trace_status.py's fill."""
    boto_client_for = importlib.import_module(integration_clients.INTEGRATION_MODULES[0]).boto_client_for
    with counting(ClientCreator, "create_client") as calls:
        clients = _at_once(lambda: boto_client_for("eu-west-3", "sqs", None))
    assert calls["create_client"] == 1
    assert len(clients) == 8 and len({id(client) for client in clients}) == 1


def test_tasks_started_together_load_an_api_model_once(stack):
    """The same burst in the task's parameter matching (sdk_shapes.operation_model): one model
    load per service and action, not one per waiting task (each from a new botocore session). The
    service's model may be loaded already (bookkeeping/service_models.py keeps one per process): then
    none is, and every task gets the same operation model."""
    with counting(BotocoreSession, "get_service_model") as calls:
        models = _at_once(lambda: sdk_shapes.operation_model("mq", "list_brokers"))
    assert calls["get_service_model"] <= 1
    assert {model.name for model in models} == {"ListBrokers"}
    assert len({id(model) for model in models}) == 1


def test_service_integrations_do_not_go_through_the_http_server(stack, embedded_aws):
    served: Counter[str] = Counter()
    app = embedded_aws._app
    inner = app._app

    def counted(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        served[environ.get("HTTP_X_AMZ_TARGET", "").split(".")[0] or environ.get("PATH_INFO", "")] += 1
        return inner(environ, start_response)

    app._app = counted
    try:
        run_orders(stack, "direct", 2)
    finally:
        app._app = inner
    assert "DynamoDB_20120810" not in served  # TransactWriteItems, UpdateItem: in process
    assert served["AWSStepFunctions"] >= 2  # the test's own StartExecution calls still reach the server's app


def test_jsonpath_expressions_are_compiled_once(stack):
    run_orders(stack, "warm", 1)
    with counting(ExtendedJsonPathParser, "__init__") as calls:
        run_orders(stack, "compiled", 2)
    assert calls["__init__"] == 0  # moto builds a parser (PLY tables) for every path it evaluates


@pytest.fixture
def queue(stack):
    sqs = stack.client("sqs")
    url = sqs.create_queue(QueueName="speedup-probe")["QueueUrl"]
    sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": str(i), "MessageBody": f"m{i}"} for i in range(10)])
    return sqs, url


def test_receive_reads_the_retention_period_without_computing_every_attribute(queue):
    sqs, url = queue
    with counting(sqs_models.Queue, "attributes") as calls:
        received = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    assert len(received) == 10
    assert calls["attributes"] == 0  # moto: three times per received message, each counting the queue


def test_get_queue_attributes_computes_the_attributes_once(queue):
    sqs, url = queue
    with counting(sqs_models.Queue, "attributes") as calls:
        attributes = sqs.get_queue_attributes(
            QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
        )["Attributes"]
    assert attributes == {"ApproximateNumberOfMessages": "10", "ApproximateNumberOfMessagesNotVisible": "0"}
    assert calls["attributes"] == 1  # moto: up to twice per name, once more to check it


def test_queue_counts_and_deletes_answer_as_sqs_does(queue):
    """https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_DeleteMessage.html:
    a deleted message's handle may be deleted again; a handle that never was is ReceiptHandleIsInvalid."""
    sqs, url = queue
    sqs.send_message(QueueUrl=url, MessageBody="later", DelaySeconds=60)
    in_flight = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=3, VisibilityTimeout=60)["Messages"]
    counts = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert (
        counts["ApproximateNumberOfMessages"],
        counts["ApproximateNumberOfMessagesNotVisible"],
        counts["ApproximateNumberOfMessagesDelayed"],
    ) == ("7", "3", "1")
    with pytest.raises(ClientError, match="InvalidAttributeName"):
        sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "NoSuchAttribute"])
    for message in in_flight:
        sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    sqs.delete_message(QueueUrl=url, ReceiptHandle=in_flight[0]["ReceiptHandle"])  # again: accepted
    with pytest.raises(ClientError, match="ReceiptHandleIsInvalid"):
        sqs.delete_message(QueueUrl=url, ReceiptHandle="never-issued")
    rest = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])["Attributes"]
    assert rest["ApproximateNumberOfMessages"] == "7"


class _ReadCounting(list):
    """A queue's message list that counts the messages iterated over (`in` and `remove` do not)."""

    read = 0

    def __iter__(self) -> Iterator[Any]:
        for message in super().__iter__():
            self.read += 1
            yield message


def test_a_backlog_is_not_walked_to_receive_or_delete_a_batch(queue, monkeypatch):
    """With 200 queued, receiving 10 reads the oldest visible ones and stops, and deleting them by
    their new receipt handles finds each among the in-flight ones (a backlog of 20,000 made every
    receive and every delete a walk of the whole queue: issue 21's falling rate)."""
    sqs, url = queue
    for start in range(10, 200, 10):
        sqs.send_message_batch(
            QueueUrl=url, Entries=[{"Id": str(i), "MessageBody": f"m{start + i}"} for i in range(10)]
        )
    backend_queue = sqs_models.sqs_backends[ACCOUNT_ID][REGION].queues["speedup-probe"]
    backend_queue._messages = messages = _ReadCounting(backend_queue._messages)
    received = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    for message in received:
        sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    assert [m["Body"] for m in received] == [f"m{i}" for i in range(10)]
    assert messages.read <= 20, messages.read  # the receive's; the deletes read none (engine/sqs/receipts.py)
    remaining = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
    assert remaining["Attributes"]["ApproximateNumberOfMessages"] == "190"


def test_queue_counts_are_read_without_walking_the_backlog(queue):
    """With 200 queued, GetQueueAttributes' three counts test only the messages in flight, delayed or
    changed in visibility against the clock, and answer as moto counts (moto walked the whole queue
    three times per call: the event source, the safety net and `status` ask all the time, issue 21)."""
    sqs, url = queue
    sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": str(i), "MessageBody": f"n{i}"} for i in range(10)])
    for start in range(20, 200, 10):
        sqs.send_message_batch(
            QueueUrl=url, Entries=[{"Id": str(i), "MessageBody": f"m{start + i}"} for i in range(10)]
        )
    sqs.send_message(QueueUrl=url, MessageBody="later", DelaySeconds=60)
    in_flight = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=4, VisibilityTimeout=60)["Messages"]
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=in_flight[0]["ReceiptHandle"], VisibilityTimeout=0)
    sqs.delete_message(QueueUrl=url, ReceiptHandle=in_flight[1]["ReceiptHandle"])
    backend_queue = sqs_models.sqs_backends[ACCOUNT_ID][REGION].queues["speedup-probe"]
    backend_queue._messages = messages = _ReadCounting(backend_queue._messages)
    names = [
        "ApproximateNumberOfMessages",
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed",
    ]
    counts = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
    assert [counts[name] for name in names] == ["197", "2", "1"]  # 201 sent, 1 deleted, 2 in flight, 1 delayed
    assert messages.read == 0, messages.read
    everything = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert [everything[name] for name in names] == ["197", "2", "1"]


def test_moto_server_finds_the_backend_without_listing_its_package(stack):
    sqs = stack.client("sqs")
    with counting(os, "listdir") as calls:
        for _ in range(3):
            sqs.list_queues()
    assert calls["listdir"] == 0  # moto: one directory listing (and a stat per entry) per request


class _CountedPatterns(list):
    """A backend's URL patterns that count how often they are walked."""

    walked = 0

    def __iter__(self) -> Iterator[Any]:
        type(self).walked += 1
        return super().__iter__()


def test_moto_server_matches_a_host_against_the_backends_patterns_once(stack):
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

    app = DomainDispatcherApplication(create_backend_app)
    app.backend_url_patterns = _CountedPatterns(app.backend_url_patterns)
    hosts = ["sqs.us-east-1.amazonaws.com", "states.eu-west-1.amazonaws.com", "dynamodb.us-east-1.amazonaws.com"]
    first = [app.get_backend_for_host(host) for host in hosts]
    assert first == ["sqs", "stepfunctions", "dynamodb"]  # what moto's own matching finds
    walked = _CountedPatterns.walked
    assert [app.get_backend_for_host(host) for _ in range(3) for host in hosts] == first * 3
    assert _CountedPatterns.walked == walked  # moto: every pattern walked for every request, twice


def test_moto_lists_a_response_class_s_methods_once_not_per_request(stack):
    sqs = stack.client("sqs")
    sqs.list_queues()
    with counting(inspect, "getmembers") as calls:
        for _ in range(3):
            sqs.list_queues()
    assert calls["getmembers"] == 0  # moto: inspect.getmembers of the response class per request


def test_create_state_machine_validates_a_definition_parsed_before_without_parsing_it_again(stack):
    sfn = stack.client("stepfunctions")
    definition = sfn.describe_state_machine(stateMachineArn=stack.state_machine_arn)["definition"]
    role = sfn.describe_state_machine(stateMachineArn=stack.state_machine_arn)["roleArn"]
    with counting(AmazonStateLanguageParser, "parse") as calls:
        for i in range(2):
            sfn.create_state_machine(name=f"again-{i}", definition=definition, roleArn=role)
        with pytest.raises(ClientError, match="InvalidDefinition"):  # what does not parse is still refused
            sfn.create_state_machine(name="broken", definition='{"StartAt": "Nowhere", "States": {}}', roleArn=role)
    assert calls["parse"] == 1  # only the broken one; moto parses (ANTLR, ~25 ms) on every create


@contextmanager
def over_http(embedded_aws: Any) -> Iterator[None]:
    """The embedded endpoint reached through its HTTP server, as from another process."""
    direct_transport.forget(embedded_aws.endpoint_url)
    try:
        yield
    finally:
        direct_transport.serve(embedded_aws.endpoint_url, embedded_aws._app)


def test_calls_to_the_embedded_endpoint_open_no_connection_and_reach_its_application(stack, embedded_aws):
    sqs = stack.client("sqs")
    with counting(urllib3_connection, "create_connection") as connections:
        sqs.list_queues()
        sfn = stack.client("stepfunctions")
        sfn.describe_state_machine(stateMachineArn=stack.state_machine_arn)
    assert connections["create_connection"] == 0
    # A client of its own: the shared one (stack.client) may keep a connection an earlier test opened.
    own_sqs = boto3.client(
        "sqs",
        endpoint_url=stack.endpoint_url,
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    with over_http(embedded_aws), counting(urllib3_connection, "create_connection") as connections:
        # Over HTTP the client opens a connection, kept for the next request (engine/speedups/keep_alive.py);
        # the direct transport opens none at all.
        for _ in range(2):
            own_sqs.list_queues()
    assert connections["create_connection"] == 1


def _answers(stack: Any) -> dict[str, Any]:
    """Successes and AWS errors of four services, without what differs per request."""
    sqs, dynamodb, sfn, sns = (stack.client(s) for s in ("sqs", "dynamodb", "stepfunctions", "sns"))

    def outcome(call: Callable[[], dict[str, Any]], *keys: str) -> Any:
        try:
            response = call()
        except ClientError as error:
            return ("error", error.response["Error"], error.response["ResponseMetadata"]["HTTPStatusCode"])
        status = response.pop("ResponseMetadata")["HTTPStatusCode"]
        for key in keys:
            response = response[key]
        return ("ok", json.loads(json.dumps(response, default=str)), status)

    absent_execution = stack.state_machine_arn.replace(":stateMachine:", ":execution:") + ":absent"
    return {
        "queue attributes": outcome(
            lambda: sqs.get_queue_attributes(QueueUrl=stack.source_queue_url, AttributeNames=["VisibilityTimeout"])
        ),
        "no such queue": outcome(lambda: sqs.get_queue_url(QueueName="no-such-queue")),
        "table": outcome(lambda: dynamodb.describe_table(TableName=stack.processed_events_table), "Table", "KeySchema"),
        "no such table": outcome(lambda: dynamodb.describe_table(TableName="no-such-table")),
        "failed condition": outcome(
            lambda: dynamodb.put_item(
                TableName=stack.business_table,
                Item={"order_id": {"S": "absent"}},
                ConditionExpression="attribute_exists(order_id)",
            )
        ),
        "state machine": outcome(lambda: sfn.describe_state_machine(stateMachineArn=stack.state_machine_arn)),
        "no such execution": outcome(lambda: sfn.describe_execution(executionArn=absent_execution)),
        "topic": outcome(
            lambda: sns.get_topic_attributes(TopicArn=stack.notification_topic_arn), "Attributes", "TopicArn"
        ),
    }


def test_the_direct_transport_answers_as_the_http_server_does(stack, embedded_aws):
    direct = _answers(stack)
    with over_http(embedded_aws):
        over_the_wire = _answers(stack)
    assert direct == over_the_wire
    assert direct["no such table"][0] == "error" and direct["failed condition"][1]["Code"] == (
        "ConditionalCheckFailedException"
    )


def test_pruned_histories_leave_executions_listable_describable_and_their_names_taken(stack, embedded_aws):
    """Step Functions keeps names unique for 90 days (StartExecution: ExecutionAlreadyExists)."""
    sfn = stack.client("stepfunctions")
    run_orders(stack, "kept", 5)
    retention = Retention(max_histories=2)
    with embedded_aws.lock:
        assert retention.prune() == 3
    listed = sfn.list_executions(stateMachineArn=stack.state_machine_arn)["executions"]
    assert {e["status"] for e in listed} == {"SUCCEEDED"} and len(listed) == 5
    histories = {e["name"]: len(sfn.get_execution_history(executionArn=e["executionArn"])["events"]) for e in listed}
    assert sorted(n for n, events in histories.items() if events) == ["kept-3", "kept-4"]  # the 2 newest
    oldest = next(e for e in listed if e["name"] == "kept-0")
    assert json.loads(sfn.describe_execution(executionArn=oldest["executionArn"])["input"])["event_id"] == "kept-0"
    with pytest.raises(ClientError, match="ExecutionAlreadyExists"):
        sfn.start_execution(stateMachineArn=stack.state_machine_arn, name="kept-0", input=execution_input(order("x")))
    with embedded_aws.lock:
        assert retention.prune() == 0  # each is pruned once; the cursor moved on


def test_an_execution_is_pruned_only_once_moto_has_copied_its_outcome(stack, embedded_aws):
    """moto sets an ended execution's status before it reads the output from the environment: an
    execution in that window (or still running) keeps its environment until a later prune."""
    from moto.stepfunctions.parser.models import stepfunctions_parser_backends

    from onceflow.engine.bookkeeping import retention as retention_module

    run_orders(stack, "settling", 1)
    backend = stepfunctions_parser_backends[ACCOUNT_ID][REGION]
    (execution,) = next(sm for sm in backend.state_machines if sm.arn == stack.state_machine_arn).executions
    retention = Retention(max_histories=0)
    with embedded_aws.lock:
        delattr(execution, retention_module._SETTLED)  # as between the status and the output copy
        assert retention.prune() == 0
        setattr(execution, retention_module._SETTLED, True)
        assert retention.prune() == 1
    sfn = stack.client("stepfunctions")
    assert sfn.get_execution_history(executionArn=execution.exec_arn)["events"] == []


def test_switches_are_named_and_the_environment_turns_them_off(monkeypatch):
    monkeypatch.delenv(speedups.OFF_VARIABLE, raising=False)
    assert speedups.resolve(True) == frozenset(speedups.NAMES)
    assert speedups.resolve("none") == frozenset() == speedups.resolve(False)
    monkeypatch.setenv(speedups.OFF_VARIABLE, "jsonpath_cache, client_cache")
    assert speedups.resolve(True) == frozenset(speedups.NAMES) - {"jsonpath_cache", "client_cache"}
    assert speedups.resolve("all") == frozenset(speedups.NAMES)  # an explicit set is not overridden
    with pytest.raises(speedups.SpeedupError, match="no_such_speedup"):
        speedups.resolve("no_such_speedup")


@contextmanager
def requests_served(embedded_aws: Any) -> Iterator[Counter[str]]:
    """Count the requests the embedded application answers (over HTTP or in process), by action."""
    served: Counter[str] = Counter()
    app = embedded_aws._app
    inner = app._app

    def counted(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        served[environ.get("HTTP_X_AMZ_TARGET", "") or environ.get("PATH_INFO", "")] += 1
        return inner(environ, start_response)

    app._app = counted
    try:
        yield served
    finally:
        app._app = inner


def test_an_idle_background_round_makes_no_request_and_a_change_is_still_swept(stack, embedded_aws):
    pipeline = LocalPipeline(embedded_aws, stack, log_stream=io.StringIO(), keep_acknowledged=False)
    pipeline.send([order("idle-0")])
    pipeline.process(timeout=60)
    pipeline.background_round()  # what ended during process()
    with requests_served(embedded_aws) as idle:
        rounds = [pipeline.background_round() for _ in range(3)]
    assert sum(idle.values()) == 0 and rounds == [RoundReport(0, 0)] * 3
    pipeline.gates.enabled = False  # idle_gates switched off: a receive, a sweep's page and a drain each round
    with requests_served(embedded_aws) as ungated:
        pipeline.background_round()
    assert sum(ungated.values()) >= 3
    pipeline.gates.enabled = True
    # A message on the source queue is received; an execution that ends is swept, once.
    reported = pipeline.safety_net.ended_seen
    pipeline.send([order("idle-1")])
    assert pipeline.background_round().handled == 1
    sfn = stack.client("stepfunctions")
    for summary in list_executions(sfn, stack.state_machine_arn):
        wait_for(sfn, summary["executionArn"])
    pipeline.background_round()
    assert pipeline.safety_net.ended_seen == reported + 1
    with requests_served(embedded_aws) as after:
        pipeline.background_round()
    assert sum(after.values()) == 0


def test_another_state_machine_s_executions_start_neither_a_sweep_nor_the_reconciler_s_schedule(stack, embedded_aws):
    """The safety net sweeps the stack's state machine and the reconciler finds only what it wrote:
    an execution of any other state machine in the engine (a team's own workflow, a benchmark's)
    moves neither (each counted per state machine, its versions included); one of the stack's does."""
    pipeline = LocalPipeline(embedded_aws, stack, log_stream=io.StringIO(), keep_acknowledged=False)
    pipeline.send([order("own-0")])
    pipeline.process(timeout=60)
    pipeline.background_round()  # what ended during process()
    sfn = stack.client("stepfunctions")
    role = sfn.describe_state_machine(stateMachineArn=stack.state_machine_arn)["roleArn"]
    definition = {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}
    other = sfn.create_state_machine(name="another-workflow", definition=json.dumps(definition), roleArn=role)
    ended, runs = embedded_aws.clock.ends.count, pipeline.schedule.runs
    with requests_served(embedded_aws) as served:
        for i in range(2):
            arn = sfn.start_execution(stateMachineArn=other["stateMachineArn"], name=f"other-{i}")["executionArn"]
            assert wait_for(sfn, arn).status == "SUCCEEDED"
    started = sum(served.values())
    with requests_served(embedded_aws) as served:
        pipeline.background_round()
    assert embedded_aws.clock.ends.count == ended + 2  # they did end
    assert sum(served.values()) == 0 and pipeline.schedule.runs == runs, served
    own_ends = embedded_aws.clock.ends.count_of(stack.state_machine_arn)
    pipeline.send([order("own-1")])
    pipeline.process(timeout=60)
    pipeline.background_round()
    version_arn = f"{stack.state_machine_arn}:1"  # a version's ARN counts its state machine's executions
    assert embedded_aws.clock.ends.count_of(version_arn) == own_ends + 1
    assert started > 0 and pipeline.schedule.runs == runs + 1


def test_the_round_after_a_busy_spell_makes_the_due_full_collection_once(stack, embedded_aws):
    """A spell's executions, then quiet rounds: the collector's full collection is made once, in the
    round that ends the spell's QUIET_ROUNDS (idle_gates; none with it switched off)."""
    pipeline = LocalPipeline(embedded_aws, stack, log_stream=io.StringIO(), keep_acknowledged=False)
    collections: list[int] = []
    collect = pipeline.gates._collect
    pipeline.gates._collect = lambda: collections.append(collect())
    pipeline.send([order("spell-0"), order("spell-1")])
    pipeline.process(timeout=60)
    pipeline.background_round()  # what ended during process(): the spell's last change
    for _ in range(2 * idle_gates.QUIET_ROUNDS):
        pipeline.background_round()
    assert len(collections) == (1 if speedups.IDLE_GATES in embedded_aws.speedups else 0)
    assert collect is gc.collect


def test_execution_status_settings_are_counted_and_read_as_before(stack):
    before = idle_gates.execution_changes()
    result = run_execution(stack, order("counted-0"), name="counted-0")
    assert result.status == "SUCCEEDED"
    assert idle_gates.execution_changes() >= before + 3  # created (None), RUNNING, SUCCEEDED
    backend = stepfunctions_parser_backends[ACCOUNT_ID][REGION]
    execution = backend.describe_execution(result.arn)
    assert vars(execution)["exec_status"] is execution.exec_status  # kept where moto keeps it


@pytest.mark.parametrize(
    "head",
    [
        b"Host: 127.0.0.1:4747\r\nX-Amz-Target: AWSStepFunctions.DescribeExecution\r\nContent-Length: 2\r\n\r\n",
        b"A:no-blank\r\nB: \t two blanks \r\nC:\r\nD: a:b: c\r\n\r\n",
        b"Host: x\nBare: line feeds\n\n",
        b"X-Meta: caf\xe9\r\nx-meta: again\r\n\r\n",  # not ASCII; a name twice
        b"Breaks: a\x85b\x0cc\x1dd\x0be\r\nNext: f\r\n\r\n",  # line breaks to str.splitlines, not to HTTP
        b"Folded: one\r\n two\r\n\r\n",  # these four take the email parser's path
        b"Odd: a\rb\r\n\r\n",
        b"From me: x\r\n\r\n",
        b": no name\r\n\r\n",
        b"Cut: short",  # no end of the head
    ],
)
def test_a_request_head_is_read_into_the_message_the_email_parser_makes(head):
    expected = http.client.parse_headers(io.BytesIO(head))
    got = http_heads.read_head(http.client._read_headers(io.BytesIO(head)), http.client.HTTPMessage)
    assert type(got) is type(expected)
    assert got.items() == expected.items() and got.keys() == expected.keys()
    assert (got.get_payload(), [type(d) for d in got.defects], got.get_unixfrom()) == (
        expected.get_payload(),
        [type(d) for d in expected.defects],
        expected.get_unixfrom(),
    )


def _raw_request(port: int, raw: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(raw)
        answer = b""
        while b"\r\n\r\n" not in answer or len(answer.split(b"\r\n\r\n", 1)[1]) < int(
            answer.split(b"Content-Length: ", 1)[1].split(b"\r\n", 1)[0] if b"Content-Length: " in answer else 0
        ):
            chunk = connection.recv(65536)
            if not chunk:
                break
            answer += chunk
        return answer


def test_a_request_from_another_process_is_read_without_the_email_parser_into_the_same_environ(
    stack, embedded_aws, monkeypatch
):
    body = json.dumps({"resourceArn": stack.state_machine_arn}).encode()
    raw = (
        b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Amz-Target: AWSStepFunctions.ListTagsForResource\r\n"
        b"Content-Type: application/x-amz-json-1.0\r\nX-Custom_Name: kept\r\n"
        b"Authorization: AWS4-HMAC-SHA256 Credential=t/20260101/us-east-1/states/aws4_request, "
        b"SignedHeaders=host, Signature=0\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )
    environs: list[dict[str, Any]] = []
    app = embedded_aws._app
    inner = app._app

    def seen(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        environs.append({k: v for k, v in environ.items() if isinstance(v, str | int | bool | tuple | dict)})
        return inner(environ, start_response)

    monkeypatch.setattr(app, "_app", seen)
    answers = []
    for plain in (True, False):
        if not plain:  # the speed-up switched off for the second request
            monkeypatch.setattr(request_headers.PlainHeadRequestHandler, "plain_heads", False)
        with counting(email.parser.Parser, "parsestr") as parsed:
            answers.append(_raw_request(embedded_aws.port, raw))
        assert parsed["parsestr"] == (0 if plain else 1)  # the email parser: once per request without it
    fast, slow = ({k: v for k, v in e.items() if k != "REMOTE_PORT"} for e in environs)
    assert fast == slow and fast["HTTP_X_AMZ_TARGET"] == "AWSStepFunctions.ListTagsForResource"
    volatile = re.compile(rb"(Date|x-amzn-requestid): [^\r]*")
    assert volatile.sub(b"", answers[0]) == volatile.sub(b"", answers[1])
    assert answers[0].startswith(b"HTTP/1.1 200 OK")


def test_a_backend_of_a_known_account_is_found_without_comparing_every_registered_backend_dict(stack):
    sfn = stack.client("stepfunctions")
    sfn.list_state_machines()
    with counting(BackendDict, "__eq__") as compared:
        for _ in range(3):
            sfn.list_state_machines()
    assert compared["__eq__"] == 0  # moto: every registered BackendDict compared, several times a request


def test_a_backend_dict_is_registered_again_after_a_reset_as_moto_does():
    backends = BackendDict(sqs_models.SQSBackend, "sqs")
    try:
        first = backends["111122223333"]["us-east-1"]
        assert backends["111122223333"]["us-east-1"] is first
        assert any(registered is backends for registered in BackendDict._instances)
        BackendDict._instances.remove(backends)  # as BackendDict.reset leaves it (the dict emptied or not)
        assert backends["111122223333"]["us-east-1"] is first
        assert any(registered is backends for registered in BackendDict._instances)  # so the next reset resets it
        backends.clear()
        assert backends["111122223333"]["us-east-1"] is not first  # a new account backend, as moto makes one
    finally:
        while backends in BackendDict._instances:
            BackendDict._instances.remove(backends)


def _signed(target: str, scope: str, body: dict[str, Any], extra: bytes = b"") -> bytes:
    data = json.dumps(body).encode()
    return (
        b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Amz-Target: " + target.encode() + b"\r\n"
        b"Content-Type: application/x-amz-json-1.0\r\n" + extra + b"Authorization: AWS4-HMAC-SHA256 "
        b"Credential=t/20260101/us-east-1/" + scope.encode() + b"/aws4_request, SignedHeaders=host, Signature=0\r\n"
        b"Content-Length: " + str(len(data)).encode() + b"\r\n\r\n" + data
    )


def test_json_requests_answer_without_flask_as_through_it(stack, embedded_aws, monkeypatch):
    """Byte for byte (less the date and request id), successes and errors of three JSON services;
    requests with Origin (a browser's: flask_cors answers them) go through Flask either way."""
    from flask import Flask
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication

    run_orders(stack, "lane", 1)
    execution = stack.state_machine_arn.replace(":stateMachine:", ":execution:") + ":lane-0"
    requests = {
        "describe": _signed("AWSStepFunctions.DescribeExecution", "states", {"executionArn": execution}),
        "history": _signed("AWSStepFunctions.GetExecutionHistory", "states", {"executionArn": execution}),
        "no such execution": _signed(
            "AWSStepFunctions.DescribeExecution", "states", {"executionArn": execution + "-absent"}
        ),
        "invalid page size": _signed(
            "AWSStepFunctions.ListExecutions",
            "states",
            {"stateMachineArn": stack.state_machine_arn, "maxResults": 5000},
        ),
        "unknown action": _signed("AWSStepFunctions.NoSuchAction", "states", {}),
        "table": _signed("DynamoDB_20120810.DescribeTable", "dynamodb", {"TableName": stack.processed_events_table}),
        "no such table": _signed("DynamoDB_20120810.DescribeTable", "dynamodb", {"TableName": "absent"}),
        "queue": _signed("AmazonSQS.GetQueueUrl", "sqs", {"QueueName": stack.source_queue_url.rsplit("/", 1)[1]}),
        "from a browser": _signed(
            "AWSStepFunctions.DescribeExecution", "states", {"executionArn": execution}, b"Origin: http://x\r\n"
        ),
    }
    volatile = re.compile(rb"(Date|x-amzn-requestid|x-amz-crc32|x-amzn-RequestId): [^\r]*")

    def answers() -> tuple[dict[str, bytes], int]:
        with counting(Flask, "wsgi_app") as flask:
            got = {what: volatile.sub(b"", _raw_request(embedded_aws.port, raw)) for what, raw in requests.items()}
        return got, flask["wsgi_app"]

    lane, through_flask_with_lane = answers()
    monkeypatch.setattr(DomainDispatcherApplication, "__call__", DomainDispatcherApplication.__call__.moto_call)
    flask, through_flask = answers()
    assert lane == flask
    assert (through_flask_with_lane, through_flask) == (1, len(requests))  # only the browser's took Flask
    assert lane["describe"].startswith(b"HTTP/1.1 200 OK") and b"Access-Control-Allow-Origin: *" in lane["describe"]
    assert (
        lane["no such execution"].startswith(b"HTTP/1.1 400") and b"ExecutionDoesNotExist" in lane["no such execution"]
    )
    assert lane["invalid page size"].startswith(b"HTTP/1.1 400") and lane["no such table"].startswith(b"HTTP/1.1 400")


def test_request_response_tasks_run_on_their_execution_s_thread(stack, monkeypatch):
    """inline_tasks: moto starts a thread for every attempt of every task (3 per pipeline execution)."""
    from moto.stepfunctions.parser.asl.component.state.exec import execute_state

    run_orders(stack, "warm-inline", 1)
    started: list[str] = []
    thread_class = execute_state.Thread

    def counted_thread(*args: Any, **kwargs: Any) -> Any:
        started.append("task thread")
        return thread_class(*args, **kwargs)

    monkeypatch.setattr(execute_state, "Thread", counted_thread)
    run_orders(stack, "inline", 2)
    assert started == []  # 6 with moto's threads


def test_an_update_expression_is_parsed_once_per_text(stack):
    """update_expressions: moto parses an UpdateItem's expression twice per request (response class,
    backend) and deep-copies the tree; here the second and third requests parse nothing."""
    from moto.dynamodb.parsing.tokens import ExpressionTokenizer

    dynamodb = stack.client("dynamodb")

    def update(key: str, amount: str) -> None:
        dynamodb.update_item(
            TableName=stack.business_table,
            Key={"order_id": {"S": key}},
            UpdateExpression="SET tally = if_not_exists(tally, :zero) + :amount",
            ExpressionAttributeValues={":zero": {"N": "0"}, ":amount": {"N": amount}},
        )

    with counting(ExpressionTokenizer, "_make_list") as calls:
        for key, amount in [("u-1", "1"), ("u-2", "2"), ("u-1", "3")]:
            update(key, amount)
    assert calls["_make_list"] == 1  # 6 in moto: two per request
    tallies = {
        key: dynamodb.get_item(TableName=stack.business_table, Key={"order_id": {"S": key}})["Item"]["tally"]["N"]
        for key in ("u-1", "u-2")
    }
    assert tallies == {"u-1": "4", "u-2": "2"}


def test_an_update_expression_s_static_checks_run_once_per_text_and_names(stack):
    """update_validation: moto checks an UpdateExpression's clause counts, overlapping paths and key
    attributes on every UpdateItem; here a text that passed them with the same names and table is not
    checked again, and another combination of names is. (The function keeps every request on moto's
    validator: plain_updates applies a plain SET/REMOVE of an existing item without it.)"""
    from moto.dynamodb.parsing.validators import ActionCountValidator, UpdateHashRangeKeyValidator

    dynamodb = stack.client("dynamodb")

    def update(key: str, names: dict[str, str]) -> None:
        dynamodb.update_item(
            TableName=stack.business_table,
            Key={"order_id": {"S": key}},
            UpdateExpression="SET #field = if_not_exists(#field, :v) REMOVE gone",
            ExpressionAttributeNames=names,
            ExpressionAttributeValues={":v": {"S": key}},
        )

    with (
        counting(ActionCountValidator, "verify_action_counts") as counts,
        counting(UpdateHashRangeKeyValidator, "check_for_hash_or_range_key") as keys,
    ):
        update("c-1", {"#field": "note"})
        first = counts["verify_action_counts"], keys["check_for_hash_or_range_key"]
        update("c-2", {"#field": "note"})
        update("c-3", {"#field": "note"})
        again = counts["verify_action_counts"], keys["check_for_hash_or_range_key"]
        update("c-1", {"#field": "remark"})
        other_names = counts["verify_action_counts"], keys["check_for_hash_or_range_key"]
    assert min(first) > 0
    assert again == first  # in moto, three times the first request's checks
    assert other_names == (2 * first[0], 2 * first[1])
    notes = {
        key: dynamodb.get_item(TableName=stack.business_table, Key={"order_id": {"S": key}})["Item"]
        for key in ("c-1", "c-2", "c-3")
    }
    assert notes == {
        "c-1": {"order_id": {"S": "c-1"}, "note": {"S": "c-1"}, "remark": {"S": "c-1"}},
        "c-2": {"order_id": {"S": "c-2"}, "note": {"S": "c-2"}},
        "c-3": {"order_id": {"S": "c-3"}, "note": {"S": "c-3"}},
    }


def test_member_names_are_converted_once_per_name(stack, monkeypatch):
    """name_cases: moto converts every parameter and result member name of every task with a regular
    expression; a second run of the same tasks converts nothing again."""
    from moto.stepfunctions.parser import utils as parser_utils

    run_orders(stack, "warm-names", 1)
    pattern = parser_utils._re_camel_to_snake_case
    substitutions: list[str] = []

    class CountedPattern:
        def sub(self, *args: Any, **kwargs: Any) -> str:
            substitutions.append(args[-1])
            return pattern.sub(*args, **kwargs)

    monkeypatch.setattr(parser_utils, "_re_camel_to_snake_case", CountedPattern())
    run_orders(stack, "names", 2)
    assert substitutions == []  # 160 for these two executions in moto


def test_action_and_attribute_names_are_converted_once_per_name(queue):
    """name_cases: moto turns every request's action name, and SQS every queue attribute name (about
    14 for each SendMessage), into a member name character by character; once converted, a name is
    not converted again."""
    from moto.core import utils as core_utils

    sqs, url = queue
    sqs.send_message(QueueUrl=url, MessageBody="warm")
    conversion = core_utils.camelcase_to_underscores.__code__
    conversions: list[str] = []

    def counted(frame: Any, event: str, argument: Any) -> None:
        if event == "call" and frame.f_code is conversion:
            conversions.append(frame.f_locals["argument"])

    sys.setprofile(counted)  # the calls run on this thread (direct_transport)
    try:
        for i in range(3):
            sqs.send_message(QueueUrl=url, MessageBody=f"body {i}")
    finally:
        sys.setprofile(None)
    assert conversions == []  # 45 in moto: 1 action and 14 attribute names per SendMessage


def test_a_subscription_s_notifications_share_one_signing_certificate(stack):
    """sns_signing: moto makes (and keeps) a new certificate for every notification it signs."""
    from cryptography.x509 import CertificateBuilder

    sns, sqs = stack.client("sns"), stack.client("sqs")
    topic, queue = sqs_subscribed_topic(stack, "one-certificate")
    with counting(CertificateBuilder, "sign") as calls:
        for i in range(3):
            sns.publish(TopicArn=topic, Message=f"notification {i}")
    envelopes = [json.loads(m["Body"]) for m in sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]]
    assert calls["sign"] == 1  # 3 in moto
    assert len({e["SigningCertURL"] for e in envelopes}) == 1 and len(envelopes) == 3
