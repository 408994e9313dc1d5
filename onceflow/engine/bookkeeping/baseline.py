"""Back to just-deployed without redeploying: what the test suite does between tests.

Deploying the stack (CloudFormation on moto, TTL, the state machine) costs about 0.3 s of CPU and
0.8 s of wall time; the suite did it before every test. `Baseline.capture()` records what a deploy
made (state machines with their definitions, revisions, versions and aliases, tables, queues, topics, subscriptions: moto's objects
themselves); `restore()` brings the engine back to that: running executions are stopped and
waited for, every execution forgotten (and the metrics that counted them), table items and queued messages dropped, whatever a test
created besides (its own queues, subscriptions, tables, state machines) dropped, and what it
deleted (the topic, to make Publish fail) put back. What restore does not put back (IAM,
CloudFormation, EventBridge, queue attributes a test changed) no test changes; a test that needs
more calls `EmbeddedAws.reset()` and deploys its own stack. A baseline restores the backends that are
live: after a reset by any EmbeddedAws in the process (moto's backends are the process's), or with
another deployment live, worlds.py brings its deployment's backends back first (`Deployed.restore`).

It works on moto's backends directly, under the request lock, because AWS has no API to forget an
execution (and purging a queue through the API is limited to once a minute).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from moto.cloudwatch.models import CloudWatchBackend, cloudwatch_backends
from moto.core import model_instances
from moto.dynamodb.models import dynamodb_backends
from moto.sns.models import sns_backends
from moto.sqs.models import sqs_backends
from moto.stepfunctions.parser import utils as parser_utils
from moto.stepfunctions.parser.models import stepfunctions_parser_backends

from onceflow.engine.stepfunctions.api.state_machines import REVISION_ATTRIBUTE, revision_of

THREAD_JOIN_SECONDS = 10.0


def moto_needs() -> list[Any]:
    """What restoring reads or changes in the pinned moto (checked by engine/moto_shape.py)."""
    from moto.dynamodb.models.table import Table
    from moto.sns.models import SNSBackend, Topic
    from moto.sqs.models import Queue
    from moto.stepfunctions.models import StateMachine

    from onceflow.engine.moto_shape import need

    return [
        need(parser_utils, "TMP_THREADS"),
        need(Table, "__init__", "table_name"),  # Table.items: the table's items, keyed by hash (and range)
        need(Queue, "__init__", "name"),  # Queue._messages, _pending_messages, deleted_messages
        need(SNSBackend, "__init__", "region_name", "account_id"),  # SNSBackend.topics, .subscriptions
        need(model_instances, "reset_model_data"),
        need(Topic, "__init__", "name"),  # Topic.sent_notifications: every notification it sent
        need(CloudWatchBackend, "put_metric_data"),  # CloudWatchBackend.metric_data: every data point
        # StateMachine.versions, .aliases, .latest_version_number, .latest_version (stepfunctions/api/versions.py's too)
        need(StateMachine, "__init__", "arn", "name", "definition", "roleArn", "backend"),
    ]


@dataclass(frozen=True)
class Baseline:
    """The deployed resources themselves (moto's objects): a test that deleted one gets it back."""

    account_id: str
    region: str
    state_machines: list[Any]
    definitions: dict[str, str]  # state machine ARN -> definition (a test may update it)
    # state machine ARN -> its versions, aliases, version counter and revisionId (a test may publish)
    published: dict[str, tuple[Any, ...]]
    tables: dict[str, Any]
    queues: dict[str, Any]
    topics: dict[str, Any]
    subscriptions: dict[str, Any]

    @classmethod
    def capture(cls, lock: threading.RLock, account_id: str, region: str) -> Baseline:
        with lock:
            state_machines = list(_sfn(account_id, region).state_machines)
            return cls(
                account_id=account_id,
                region=region,
                state_machines=state_machines,
                definitions={sm.arn: sm.definition for sm in state_machines},
                published={sm.arn: _published(sm) for sm in state_machines},
                tables=dict(_dynamodb(account_id, region).tables),
                queues=dict(_sqs(account_id, region).queues),
                topics=dict(_sns(account_id, region).topics),
                subscriptions=dict(_sns(account_id, region).subscriptions),
            )

    def restore(self, lock: threading.RLock) -> None:
        stop_executions(lock, self.account_id, self.region)
        with lock:
            self._restore_step_functions()
            self._restore_dynamodb()
            self._restore_sqs()
            self._restore_sns()
            self._restore_cloudwatch()
            release_between_runs(self.account_id, self.region)

    def _restore_step_functions(self) -> None:
        backend = _sfn(self.account_id, self.region)
        backend.state_machines[:] = self.state_machines
        for state_machine in self.state_machines:
            state_machine.executions.clear()
            state_machine.definition = self.definitions[state_machine.arn]
            versions, aliases, state_machine.latest_version_number, state_machine.latest_version, revision = (
                self.published[state_machine.arn]
            )
            _replace(state_machine.versions, versions)
            _replace(state_machine.aliases, aliases)
            state_machine.__dict__.pop(REVISION_ATTRIBUTE, None)
            if revision is not None:
                setattr(state_machine, REVISION_ATTRIBUTE, revision)

    def _restore_dynamodb(self) -> None:
        tables = _dynamodb(self.account_id, self.region).tables
        _replace(tables, self.tables)
        for table in tables.values():
            table.items.clear()

    def _restore_sqs(self) -> None:
        queues = _sqs(self.account_id, self.region).queues
        _replace(queues, self.queues)
        for queue in queues.values():
            queue._messages = []
            queue._pending_messages = set()
            queue.deleted_messages = set()
            queue.__dict__.pop("_onceflow_handle_index", None)  # sqs/receipts.py's receipt-handle index
            queue.__dict__.pop("_onceflow_deduplication", None)  # sqs/fifo.py's deduplication window

    def _restore_cloudwatch(self) -> None:
        """No metric data: the executions they counted are forgotten (cloudwatch/execution_metrics.py), and a
        deploy puts none."""
        backend = cloudwatch_backends[self.account_id][self.region]
        backend.metric_data = []
        backend.__dict__.pop("_onceflow_execution_metrics", None)

    def _restore_sns(self) -> None:
        backend = _sns(self.account_id, self.region)
        _replace(backend.topics, self.topics)
        _replace(backend.subscriptions, self.subscriptions)


def stop_executions(lock: threading.RLock, account_id: str, region: str) -> None:
    """Every running execution stopped, and its thread waited for."""
    with lock:
        for state_machine in _sfn(account_id, region).state_machines:
            for execution in state_machine.executions:
                if execution.status == "RUNNING":
                    execution.stop(stop_date=datetime.now(UTC), error="Onceflow.TestReset", cause="test reset")
    # Outside the lock: a stopped execution's thread may need it once more to see the stop.
    for thread in list(parser_utils.TMP_THREADS):
        if thread.is_alive() and thread is not threading.current_thread():
            thread.join(timeout=THREAD_JOIN_SECONDS)
    with lock:
        parser_utils.TMP_THREADS[:] = [thread for thread in parser_utils.TMP_THREADS if thread.is_alive()]


def release_between_runs(account_id: str, region: str) -> None:
    """What moto keeps of a run that restoring the resources alone does not forget, and that grew
    with every schedule of a long property run (issue 21: about 1 GB after 10,000 schedules): its
    registry of every model instance ever made (SQS messages, executions, ... kept only for its
    /moto-api/data.json dashboard), every notification a restored topic ever sent, and the
    engine's indexes of items and executions that are gone (speedups/index_query.py, speedups/execution_index.py)."""
    model_instances.reset_model_data()
    for topic in _sns(account_id, region).topics.values():
        topic.sent_notifications = []
    for table in _dynamodb(account_id, region).tables.values():
        table.__dict__.pop("_onceflow_gsi_keys", None)
    for state_machine in _sfn(account_id, region).state_machines:
        state_machine.__dict__.pop("_onceflow_execution_index", None)


def _published(state_machine: Any) -> tuple[Any, ...]:
    """What stepfunctions/api/versions.py keeps of a machine: its versions, aliases, version counter,
    latest version, revisionId."""
    return (
        dict(state_machine.versions),
        dict(state_machine.aliases),
        state_machine.latest_version_number,
        state_machine.latest_version,
        revision_of(state_machine),
    )


def _replace(live: dict[Any, Any], deployed: dict[Any, Any]) -> None:
    """Make `live` hold exactly the deployed objects, in their order."""
    live.clear()
    live.update(deployed)


def _sfn(account_id: str, region: str) -> Any:
    return stepfunctions_parser_backends[account_id][region]


def _dynamodb(account_id: str, region: str) -> Any:
    return dynamodb_backends[account_id][region]


def _sqs(account_id: str, region: str) -> Any:
    return sqs_backends[account_id][region]


def _sns(account_id: str, region: str) -> Any:
    return sns_backends[account_id][region]
