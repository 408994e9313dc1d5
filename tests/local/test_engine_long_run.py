"""What keeps the cost of an event independent of how many ran before it (issue 21): execution
lookups through an index (`execution_index`), GSI queries through the index's own keys
(`index_query`), and TransactWriteItems rolled back item by item (`item_rollback`) instead of a
copy of every table. Each counted assertion here fails with its speed-up switched off
(`ONCEFLOW_SPEEDUPS_OFF=<name>`); the answers are the ones AWS documents."""

from __future__ import annotations

import copy
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError
from moto.dynamodb.models.table import Table
from moto.sqs import models as sqs_models
from moto.stepfunctions.parser.models import stepfunctions_parser_backends
from moto.utilities.paginator import Paginator

from onceflow.engine import ACCOUNT_ID, REGION
from onceflow.engine.speedups import execution_index
from onceflow.ops.executions import wait_for
from tests.local.test_engine_speedups import _ReadCounting, counting, run_orders
from tests.support import execution_input, order, run_execution

pytestmark = pytest.mark.embedded_only(reason="counts what happens inside the embedded engine")


class _CountedWalks(list):  # type: ignore[type-arg]
    """A state machine's executions list that counts how often the test's own requests walk it
    (the direct transport answers them on this thread; execution threads are left out)."""

    walks = 0

    def __iter__(self) -> Iterator[Any]:
        if threading.current_thread() is threading.main_thread():
            self.walks += 1
        return super().__iter__()


def _executions_counted(stack: Any) -> _CountedWalks:
    backend = stepfunctions_parser_backends[ACCOUNT_ID][REGION]
    state_machine = next(sm for sm in backend.state_machines if sm.arn == stack.state_machine_arn)
    state_machine.executions = _CountedWalks(state_machine.executions)
    return state_machine.executions


def test_executions_are_found_without_walking_every_execution(stack):
    """DescribeExecution, GetExecutionHistory, StopExecution, ListExecutions and StartExecution's
    name check: moto walks the state machine's executions for each (sorting them for each page)."""
    sfn = stack.client("stepfunctions")
    run_orders(stack, "indexed", 3)
    executions = _executions_counted(stack)
    listed = sfn.list_executions(stateMachineArn=stack.state_machine_arn)["executions"]
    arn = listed[0]["executionArn"]
    assert sfn.describe_execution(executionArn=arn)["status"] == "SUCCEEDED"
    assert sfn.get_execution_history(executionArn=arn)["events"]
    sfn.stop_execution(executionArn=arn)  # a finished execution: nothing changes
    with pytest.raises(ClientError, match="ExecutionAlreadyExists"):
        sfn.start_execution(stateMachineArn=stack.state_machine_arn, name="indexed-0", input=execution_input(order()))
    with pytest.raises(ClientError, match="ExecutionDoesNotExist"):
        sfn.describe_execution(executionArn=arn[: -len("indexed-0")] + "no-such-execution")
    assert executions.walks == 0


def test_executions_are_listed_newest_first_page_by_page(stack):
    """https://docs.aws.amazon.com/step-functions/latest/apireference/API_ListExecutions.html:
    results are sorted by time, newest first; nextToken pages on."""
    sfn = stack.client("stepfunctions")
    run_orders(stack, "paged", 5)
    pages = sfn.get_paginator("list_executions").paginate(
        stateMachineArn=stack.state_machine_arn, PaginationConfig={"PageSize": 2}
    )
    listed = [e for page in pages for e in page["executions"]]
    assert [e["name"] for e in listed] == [f"paged-{i}" for i in reversed(range(5))]
    assert [e["startDate"] for e in listed] == sorted((e["startDate"] for e in listed), reverse=True)
    succeeded = sfn.list_executions(stateMachineArn=stack.state_machine_arn, statusFilter="SUCCEEDED")
    assert [e["name"] for e in succeeded["executions"]] == [e["name"] for e in listed]
    assert sfn.list_executions(stateMachineArn=stack.state_machine_arn, statusFilter="FAILED")["executions"] == []


