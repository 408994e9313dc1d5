"""Run one delivery on the embedded engine and keep what it cost: calls, executions, logs, delays."""

from __future__ import annotations

import io
import json
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3

from onceflow.devtools.cost.recorder import CALLER_KEYS, EVENT_SOURCE, HARNESS, PRODUCER, STARTER, Call, Recorder
from onceflow.engine import REGION, EmbeddedAws
from onceflow.engine.stepfunctions.api import sync_execution
from onceflow.local.event_source import SqsEventSource
from onceflow.local.function_runtime import StarterRuntime
from onceflow.local.pipeline import message_group_of
from onceflow.local.stack import LocalStack, deploy
from onceflow.ops.executions import ExecutionResult, list_executions, wait_for, wait_for_all


@dataclass(frozen=True)
class Execution:
    arn: str
    status: str
    history: list[dict[str, Any]]

    @property
    def path(self) -> list[str]:
        return ExecutionResult(self.arn, "", self.status, {}, self.history).path

    @property
    def states_entered(self) -> int:
        return sum(1 for event in self.history if str(event["type"]).endswith("StateEntered"))

    @property
    def retries(self) -> int:
        """Task attempts beyond the first of each state entered (each one a billed transition on Standard)."""
        scheduled = sum(1 for event in self.history if event["type"] == "TaskScheduled")
        task_states = sum(1 for event in self.history if event["type"] == "TaskStateEntered")
        return max(0, scheduled - task_states)

    @property
    def billed_transitions(self) -> int:
        return self.states_entered + self.retries


@dataclass(frozen=True)
class Measurement:
    """What one delivery of a path did, as the embedded engine saw it."""

    path: str
    deliveries: int
    calls: tuple[Call, ...]
    executions: tuple[Execution, ...]
    starter_log_bytes: int
    starter_invocations: int
    records: int  # records the event source handed to the starter
    retry_delay_seconds: float
    faults_injected: int = 0

    @property
    def billed_transitions(self) -> int:
        return sum(execution.billed_transitions for execution in self.executions)

    def calls_by(self, caller: str) -> list[Call]:
        return [call for call in self.calls if call.caller == caller]


@contextmanager
def _synchronous_executions() -> Iterator[list[Any]]:
    """The Express executions StartSyncExecution ran meanwhile, as the engine ran them.

    AWS lists no Express execution and serves no history for one (ListExecutions and
    GetExecutionHistory are Standard-only); what it keeps is the CloudWatch Logs of the state
    machine, which at level ALL hold the same events. The engine's own record stands in for them,
    read here by the cost run only, so EXPRESS is measured rather than modelled from STANDARD."""
    started: list[Any] = []
    lock = threading.Lock()
    original = sync_execution.start

    def recording_start(*args: Any, **kwargs: Any) -> Any:
        execution = original(*args, **kwargs)
        with lock:
            started.append(execution)
        return execution

    sync_execution.start = recording_start
    try:
        yield started
    finally:
        sync_execution.start = original


def _history(execution: Any) -> list[dict[str, Any]]:
    """The engine's events of an ended execution, in GetExecutionHistory's JSON shape."""
    from moto.stepfunctions.parser.asl.utils.encoding import to_json_str

    return json.loads(to_json_str(execution.to_history_output()["events"]))


def _client(endpoint_url: str, service: str, access_key: str) -> Any:
    return boto3.client(
        service,
        endpoint_url=endpoint_url,
        region_name=REGION,
        aws_access_key_id=access_key,
        aws_secret_access_key="testing",
    )


@dataclass
class Bench:
    """A fresh stack per path, from one template, on one embedded engine."""

    aws: EmbeddedAws
    template_path: Path
    parameters: dict[str, str] = field(default_factory=dict)
    recorder: Recorder = field(default_factory=Recorder)
    stack: LocalStack | None = None
    starter: StarterRuntime | None = None
    source: SqsEventSource | None = None
    producer: Any = None
    sfn: Any = None  # the cost run's own reads of executions
    starter_log: io.StringIO = field(default_factory=io.StringIO)

    def fresh(self) -> LocalStack:
        self.aws.reset()
        self.aws.clock.reset()
        stack = deploy(
            self.aws.endpoint_url, parameter_overrides=self.parameters or None, template_path=self.template_path
        )
        self.stack = stack
        self.starter_log = io.StringIO()
        self.starter = StarterRuntime(
            stack, extra_environment={"AWS_ACCESS_KEY_ID": CALLER_KEYS[STARTER]}, log_stream=self.starter_log
        )
        # boto3's default session keeps the credentials it first found, which may be another
        # caller's key from an earlier run in this process (the new runtime's clients are its own):
        # the recorder tells callers apart by key.
        boto3.DEFAULT_SESSION = None
        sqs = _client(stack.endpoint_url, "sqs", CALLER_KEYS[EVENT_SOURCE])
        self.source = SqsEventSource(sqs, stack.source_queue_url, stack.event_source, self.starter.invoke)
        self.producer = _client(stack.endpoint_url, "sqs", CALLER_KEYS[PRODUCER])
        self.sfn = _client(stack.endpoint_url, "stepfunctions", CALLER_KEYS[HARNESS])
        return stack

    def deliver(self, body: dict[str, Any]) -> None:
        """The producer sends the body; the event source hands it to the starter; every execution ends."""
        assert self.stack is not None and self.source is not None, "fresh() first"
        fifo = (
            {
                "MessageGroupId": message_group_of(self.stack, json.dumps(body)),
                "MessageDeduplicationId": uuid.uuid4().hex,
            }
            if self.stack.fifo
            else {}
        )
        self.producer.send_message(QueueUrl=self.stack.source_queue_url, MessageBody=json.dumps(body), **fifo)
        self.source.run_until_empty(timeout=60)
        if not self.stack.express:  # an Express machine's executions end inside the starter's call, unlisted
            wait_for_all(self.sfn, self.stack.state_machine_arn, timeout=60)

    def _listed(self) -> list[dict[str, Any]]:
        """The executions ListExecutions lists: none of an Express machine (StateMachineTypeNotSupported
        on AWS), whose synchronous executions are caught as they run instead."""
        assert self.stack is not None
        return [] if self.stack.express else list_executions(self.sfn, self.stack.state_machine_arn)

    def measure(self, path: str, action: Callable[[], int | None], deliveries: int = 1) -> Measurement:
        """Run `action` (which delivers; it may return the faults it injected) and keep what it cost."""
        assert self.stack is not None and self.starter is not None
        sfn = self.sfn
        known = {e["executionArn"] for e in self._listed()}
        log_start = len(self.starter_log.getvalue().encode("utf-8"))
        invocations_start = self.starter.invocations
        assert self.source is not None
        records_start = self.source.stats.records
        self.aws.clock.reset()
        with self.recorder.recording(), _synchronous_executions() as synchronous:
            injected = action() or 0
        calls = tuple(self.recorder.take())
        executions = [Execution(e.exec_arn, e.exec_status.value, _history(e)) for e in synchronous]
        for listed in self._listed():
            if listed["executionArn"] not in known:
                result = wait_for(sfn, listed["executionArn"])
                executions.append(Execution(result.arn, result.status, result.history))
        return Measurement(
            path=path,
            deliveries=deliveries,
            calls=calls,
            executions=tuple(executions),
            starter_log_bytes=len(self.starter_log.getvalue().encode("utf-8")) - log_start,
            starter_invocations=self.starter.invocations - invocations_start,
            records=self.source.stats.records - records_start,
            retry_delay_seconds=sum(self.aws.clock.retry_delays) + sum(self.aws.clock.wait_seconds),
            faults_injected=injected,
        )
