"""R1-R3 on a deployed stack: real SQS, Lambda, Step Functions, DynamoDB, SNS and EventBridge."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from botocore.exceptions import ClientError

from onceflow.ops.redrive import read_dead_letter, redrive
from tests.integration.conftest import DeployedStack, eventually
from tests.support import order, sqs_record

pytestmark = pytest.mark.integration


def _attribute(message: dict, name: str) -> str | None:
    return message.get("MessageAttributes", {}).get(name, {}).get("StringValue")


def _execution_input(deployed: DeployedStack, body: str, message_id: str) -> str:
    """The input the starter builds for this body, sent now (so its ttl lies in the future)."""
    from starter.formats import FORMATS
    from starter.messages import parse_record
    from starter.settings import Settings

    retention = int(deployed.parameters.get("RecordRetentionDays") or 35)
    settings = Settings("arn:unused", "https://unused", FORMATS["json"], "order_id", retention)
    record = sqs_record(body, message_id=message_id, sent_timestamp=int(time.time() * 1000))
    return parse_record(record, settings).execution_input


def test_a_new_event_is_written_once_published_and_marked_sent(deployed, inbox, run_id):
    deployed.send(json.dumps(order(run_id)))

    record = deployed.wait_until_sent(run_id)

    assert record["payload_hash"]["S"]
    assert deployed.business_rows(run_id) == 1  # R2
    assert inbox.count(run_id) >= 1  # R3


def test_duplicates_and_producer_resends_write_once(deployed, inbox, run_id):
    body = json.dumps(order(run_id))
    with ThreadPoolExecutor(max_workers=4) as pool:  # concurrent resends: new message ids, same event_id
        list(pool.map(lambda _: deployed.send(body), range(4)))

    deployed.wait_until_sent(run_id)
    deployed.send(body)  # a late resend, after `sent`: the already-done path

    assert deployed.business_rows(run_id) == 1
    assert inbox.count(run_id) >= 1


def test_a_poison_message_is_dead_lettered_with_its_reason(deployed, run_id):
    deployed.send(json.dumps({"order_id": run_id, "amount": "not a number"}))

    def ours(message: dict) -> bool:
        return _attribute(message, "event_id") == run_id

    [dead] = eventually(lambda: deployed.dead_letters(ours), 120, "the poison message in the DLQ")
    try:
        assert (_attribute(dead, "error"), _attribute(dead, "source")) == ("Onceflow.InvalidMessage", "starter")
        assert _attribute(dead, "field") and _attribute(dead, "rule")
        assert deployed.record(run_id) is None  # nothing recorded (R1: it is in the DLQ instead)
    finally:
        deployed.remove_dead_letters(ours)


def test_a_conflicting_payload_is_dead_lettered_and_overwrites_nothing(deployed, run_id):
    deployed.send(json.dumps(order(run_id, amount="10.00")))
    first = deployed.wait_until_sent(run_id)
    deployed.send(json.dumps(order(run_id, amount="99.00")))

    def ours(message: dict) -> bool:
        return _attribute(message, "event_id") == run_id

    [dead] = eventually(lambda: deployed.dead_letters(ours), 120, "the conflicting event in the DLQ")
    try:
        assert _attribute(dead, "error") == "Onceflow.PayloadConflict"
        assert deployed.record(run_id)["payload_hash"] == first["payload_hash"]
        assert deployed.business_rows(run_id) == 1
    finally:
        deployed.remove_dead_letters(ours)


def test_a_stopped_execution_reaches_the_dlq_through_the_safety_net_and_redrive_recovers_it(deployed, inbox, run_id):
    if deployed.parameters.get("StateMachineType", "STANDARD") != "STANDARD":
        pytest.skip("Express workflows send no execution status events: the safety net needs STANDARD")
    sqs, sfn = deployed.client("sqs"), deployed.client("stepfunctions")
    if deployed.dead_letters(lambda m: True):
        pytest.skip("the test stack's DLQ is not empty; this test redrives all of it, so empty it first")
    body = json.dumps(order(run_id))
    arn = sfn.start_execution(
        stateMachineArn=deployed.outputs["StateMachineArn"],
        name=f"{run_id}-stopped",
        input=_execution_input(deployed, body, run_id),
    )["executionArn"]
    try:
        sfn.stop_execution(executionArn=arn, error="Onceflow.IntegrationTest", cause="stopped by the test")
    except ClientError:
        if sfn.describe_execution(executionArn=arn)["status"] == "SUCCEEDED":
            pytest.skip("the execution succeeded before it could be stopped; run again")
        raise

    def caught(message: dict) -> bool:
        letter = read_dead_letter(message, sfn)
        return letter.source == "reconciler" and letter.execution_arn == arn

    # The reconciler: on the status change event, or at its 5-minute sweep if the event is lost.
    dead = eventually(lambda: deployed.dead_letters(caught), 420, "the safety net's dead letter")
    assert {m["Body"] for m in dead} == {body}  # the original SQS body
    assert {m["MessageAttributes"]["error"]["StringValue"] for m in dead} == {"Onceflow.IntegrationTest"}

    report = redrive(
        sqs, deployed.outputs["DeadLetterQueueUrl"], deployed.outputs["SourceQueueUrl"], False, None, sfn=sfn
    )

    assert report.moved >= 1 and {i.event_id for i in report.items} == {run_id}
    deployed.wait_until_sent(run_id)
    assert deployed.business_rows(run_id) == 1
    assert inbox.count(run_id) >= 1


def test_the_operations_resources_exist(deployed):
    alarms = deployed.client("cloudwatch").describe_alarms(AlarmNamePrefix=f"{deployed.name}-")["MetricAlarms"]
    assert len(alarms) >= 10
    rule = deployed.client("events").describe_rule(Name=deployed.outputs["SafetyNetRuleName"])
    assert rule["State"] == "ENABLED"
    assert "Onceflow.DeadLettered" in rule["EventPattern"]