def test_a_page_of_executions_is_found_without_testing_every_execution_before_it(stack):
    """A ListExecutions nextToken names the page's first execution; moto tests every execution
    listed before it against the token (in Python), so paging through k executions cost k squared
    (the safety net's sweep after a busy spell, `trace`). Pages and tokens are moto's."""
    sfn = stack.client("stepfunctions")
    run_orders(stack, "tokened", 7)
    with counting(Paginator, "_check_predicate") as checks:
        pages = list(
            sfn.get_paginator("list_executions").paginate(
                stateMachineArn=stack.state_machine_arn, PaginationConfig={"PageSize": 2}
            )
        )
    listed = [e["name"] for page in pages for e in page["executions"] if e["name"].startswith("tokened-")]
    assert listed == [f"tokened-{i}" for i in reversed(range(7))]
    assert checks["_check_predicate"] == len(pages) - 1  # one per page after the first (moto: 15 for 4 pages)


def test_a_status_filter_reads_the_executions_still_running_not_every_execution(stack):
    """ListExecutions with statusFilter (the reconciler lists FAILED, TIMED_OUT and ABORTED on every
    run, `onceflow start` and long_run.py list RUNNING): moto tests every execution's status for it.
    An execution that has ended is not read again; the answers are those of the filter."""
    sfn = stack.client("stepfunctions")
    run_orders(stack, "filtered", 4)
    executions = _executions_counted(stack)
    backend = stepfunctions_parser_backends[ACCOUNT_ID][REGION]
    state_machine = next(sm for sm in backend.state_machines if sm.arn == stack.state_machine_arn)

    def names(status: str) -> list[str]:
        listed = sfn.list_executions(stateMachineArn=stack.state_machine_arn, statusFilter=status)["executions"]
        return [e["name"] for e in listed if e["name"].startswith("filtered-")]

    assert names("SUCCEEDED") == [f"filtered-{i}" for i in reversed(range(4))]
    assert executions.walks == 0
    looked_at = execution_index.index_of(state_machine).looked_at
    for status in ("RUNNING", "FAILED", "TIMED_OUT", "ABORTED", "SUCCEEDED"):
        assert names(status) == ([f"filtered-{i}" for i in reversed(range(4))] if status == "SUCCEEDED" else [])
    assert executions.walks == 0
    assert execution_index.index_of(state_machine).looked_at == looked_at  # nothing runs: nothing read again


