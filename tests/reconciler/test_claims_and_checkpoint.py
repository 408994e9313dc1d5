"""The reconciler's three guards that runs one after another cannot show: the claim's condition
(two runs racing), the checkpoint of a run that stopped early, and the execution lookback.

Each test here fails with its guard taken out (checked by taking each out): the claim put
without its ConditionExpression dead-letters twice; a checkpoint saved by a run cut short by its
dead-letter budget loses the executions it left; EXECUTION_LOOKBACK_SECONDS=0 never finds an
execution that was still running when a sweep saved its checkpoint.
"""

from __future__ import annotations

import io
import json
import sys
import threading
import time
import types
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from moto.dynamodb.exceptions import ERROR_TYPE_PREFIX, DynamodbException
from moto.dynamodb.models import DynamoDBBackend

from onceflow.local.faults import inject
from onceflow.local.safety_net import status_change_event
from onceflow.ops.executions import wait_for
from onceflow.ops.observe import drain, scan
from tests.reconciler.conftest import reconciler_for, start_and_stop
from tests.support import RetryHold, execution_input, order

SCHEDULE_PERIOD = timedelta(minutes=5)  # template.yaml: the reconciler's rate(5 minutes)


def _checkpoint(stack, reconciler) -> int | None:
    table = reconciler.runtime.environment["RECONCILER_TABLE"]
    item = (
        stack.client("dynamodb")
        .get_item(TableName=table, Key={"pk": {"S": "checkpoint#executions"}}, ConsistentRead=True)
        .get("Item")
    )
    return int(item["swept_until"]["N"]) if item else None


def test_a_status_change_and_a_sweep_racing_for_one_execution_dead_letter_it_once(
    stack, reconciler, interrupts, monkeypatch
):
    """Both runs read "not settled" before either claims (held at a barrier right after that read):
    only the claim's condition stops the second from sending too."""
    reconciler.sweep()  # its clients made before the race (boto3's default session is not thread-safe)
    [stopped] = start_and_stop(stack, interrupts, ["order-raced"])
    event = status_change_event(stack.client("stepfunctions").describe_execution(executionArn=stopped.arn))
    claims = sys.modules["reconciler.claims"].Claims
    settled, settled_among = claims.settled, claims.settled_among
    both_read = threading.Barrier(2, timeout=10)
    raced: list[bool] = []

    def read(answer: bool) -> None:
        if len(raced) < 2:
            raced.append(answer)
            both_read.wait()  # the other run reads too before this one goes on to claim

    def settled_then_wait(self, key: str, now: int) -> bool:  # the status change's read
        answer = settled(self, key, now)
        if key.endswith(stopped.arn):
            read(answer)
        return answer

    def settled_among_then_wait(self, keys: list[str], now: int) -> set[str]:  # the sweep's batch read
        found = settled_among(self, keys, now)
        read_key = next((key for key in keys if key.endswith(stopped.arn)), None)
        if read_key is not None:
            read(read_key in found)
        return found

    monkeypatch.setattr(claims, "settled", settled_then_wait)
    monkeypatch.setattr(claims, "settled_among", settled_among_then_wait)
    with ThreadPoolExecutor(2) as pool:
        runs = [pool.submit(reconciler.status_change, event), pool.submit(reconciler.sweep)]
        outcomes = [run.result(timeout=30) for run in runs]

    assert raced == [False, False], "both runs found the execution unsettled before claiming"
    assert sorted(len(o["dead_lettered"]) for o in outcomes) == [0, 1]
    [dead] = drain(stack.client("sqs"), stack.dead_letter_queue_url)
    assert dead.attributes["execution_arn"] == stopped.arn