@pytest.fixture
def sparse_table(stack):
    """A table with a sparse GSI (its partition key only on some items), as `pending-since` is."""
    dynamodb = stack.client("dynamodb")
    dynamodb.create_table(
        TableName="sparse-probe",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[
            {"AttributeName": "id", "AttributeType": "S"},
            {"AttributeName": "lane", "AttributeType": "S"},
            {"AttributeName": "since", "AttributeType": "S"},
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by-lane",
                "KeySchema": [
                    {"AttributeName": "lane", "KeyType": "HASH"},
                    {"AttributeName": "since", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    for i in range(40):
        item = {"id": {"S": f"item-{i:02d}"}}
        if i % 10 == 0:  # 4 items in the index: lanes a, b, a, b
            item |= {"lane": {"S": "ab"[i // 10 % 2]}, "since": {"S": f"2026-01-{i:02d}"}}
        dynamodb.put_item(TableName="sparse-probe", Item=item)
    return dynamodb


def _in_lane(dynamodb: Any, lane: str, **extra: Any) -> list[str]:
    items = dynamodb.query(
        TableName="sparse-probe",
        IndexName="by-lane",
        KeyConditionExpression="lane = :lane",
        ExpressionAttributeValues={":lane": {"S": lane}},
        **extra,
    )["Items"]
    return [item["id"]["S"] for item in items]


def test_a_gsi_query_reads_the_items_of_its_key_not_every_item(sparse_table):
    dynamodb = sparse_table
    assert _in_lane(dynamodb, "a") == ["item-00", "item-20"]  # the first query of the index: one walk
    with counting(Table, "all_items") as calls:
        assert _in_lane(dynamodb, "b") == ["item-10", "item-30"]
        assert _in_lane(dynamodb, "a", ScanIndexForward=False) == ["item-20", "item-00"]
    assert calls["all_items"] == 0  # moto: every item of the table, sorted, for each query


def test_a_gsi_query_follows_every_write(sparse_table):
    """An item enters the index when it gets the key attributes and leaves it when it loses them
    or is deleted (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.Writes);
    a cancelled transaction changes nothing (TransactWriteItems is all or nothing)."""
    dynamodb = sparse_table
    assert _in_lane(dynamodb, "a") == ["item-00", "item-20"]
    dynamodb.update_item(  # in place, as MarkSent removes pending_shard
        TableName="sparse-probe", Key={"id": {"S": "item-00"}}, UpdateExpression="REMOVE lane, since"
    )
    dynamodb.delete_item(TableName="sparse-probe", Key={"id": {"S": "item-10"}})
    dynamodb.update_item(  # into the index by an update
        TableName="sparse-probe",
        Key={"id": {"S": "item-05"}},
        UpdateExpression="SET lane = :a, since = :since",
        ExpressionAttributeValues={":a": {"S": "a"}, ":since": {"S": "2026-02-01"}},
    )
    dynamodb.transact_write_items(  # into the index by a transaction's Put, from one lane to another by its Update
        TransactItems=[
            {
                "Put": {
                    "TableName": "sparse-probe",
                    "Item": {"id": {"S": "new"}, "lane": {"S": "b"}, "since": {"S": "0"}},
                }
            },
            {
                "Update": {
                    "TableName": "sparse-probe",
                    "Key": {"id": {"S": "item-30"}},
                    "UpdateExpression": "SET lane = :a",
                    "ExpressionAttributeValues": {":a": {"S": "a"}},
                }
            },
        ]
    )
    with pytest.raises(ClientError, match="TransactionCanceled"):
        dynamodb.transact_write_items(
            TransactItems=[
                {
                    "Put": {
                        "TableName": "sparse-probe",
                        "Item": {"id": {"S": "x"}, "lane": {"S": "a"}, "since": {"S": "1"}},
                    }
                },
                {
                    "ConditionCheck": {
                        "TableName": "sparse-probe",
                        "Key": {"id": {"S": "item-01"}},
                        "ConditionExpression": "attribute_exists(nothing)",
                    }
                },
            ]
        )
    assert _in_lane(dynamodb, "a") == ["item-20", "item-30", "item-05"]  # sorted by `since`
    assert _in_lane(dynamodb, "b") == ["new"]
    first = dynamodb.query(  # paging: Limit and ExclusiveStartKey over the index's items
        TableName="sparse-probe",
        IndexName="by-lane",
        KeyConditionExpression="lane = :a",
        ExpressionAttributeValues={":a": {"S": "a"}},
        Limit=2,
    )
    rest = _in_lane(dynamodb, "a", ExclusiveStartKey=first["LastEvaluatedKey"])
    assert [i["id"]["S"] for i in first["Items"]] + rest == ["item-20", "item-30", "item-05"]


def _table_dump(dynamodb: Any) -> list[dict[str, Any]]:
    return sorted(dynamodb.scan(TableName="sparse-probe")["Items"], key=lambda item: item["id"]["S"])


def test_a_cancelled_transaction_is_undone_item_by_item_without_copying_the_table(sparse_table, monkeypatch):
    """TransactWriteItems is all or nothing
    (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html):
    a Put of a new item, an Update and a Delete of existing ones, then a failed condition: every
    item is as before, attribute for attribute, the index too. moto deep-copies every table the
    transaction names before it starts (400 ms at 20,000 items)."""
    dynamodb = sparse_table
    before, indexed_before = _table_dump(dynamodb), _in_lane(dynamodb, "a")
    copies = []

    def counted_deepcopy(self: Any, memo: dict[int, Any]) -> Any:
        copies.append(self.name)
        return copy._reconstruct(self, memo, *self.__reduce_ex__(4))  # type: ignore[attr-defined]

    monkeypatch.setattr(Table, "__deepcopy__", counted_deepcopy, raising=False)
    with pytest.raises(ClientError) as cancelled:
        dynamodb.transact_write_items(
            TransactItems=[
                {
                    "Put": {
                        "TableName": "sparse-probe",
                        "Item": {"id": {"S": "new"}, "lane": {"S": "a"}, "since": {"S": "0"}},
                    }
                },
                {
                    "Update": {
                        "TableName": "sparse-probe",
                        "Key": {"id": {"S": "item-20"}},
                        "UpdateExpression": "SET lane = :b, extra = :x",
                        "ExpressionAttributeValues": {":b": {"S": "b"}, ":x": {"N": "1"}},
                    }
                },
                {"Delete": {"TableName": "sparse-probe", "Key": {"id": {"S": "item-03"}}}},
                {
                    "ConditionCheck": {
                        "TableName": "sparse-probe",
                        "Key": {"id": {"S": "item-01"}},
                        "ConditionExpression": "attribute_exists(nothing)",
                    }
                },
            ]
        )
    assert cancelled.value.response["Error"]["Code"] == "TransactionCanceledException"
    reasons = [r["Code"] for r in cancelled.value.response["CancellationReasons"]]
    assert reasons == ["None", "None", "None", "ConditionalCheckFailed"]
    assert _table_dump(dynamodb) == before
    assert _in_lane(dynamodb, "a") == indexed_before and _in_lane(dynamodb, "b") == ["item-10", "item-30"]
    assert copies == []


def test_a_long_run_prune_forgets_the_notifications_moto_keeps(stack, embedded_aws):
    """moto keeps every notification a topic sent (for tests that read its backend); a long run's
    history budget (engine/bookkeeping/retention.py) drops them with what else it prunes."""
    from moto.sns.models import sns_backends

    from onceflow.engine.bookkeeping.retention import Retention

    run_orders(stack, "notified", 2)
    topic = sns_backends[ACCOUNT_ID][REGION].topics[stack.notification_topic_arn]
    assert len(topic.sent_notifications) == 2
    with embedded_aws.lock:
        Retention(max_histories=1).prune()
    assert topic.sent_notifications == []


@pytest.fixture
def backlog(stack):
    """A queue of 200 messages, 10 of them received (in flight), as the source queue with a backlog."""
    sqs = stack.client("sqs")
    url = sqs.create_queue(QueueName="receipts-probe")["QueueUrl"]
    for start in range(0, 200, 10):
        sqs.send_message_batch(
            QueueUrl=url, Entries=[{"Id": str(i), "MessageBody": f"m{start + i}"} for i in range(10)]
        )
    received = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=60)["Messages"]
    return sqs, url, received, sqs_models.sqs_backends[ACCOUNT_ID][REGION].queues["receipts-probe"]


def test_a_deleted_message_s_receipt_handles_are_not_kept(backlog):
    """https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_DeleteMessage.html:
    deleting with a handle that is not the message's latest "succeeds, but the message might not be
    deleted"; a handle SQS never issued is ReceiptHandleIsInvalid. moto keeps every deleted
    message's handles for it (a set that grew by about 0.6 MB per 1,000 messages of a long run);
    the engine recognises the handles it issued instead, and keeps none."""
    sqs, url, received, queue = backlog
    sqs.delete_message_batch(
        QueueUrl=url, Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(received)]
    )
    assert len(queue.deleted_messages) == 0 and not queue.__dict__.get("deleted_messages")
    assert len(queue._onceflow_handle_index) == 0  # nothing indexed of the deleted ones either
    sqs.delete_message(QueueUrl=url, ReceiptHandle=received[0]["ReceiptHandle"])  # again: succeeds
    again = sqs.delete_message_batch(QueueUrl=url, Entries=[{"Id": "0", "ReceiptHandle": received[1]["ReceiptHandle"]}])
    assert [entry["Id"] for entry in again["Successful"]] == ["0"] and not again.get("Failed")
    forged = "x" * len(received[0]["ReceiptHandle"])  # the shape of a handle, never issued
    for never_issued in (forged, "never-issued"):
        with pytest.raises(ClientError, match="ReceiptHandleIsInvalid"):
            sqs.delete_message(QueueUrl=url, ReceiptHandle=never_issued)
    with pytest.raises(ClientError, match="ReceiptHandleIsInvalid"):  # moto's answer for a deleted message's, kept
        sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=received[2]["ReceiptHandle"], VisibilityTimeout=5)
    counts = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])["Attributes"]
    assert counts["ApproximateNumberOfMessages"] == "190"


def test_a_receipt_handle_finds_its_message_without_walking_the_queue(backlog):
    """ChangeMessageVisibility and DeleteMessage by handle, with 190 messages queued behind the 10 in
    flight: moto tests every queued message's handles for each (and the engine's visibility note
    and queue counts walked the queue twice more per ChangeMessageVisibility)."""
    sqs, url, received, queue = backlog
    queue._messages = messages = _ReadCounting(queue._messages)
    for message in received[:5]:
        sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0)
    sqs.change_message_visibility_batch(
        QueueUrl=url,
        Entries=[
            {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 30}
            for i, m in enumerate(received[5:])
        ],
    )
    for message in received[5:]:
        sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    assert messages.read == 0, messages.read
    counts = sqs.get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    )["Attributes"]
    assert counts == {"ApproximateNumberOfMessages": "195", "ApproximateNumberOfMessagesNotVisible": "0"}
    again = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=5)["Messages"]
    assert [m["Body"] for m in again] == [f"m{i}" for i in range(5)]  # visible again, first in the queue