def test_a_sweep_stopped_by_its_budget_keeps_its_checkpoint_and_the_next_sends_the_rest(stack, interrupts, monkeypatch):
    """Three executions stopped before Record (no pending record: only ListExecutions finds them),
    swept two hours later by a run allowed one dead letter. Had it saved its checkpoint, the next
    run would list from then on and never see the other two."""
    monkeypatch.delenv("MAX_DEAD_LETTERS_PER_RUN", raising=False)  # the runtimes set it process-wide
    unbudgeted = reconciler_for(stack, 0, MAX_DEAD_LETTERS_PER_RUN="500")
    budgeted = reconciler_for(stack, 0, MAX_DEAD_LETTERS_PER_RUN="1")
    assert unbudgeted.sweep()["dead_lettered"] == []  # the checkpoint before the executions
    before = _checkpoint(stack, unbudgeted)
    stopped = start_and_stop(
        stack, interrupts, ["order-b1", "order-b2", "order-b3"], state="Record event and business item"
    )
    assert scan(stack.client("dynamodb"), stack.processed_events_table) == []
    _clock_ahead(monkeypatch, timedelta(hours=2))

    first = budgeted.sweep(after=timedelta(hours=2))
    assert (len(first["dead_lettered"]), first["complete"]) == (1, False)
    assert _checkpoint(stack, budgeted) == before
    rest = unbudgeted.sweep(after=timedelta(hours=2) + SCHEDULE_PERIOD)

    assert sorted(first["dead_lettered"] + rest["dead_lettered"]) == sorted(s.arn for s in stopped)
    assert rest["complete"] and _checkpoint(stack, unbudgeted) > before
    dead = drain(stack.client("sqs"), stack.dead_letter_queue_url)
    assert sorted(m.attributes["event_id"] for m in dead) == ["order-b1", "order-b2", "order-b3"]


def test_an_execution_running_when_a_sweep_saved_its_checkpoint_is_found_when_it_ends_badly(
    stack, reconciler, embedded_aws, monkeypatch
):
    """Held at Record's retry (throttled, nothing recorded) while a sweep runs and saves its
    checkpoint; then stopped, its status change lost: no pending record, no event. Only the
    lookback (listing executions that started before the checkpoint) finds it."""
    hold = RetryHold()
    monkeypatch.setattr(embedded_aws.clock, "sleep", hold.sleep)
    sfn = stack.client("stepfunctions")
    throttled = inject(
        DynamoDBBackend,
        "transact_write_items",
        lambda: DynamodbException(ERROR_TYPE_PREFIX + "ProvisionedThroughputExceededException", "Injected fault"),
        times=1,
        name="dynamodb.transact_write_items:ProvisionedThroughputExceeded",
    )
    with throttled as fault:
        started = sfn.start_execution(
            stateMachineArn=stack.state_machine_arn, name="order-long-1", input=execution_input(order("order-long"))
        )
        arn = started["executionArn"]
        try:
            hold.wait_until_reached()
            # The sweep runs a second into the execution (its schedule and its clock): the checkpoint,
            # in whole seconds, is then after the execution's start whatever the wall clock's fraction.
            _clock_ahead(monkeypatch, timedelta(seconds=1))
            during = reconciler.sweep(after=timedelta(seconds=1))
            checkpoint = _checkpoint(stack, reconciler)
            sfn.stop_execution(executionArn=arn, error="Operator.Stop", cause="stopped by hand")
        finally:
            hold.released.set()
        assert wait_for(sfn, arn).status == "ABORTED"
    assert fault.injected == 1
    assert (during["left_running"], during["dead_lettered"], during["complete"]) == (0, [], True)
    assert checkpoint is not None and sfn.describe_execution(executionArn=arn)["startDate"].timestamp() < checkpoint
    assert scan(stack.client("dynamodb"), stack.processed_events_table) == []

    after = reconciler.sweep(after=SCHEDULE_PERIOD)

    assert after["dead_lettered"] == [arn]
    [dead] = drain(stack.client("sqs"), stack.dead_letter_queue_url)
    assert (dead.attributes["event_id"], dead.body) == ("order-long", json.dumps(order("order-long")))


def _clock_ahead(monkeypatch: pytest.MonkeyPatch, by: timedelta) -> None:
    """The reconciler's wall clock (its checkpoint's upper bound) as if `by` had passed; nothing else's."""
    reconcile = sys.modules["reconciler.reconcile"]
    ahead = types.SimpleNamespace(time=lambda: time.time() + by.total_seconds(), monotonic=time.monotonic)
    monkeypatch.setattr(reconcile, "time", ahead)


def test_a_redriven_message_the_reconciler_dead_letters_keeps_its_redrive_count(stack, reconciler, interrupts):
    """The count a redrive gave the message travels in the execution input (`message.redrive_count`)
    to the reconciler's dead letter, as to the workflow's own: a redrive loop through an operator's
    stop, a timeout or a lost status event still shows."""
    from onceflow.local.event_source import SqsEventSource
    from onceflow.local.function_runtime import StarterRuntime
    from onceflow.ops.executions import wait_for_all
    from onceflow.ops.redrive import REDRIVE_COUNT, read_dead_letter

    interrupts.arm("order-again", "Publish notification", "stop")
    sqs = stack.client("sqs")
    sqs.send_message(
        QueueUrl=stack.source_queue_url,
        MessageBody=json.dumps(order("order-again")),
        MessageAttributes={REDRIVE_COUNT: {"DataType": "Number", "StringValue": "2"}},  # as a redrive sends it
    )
    starter = StarterRuntime(stack, log_stream=io.StringIO())
    SqsEventSource(sqs, stack.source_queue_url, stack.event_source, starter.invoke).run_until_empty()
    [stopped] = wait_for_all(stack.client("stepfunctions"), stack.state_machine_arn)
    assert [f.event_id for f in interrupts.fired] == ["order-again"] and stopped.status == "ABORTED"

    assert reconciler.sweep()["dead_lettered"] == [stopped.arn]

    [message] = sqs.receive_message(
        QueueUrl=stack.dead_letter_queue_url, MessageAttributeNames=["All"], MaxNumberOfMessages=1
    )["Messages"]
    letter = read_dead_letter(message)
    assert (letter.source, letter.redrive_count) == ("reconciler", 2)


class _LeavingUnprocessed:
    """The reconciler's DynamoDB client, whose BatchGetItem leaves the keys `left` unprocessed (as
    DynamoDB does under throttling), counting the reads it makes."""

    def __init__(self, client, left: set[str]):
        self._client, self._left = client, left
        self.batch_reads: list[int] = []
        self.single_reads: list[str] = []

    def batch_get_item(self, RequestItems):  # noqa: N803 (boto3's parameter name)
        [(table, request)] = RequestItems.items()
        self.batch_reads.append(len(request["Keys"]))
        assert request["ConsistentRead"] is True
        kept = [key for key in request["Keys"] if key["pk"]["S"] not in self._left]
        response = self._client.batch_get_item(RequestItems={table: {**request, "Keys": kept}})
        left = [key for key in request["Keys"] if key["pk"]["S"] in self._left]
        if left:
            response["UnprocessedKeys"] = {table: {"Keys": left, "ConsistentRead": True}}
        return response

    def get_item(self, **kwargs):
        self.single_reads.append(kwargs["Key"]["pk"]["S"])
        return self._client.get_item(**kwargs)


def test_markers_read_a_hundred_at_a_time_answer_as_each_read_on_its_own(stack, reconciler):
    """The sweeps read the markers of what they list with one consistent BatchGetItem per hundred
    keys (its limit), and find settled exactly the keys `settled` finds settled one by one: a live
    dead letter, a fresh claim, a marker the state machine's own dead letter left; not a stale
    claim, an expired marker or none. A key DynamoDB leaves unprocessed is read on its own."""
    claims_module = sys.modules["reconciler.claims"]
    table = reconciler.runtime.environment["RECONCILER_TABLE"]
    dynamodb = stack.client("dynamodb")
    now, stale = 1_800_000_000, 900
    markers = {
        "execution#dead-lettered": (claims_module.DEAD_LETTERED, now - 10, now + 100),
        "execution#fresh-claim": (claims_module.CLAIMED, now - 10, now + 100),
        "execution#stale-claim": (claims_module.CLAIMED, now - stale - 1, now + 100),
        "execution#expired": (claims_module.DEAD_LETTERED, now - 10, now),
        "execution#by-state-machine": (claims_module.LEFT_TO_THE_STATE_MACHINE, now - 10, now + 100),
        "execution#unprocessed-live": (claims_module.DEAD_LETTERED, now - 10, now + 100),
    }
    for key, (state, claimed_at, expires_at) in markers.items():
        dynamodb.put_item(
            TableName=table,
            Item={
                "pk": {"S": key},
                "state": {"S": state},
                "claimed_at": {"N": str(claimed_at)},
                "expires_at": {"N": str(expires_at)},
            },
        )
    keys = [*markers, *(f"execution#none-{i}" for i in range(150)), "execution#dead-lettered"]  # one twice
    client = _LeavingUnprocessed(dynamodb, left={"execution#unprocessed-live", "execution#none-7"})
    claims = claims_module.Claims(client, table, retention_seconds=1_209_600, stale_seconds=stale)

    found = claims.settled_among(keys, now)

    one_by_one = {key for key in dict.fromkeys(keys) if claims.settled(key, now)}
    assert (
        found
        == one_by_one
        == {
            "execution#dead-lettered",
            "execution#fresh-claim",
            "execution#by-state-machine",
            "execution#unprocessed-live",
        }
    )
    assert client.batch_reads == [100, 56]  # 156 distinct keys
    assert client.single_reads[:2] == ["execution#unprocessed-live", "execution#none-7"]