def test_executions_of_one_revision_share_one_snapshot_of_the_state_machine(stack):
    """moto deep-copies the state machine for every execution it starts and keeps the copy with the
    execution (one per execution of a long run); the engine takes one per revision, a new one when
    the machine changes. An execution of a version still answers the definition it ran
    (https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeStateMachineForExecution.html)."""
    sfn = stack.client("stepfunctions")
    arn = stack.state_machine_arn
    first = sfn.describe_state_machine(stateMachineArn=arn)["definition"]
    version_1 = sfn.publish_state_machine_version(stateMachineArn=arn)["stateMachineVersionArn"]
    revised = json.dumps({**json.loads(first), "Comment": "revised"})
    version_2 = sfn.update_state_machine(stateMachineArn=arn, definition=revised, publish=True)[
        "stateMachineVersionArn"
    ]
    started: dict[str, list[str]] = {}
    for target, label in ((arn, "latest"), (version_1, "v1"), (version_2, "v2")):
        for i in range(3):
            name = f"snapshot-{label}-{i}"
            sfn.start_execution(stateMachineArn=target, name=name, input=execution_input(order(name)))
            started.setdefault(label, []).append(name)
    backend = stepfunctions_parser_backends[ACCOUNT_ID][REGION]
    state_machine = next(sm for sm in backend.state_machines if sm.arn == arn)
    ran = {e.name: e for e in state_machine.executions if e.name.startswith("snapshot-")}
    assert len({id(e.state_machine) for e in ran.values()}) == 3  # moto: 9, one per execution
    for names in started.values():
        assert len({id(ran[name].state_machine) for name in names}) == 1
    for label, expected in (("v1", first), ("v2", revised), ("latest", revised)):
        for name in started[label]:
            answer = sfn.describe_state_machine_for_execution(executionArn=ran[name].execution_arn)
            assert answer["definition"] == expected, (label, name)


def test_a_log_budget_keeps_the_newest_events_of_a_group_and_says_what_it_dropped(stack, monkeypatch):
    """moto keeps every log event put (a long run: about 1.4 of the starter's lines per message);
    `onceflow start --log-budget N` keeps the newest N per log group, oldest first across its streams,
    and `onceflow logs` says how many were dropped. AWS keeps events by the group's retention instead
    (https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/Working-with-log-groups-and-streams.html)."""
    from typer.testing import CliRunner

    from onceflow.cli import app
    from onceflow.engine.bookkeeping.log_budget import LogBudget
    from onceflow.ops.logs import LOG_BUDGET_TAG, LOG_DROPPED_TAG, dropped_note

    for owner, name, replacement in LogBudget(4).patches():
        monkeypatch.setattr(owner, name, replacement)
    logs = stack.client("logs")
    group = stack.outputs["StarterLogGroupName"]
    now = int(time.time() * 1000)
    try:
        for stream, times in (("budget-a", (1, 3, 5)), ("budget-b", (2, 4, 6))):
            logs.create_log_stream(logGroupName=group, logStreamName=stream)
            events = [{"timestamp": now + t, "message": f"line {t}"} for t in times]
            logs.put_log_events(logGroupName=group, logStreamName=stream, logEvents=events)
        kept = [e["message"] for e in logs.filter_log_events(logGroupName=group)["events"]]
        assert sorted(kept) == ["line 3", "line 4", "line 5", "line 6"]  # moto: all 6
        stored = {
            s["logStreamName"]: s["storedBytes"] for s in logs.describe_log_streams(logGroupName=group)["logStreams"]
        }
        assert stored == {"budget-a": 12, "budget-b": 12}
        logs.put_log_events(
            logGroupName=group, logStreamName="budget-a", logEvents=[{"timestamp": now + 7, "message": "line 7"}]
        )
        kept = [e["message"] for e in logs.filter_log_events(logGroupName=group)["events"]]
        assert sorted(kept) == ["line 4", "line 5", "line 6", "line 7"]
        note = dropped_note(logs, group)
        assert note is not None and note.startswith(f"3 older lines of {group} were dropped") and "newest 4 " in note
        shown = CliRunner().invoke(app, ["logs", "--endpoint", stack.endpoint_url, "--stack-name", stack.stack_name])
        assert shown.exit_code == 0 and note in shown.stderr and "line 7" in shown.stdout
    finally:
        logs.untag_log_group(logGroupName=group, tags=[LOG_BUDGET_TAG, LOG_DROPPED_TAG])
        for stream in ("budget-a", "budget-b"):
            logs.delete_log_stream(logGroupName=group, logStreamName=stream)
    assert dropped_note(logs, group) is None


def test_an_execution_never_redriven_keeps_no_redrive_record(stack):
    """ListExecutions and DescribeExecution answer redriveCount 0 for an execution never redriven
    (https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeExecution.html); the
    engine made and kept a redrive record on every execution they answered (one per execution of a
    long run, read by every ListExecutions page)."""
    sfn = stack.client("stepfunctions")
    run_orders(stack, "unredriven", 2)
    listed = sfn.list_executions(stateMachineArn=stack.state_machine_arn)["executions"]
    described = sfn.describe_execution(executionArn=listed[0]["executionArn"])
    assert [e["redriveCount"] for e in listed] == [0, 0] and described["redriveCount"] == 0
    assert described["redriveStatus"] == "NOT_REDRIVABLE"  # SUCCEEDED
    backend = stepfunctions_parser_backends[ACCOUNT_ID][REGION]
    state_machine = next(sm for sm in backend.state_machines if sm.arn == stack.state_machine_arn)
    assert [e for e in state_machine.executions if "_onceflow_redrive" in vars(e)] == []


def test_a_pruned_execution_keeps_its_input_and_output_as_text(stack, embedded_aws):
    """A pruned execution (the history budget, engine/bookkeeping/retention.py) still answers its input and
    output (https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeExecution.html),
    byte for byte; it keeps them as compact JSON text instead of moto's parsed values, and no
    `{"included": true}` details per execution (a long run kept all of those per execution)."""
    from onceflow.engine.bookkeeping.retention import Retention

    sfn = stack.client("stepfunctions")
    run_orders(stack, "compacted", 3)
    listed = sfn.list_executions(stateMachineArn=stack.state_machine_arn)["executions"]
    before = [sfn.describe_execution(executionArn=e["executionArn"]) for e in listed]
    with embedded_aws.lock:
        assert Retention(max_histories=0).prune() == 3
    after = [sfn.describe_execution(executionArn=e["executionArn"]) for e in listed]
    for was, now in zip(before, after, strict=True):
        del was["ResponseMetadata"], now["ResponseMetadata"]
        assert now == was and now["inputDetails"] == now["outputDetails"] == {"included": True}
    backend = stepfunctions_parser_backends[ACCOUNT_ID][REGION]
    state_machine = next(sm for sm in backend.state_machines if sm.arn == stack.state_machine_arn)
    for execution in state_machine.executions:
        kept = vars(execution)
        assert not {"input_data", "output", "input_details", "output_details"} & set(kept), sorted(kept)
        assert json.loads(kept["_onceflow_input_data_text"]) == execution.input_data  # parsed again when read


@pytest.mark.parametrize(
    ("result", "text"),
    [
        ({"name": "Zoe", "n": [1, 2.5], "none": None}, '{"name":"Zoe","n":[1,2.5],"none":null}'),
        ({"name": "Zo\u00eb", "emoji": "\U0001f600"}, '{"name":"Zo\\u00eb","emoji":"\\ud83d\\ude00"}'),  # escaped
    ],
)
def test_a_pruned_execution_s_output_is_described_as_before_it_was_pruned(
    stack, embedded_aws, result, text, monkeypatch
):
    """DescribeExecution answers the output of a pruned execution from the text it keeps, and that text
    is what AWS answers, compact and with non-ASCII characters escaped
    (https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeExecution.html)."""
    from onceflow.engine.bookkeeping import retention
    from onceflow.engine.bookkeeping.retention import Retention

    sfn = stack.client("stepfunctions")
    role = sfn.describe_state_machine(stateMachineArn=stack.state_machine_arn)["roleArn"]
    definition = {"StartAt": "P", "States": {"P": {"Type": "Pass", "Result": result, "End": True}}}
    name = f"pruned-output-{len(text)}"
    machine = sfn.create_state_machine(name=name, definition=json.dumps(definition), roleArn=role)["stateMachineArn"]
    arn = sfn.start_execution(stateMachineArn=machine, input="{}")["executionArn"]
    assert wait_for(sfn, arn).status == "SUCCEEDED"
    before = sfn.describe_execution(executionArn=arn)
    with embedded_aws.lock:
        assert Retention(max_histories=0).prune() >= 1
    parses = []
    loads = retention.json.loads
    monkeypatch.setattr(retention.json, "loads", lambda text, **kw: parses.append(text) or loads(text, **kw))
    after = sfn.describe_execution(executionArn=arn)
    monkeypatch.undo()
    assert after["output"] == before["output"] == text
    assert {k: v for k, v in after.items() if k != "ResponseMetadata"} == {
        k: v for k, v in before.items() if k != "ResponseMetadata"
    }
    # The kept text is answered as it is, not parsed; a non-ASCII one is parsed and written as moto writes it.
    output_parses = [parsed for parsed in parses if isinstance(parsed, str) and parsed.startswith('{"name":')]
    assert (len(output_parses) == 0) == json.dumps(result, ensure_ascii=False).isascii()
    sfn.delete_state_machine(stateMachineArn=machine)


def test_a_failed_execution_whose_history_was_pruned_is_described_as_not_redrivable(stack, embedded_aws):
    """DescribeExecution of a FAILED execution counts its history's events (AWS refuses a redrive past
    25,000); once the history budget pruned it, there is nothing to resume from and it says so."""
    from onceflow.engine.bookkeeping.retention import Retention

    sfn = stack.client("stepfunctions")
    run_execution(stack, order("pruned-conflict"), name="pruned-first")
    conflict = run_execution(stack, order("pruned-conflict", amount=99), name="pruned-conflict")
    assert conflict.status == "FAILED"
    kept = sfn.describe_execution(executionArn=conflict.arn)
    assert kept["redriveStatus"] == "REDRIVABLE"
    with embedded_aws.lock:
        assert Retention(max_histories=0).prune() == 2
    pruned = sfn.describe_execution(executionArn=conflict.arn)
    assert pruned["status"] == "FAILED" and pruned["redriveStatus"] == "NOT_REDRIVABLE"
    assert pruned["redriveStatusReason"] == "Execution history is no longer kept by this endpoint (history budget)"
