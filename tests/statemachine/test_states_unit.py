"""Each state of statemachine/pipeline.asl.json, unit-tested with the TestState API.

Every call sends the whole definition (the file, with its `${...}` substitutions filled in) and a
`stateName`, and mocks the state's service call, so a test needs no tables, topic or queue and no
IAM role. Paths through the workflow are followed state by state: the output of one call is the
input of the next, as the execution would pass it.

Runs on the embedded engine by default; against the external Step Functions endpoint the suite is
pointed at (`AWS_ENDPOINT_URL_SFN`, see docs/TESTING.md); and against AWS itself with
`ONCEFLOW_TEST_STATE_ON_AWS=1` and credentials in the environment (TestState with mocks needs no
role and creates nothing). This module imports nothing of moto.

The expectations are the workflow's intended behaviour (SPEC.md, the execution-input and
state-record contracts), written out here rather than read from the ASL under test.
TestState: https://docs.aws.amazon.com/step-functions/latest/dg/test-state-isolation.html
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from onceflow_common import dead_letters

# ONCEFLOW_PIPELINE_ASL tests another copy of the workflow (a variant, or a deliberately broken one).
ASL = Path(
    os.environ.get("ONCEFLOW_PIPELINE_ASL")
    or Path(__file__).resolve().parents[2] / "statemachine" / "pipeline.asl.json"
)
ACCOUNT = "123456789012"
REGION = os.environ.get("AWS_DEFAULT_REGION", "us-east-1")
SUBSTITUTIONS = {
    "ProcessedEventsTable": "onceflow-processed-events",
    "BusinessTable": "onceflow-order-records",
    "NotificationTopicArn": f"arn:aws:sns:{REGION}:{ACCOUNT}:onceflow-notifications",
    "DeadLetterQueueUrl": f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/onceflow-dead-letters",
}

RECORD = "Record event and business item"
LOOK_UP = "Look up earlier record"
WHAT_IS_LEFT = "What is left to do?"
PUBLISH = "Publish notification"
MARK_SENT = "Mark as sent"
ALREADY_SENT = "Already sent"
EXPIRED = "Already done, record expired"
DEAD_LETTER = "Send to dead-letter queue"
# Where every Catch of a dead-letter path goes: the queue-type Choice before the send.
TO_DEAD_LETTER = "Dead-letter queue is FIFO?"
FIFO_DEAD_LETTER = "Send to FIFO dead-letter queue"
DEAD_LETTERED = "Dead-lettered"

# Budgets the workflow promises (literal on purpose: changing one is a decision, not a refactor).
PUBLISH_RETRIES = 5
RECORD_AGAIN_AT_MOST = 5
MARK_SENT_RETRIES = 4
CANCELLED = "DynamoDb.TransactionCanceledException"
CANCELLED_CAUSE = (
    "Transaction cancelled, please refer cancellation reasons for specific reasons "
    "[ConditionalCheckFailed, None] (Service: DynamoDb, Status Code: 400, Request ID: test)"
)
CONFLICT_CAUSE = (
    "Transaction cancelled, please refer cancellation reasons for specific reasons "
    "[TransactionConflict, None] (Service: DynamoDb, Status Code: 400, Request ID: test)"
)
PAYLOAD = {"order_id": "order-1", "amount": 42, "items": ["book"]}
BODY = json.dumps(PAYLOAD)
INPUT = {
    "event_id": "order-1",
    "payload_hash": "a" * 64,
    "payload": PAYLOAD,
    "received_at": "2026-12-01T08:00:00.000Z",
    "ttl": 1767254400,
    "pending_shard": "07",
    "message": {"id": "11111111-2222-3333-4444-555555555555", "body": BODY, "redrive_count": "0"},
}
OTHER_HASH = "b" * 64


def definition_text() -> str:
    """The ASL file as `sam deploy` makes it: every `${Name}` replaced; an unknown one is an error."""
    text = ASL.read_text()
    names = set(re.findall(r"\$\{([A-Za-z0-9]+)\}", text))
    unknown = names - set(SUBSTITUTIONS)
    assert not unknown, f"the ASL uses substitutions this test does not fill: {sorted(unknown)}"
    return re.sub(r"\$\{([A-Za-z0-9]+)\}", lambda match: SUBSTITUTIONS[match.group(1)], text)


def _client(endpoint_url: str | None) -> Any:
    # TestState goes to the `sync-` host prefix: right on AWS, unresolvable on a local endpoint.
    on_aws = endpoint_url is None or (urlparse(endpoint_url).hostname or "").endswith(".amazonaws.com")
    kwargs: dict[str, Any] = {"region_name": REGION, "config": Config(inject_host_prefix=on_aws)}
    if endpoint_url is not None:
        kwargs["endpoint_url"] = endpoint_url
    if endpoint_url is not None and not on_aws:
        kwargs.update(aws_access_key_id="testing", aws_secret_access_key="testing")
    return boto3.client("stepfunctions", **kwargs)


def _offers_test_state(client: Any) -> str | None:
    """Why the endpoint cannot run these tests (Step Functions Local and plain moto have no TestState), or None."""
    try:
        client.test_state(definition=json.dumps({"Type": "Succeed"}))
    except (ClientError, BotoCoreError) as error:
        return f"the Step Functions endpoint does not offer TestState ({error})"
    return None


@pytest.fixture(scope="module")
def sfn(request: pytest.FixtureRequest) -> Any:
    if os.environ.get("ONCEFLOW_TEST_STATE_ON_AWS") == "1":
        return _client(None)
    endpoints = request.getfixturevalue("endpoints")
    if endpoints is None:
        # Looked up here, not declared: the module also runs against external endpoints and AWS.
        return _client(request.getfixturevalue("embedded_aws").endpoint_url)
    client = _client(endpoints.urls["stepfunctions"])
    missing = _offers_test_state(client)
    if missing:
        pytest.skip(missing)
    return client


Run = Callable[..., dict[str, Any]]


@pytest.fixture(scope="module")
def run(sfn: Any) -> Run:
    """TestState one state of the pipeline; `mock` is a result (any JSON) or an (error, cause) pair."""
    text = definition_text()

    def run_state(
        state: str, state_input: dict[str, Any], mock: Any = None, retries_made: int | None = None
    ) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "definition": text,
            "stateName": state,
            "input": json.dumps(state_input),
            "inspectionLevel": "DEBUG",
        }
        if isinstance(mock, tuple):
            kwargs["mock"] = {"errorOutput": {"error": mock[0], "cause": mock[1]}}
        elif mock is not None:
            kwargs["mock"] = {"result": json.dumps(mock)}
        if retries_made is not None:
            kwargs["stateConfiguration"] = {"retrierRetryCount": retries_made}
        response = sfn.test_state(**kwargs)
        response.pop("ResponseMetadata", None)
        return response

    return run_state


def output(response: dict[str, Any]) -> dict[str, Any]:
    return json.loads(response["output"])


def sent_parameters(response: dict[str, Any]) -> dict[str, Any]:
    """What the state sent to the service (after Parameters)."""
    return json.loads(response["inspectionData"]["afterParameters"])


def item(attributes: dict[str, str]) -> dict[str, Any]:
    return {"Item": {name: {"S": value} for name, value in attributes.items()}}


def lookup_result(state: dict[str, str] | None, order: dict[str, str] | None) -> dict[str, Any]:
    """TransactGetItems' answer: one response per Get, without Item when there is none."""
    return {"Responses": [item(state) if state else {}, item(order) if order else {}]}


def follow(run: Run, state: str, state_input: dict[str, Any], until: set[str], limit: int = 8) -> tuple[str, Any]:
    """Run the mock-free states (Choice, Pass, Wait) from `state` until one of `until` is next."""
    current, data = state, state_input
    for _ in range(limit):
        response = run(current, data)
        assert response["status"] == "SUCCEEDED", response
        current, data = response["nextState"], output(response)
        if current in until:
            return current, data
    raise AssertionError(f"no state of {sorted(until)} reached from {state} within {limit} states")


def after_cancelled_record(run: Run, state_input: dict[str, Any] = INPUT, cause: str = CANCELLED_CAUSE) -> dict:
    response = run(RECORD, state_input, mock=(CANCELLED, cause))
    assert (response["status"], response["nextState"]) == ("CAUGHT_ERROR", LOOK_UP)
    return output(response)


def decide(run: Run, state: dict[str, str] | None, order: dict[str, str] | None) -> tuple[str, dict[str, Any]]:
    """Record was cancelled, the look-up found `state` / `order`: the state the workflow goes to."""
    looked_up = run(LOOK_UP, after_cancelled_record(run), mock=lookup_result(state, order))
    assert (looked_up["status"], looked_up["nextState"]) == ("SUCCEEDED", WHAT_IS_LEFT)
    chosen = run(WHAT_IS_LEFT, output(looked_up))
    assert chosen["status"] == "SUCCEEDED"
    return chosen["nextState"], output(chosen)


def dead_letter_reason(run: Run, state: str, data: dict[str, Any]) -> dict[str, str]:
    """Follow a path to the dead-letter state; return the reason attributes it would send."""
    if state != DEAD_LETTER:
        state, data = follow(run, state, data, until={DEAD_LETTER, PUBLISH, RECORD, ALREADY_SENT, EXPIRED})
    assert state == DEAD_LETTER
    response = run(DEAD_LETTER, data, mock={"MessageId": "dl-1", "MD5OfMessageBody": "0" * 32})
    attributes = sent_parameters(response)["MessageAttributes"]
    return {name: value["StringValue"] for name, value in attributes.items()}


# Record event and business item


def test_record_writes_the_pending_state_record_and_the_business_row_in_one_transaction(run: Run) -> None:
    response = run(RECORD, INPUT, mock={})
    assert (response["status"], response["nextState"]) == ("SUCCEEDED", PUBLISH)
    assert output(response) == INPUT  # the task's result is not kept in the state
    puts = [entry["Put"] for entry in sent_parameters(response)["TransactItems"]]
    assert [put["TableName"] for put in puts] == [
        SUBSTITUTIONS["ProcessedEventsTable"],
        SUBSTITUTIONS["BusinessTable"],
    ]
    state, business = puts
    assert state["ConditionExpression"] == "attribute_not_exists(event_id)"
    assert business["ConditionExpression"] == "attribute_not_exists(order_id)"
    record = {name: value for name, value in state["Item"].items()}
    assert record["event_id"] == {"S": "order-1"}
    assert record["status"] == {"S": "pending"}
    assert record["payload_hash"] == {"S": INPUT["payload_hash"]}
    assert record["pending_shard"] == {"S": "07"}
    assert set(record["pending_since"]) == {"S"} and record["pending_since"]["S"]
    assert record["execution_arn"]["S"].startswith("arn:aws:states:")
    assert "ttl" not in record  # a pending record never expires
    row = business["Item"]
    assert row["order_id"] == {"S": "order-1"}
    assert row["payload_hash"] == {"S": INPUT["payload_hash"]}
    assert row["execution_arn"] == record["execution_arn"]


def test_a_cancelled_record_goes_to_the_look_up(run: Run) -> None:
    response = run(RECORD, INPUT, mock=(CANCELLED, CANCELLED_CAUSE))
    assert response["status"] == "CAUGHT_ERROR"
    assert response["nextState"] == LOOK_UP
    assert (response["error"], response["cause"]) == (CANCELLED, CANCELLED_CAUSE)
    kept = output(response)
    assert {key: kept[key] for key in INPUT} == INPUT  # the delivery goes on unchanged
    assert {"Error": CANCELLED, "Cause": CANCELLED_CAUSE} in kept.values()


def test_a_throttled_record_is_retried_then_dead_lettered(run: Run) -> None:
    throttled = ("DynamoDb.ThrottlingException", "Rate of requests exceeds the allowed throughput.")
    assert run(RECORD, INPUT, mock=throttled, retries_made=0)["status"] == "RETRIABLE"
    exhausted = run(RECORD, INPUT, mock=throttled, retries_made=99)
    assert (exhausted["status"], exhausted["nextState"]) == ("CAUGHT_ERROR", TO_DEAD_LETTER)


def test_an_unexpected_record_error_is_dead_lettered_at_once(run: Run) -> None:
    missing = ("DynamoDb.ResourceNotFoundException", "Requested resource not found")
    response = run(RECORD, INPUT, mock=missing, retries_made=0)
    assert (response["status"], response["nextState"]) == ("CAUGHT_ERROR", TO_DEAD_LETTER)
    reason = dead_letter_reason(run, TO_DEAD_LETTER, output(response))
    assert reason[dead_letters.ERROR] == "DynamoDb.ResourceNotFoundException"


# Look up earlier record, and the Choice on what it found


def test_look_up_reads_both_items_consistently_and_leaves_the_payload_out(run: Run) -> None:
    response = run(LOOK_UP, after_cancelled_record(run), mock=lookup_result(None, None))
    assert (response["status"], response["nextState"]) == ("SUCCEEDED", WHAT_IS_LEFT)
    gets = [entry["Get"] for entry in sent_parameters(response)["TransactItems"]]
    assert [get["TableName"] for get in gets] == [
        SUBSTITUTIONS["ProcessedEventsTable"],
        SUBSTITUTIONS["BusinessTable"],
    ]
    assert gets[0]["Key"] == {"event_id": {"S": "order-1"}}
    assert gets[1]["Key"] == {"order_id": {"S": "order-1"}}
    assert all("payload" not in re.split(r"[ ,]+", get.get("ProjectionExpression", "payload")) for get in gets)


def test_sent_with_the_same_payload_is_already_done(run: Run) -> None:
    state = {"event_id": "order-1", "status": "sent", "payload_hash": INPUT["payload_hash"]}
    order = {"order_id": "order-1", "payload_hash": INPUT["payload_hash"]}
    assert decide(run, state, order)[0] == ALREADY_SENT


def test_pending_with_the_same_payload_publishes_only(run: Run) -> None:
    state = {"event_id": "order-1", "status": "pending", "payload_hash": INPUT["payload_hash"]}
    order = {"order_id": "order-1", "payload_hash": INPUT["payload_hash"]}
    next_state, data = decide(run, state, order)
    assert next_state == PUBLISH
    published = run(PUBLISH, data, mock={"MessageId": "m-1"})
    assert (published["status"], published["nextState"]) == ("SUCCEEDED", MARK_SENT)


@pytest.mark.parametrize("status", ["pending", "sent"])
def test_another_payload_under_the_same_event_id_is_a_conflict_whatever_the_status(run: Run, status: str) -> None:
    """Conflict is decided before status: a reused id is never published, even while pending."""
    state = {"event_id": "order-1", "status": status, "payload_hash": OTHER_HASH}
    order = {"order_id": "order-1", "payload_hash": OTHER_HASH}
    next_state, data = decide(run, state, order)
    assert next_state not in (PUBLISH, ALREADY_SENT)
    reason = dead_letter_reason(run, next_state, data)
    assert "conflict" in reason[dead_letters.ERROR].lower()
    assert OTHER_HASH in reason[dead_letters.CAUSE] and INPUT["payload_hash"] in reason[dead_letters.CAUSE]


def test_no_state_record_but_the_same_order_row_is_done_and_expired(run: Run) -> None:
    order = {"order_id": "order-1", "payload_hash": INPUT["payload_hash"]}
    next_state, data = decide(run, None, order)
    if next_state != EXPIRED:
        next_state, _ = follow(run, next_state, data, until={EXPIRED, DEAD_LETTER, PUBLISH, RECORD})
    assert next_state == EXPIRED
    assert run(EXPIRED, data)["status"] == "SUCCEEDED"


def test_no_state_record_and_another_order_row_is_a_conflict(run: Run) -> None:
    next_state, data = decide(run, None, {"order_id": "order-1", "payload_hash": OTHER_HASH})
    reason = dead_letter_reason(run, next_state, data)
    assert "conflict" in reason[dead_letters.ERROR].lower()


@pytest.mark.parametrize(
    "state",
    [
        {"event_id": "order-1", "status": "archived", "payload_hash": "a" * 64},  # a status it never writes
        {"event_id": "order-1", "status": "pending"},  # no payload_hash
        {"event_id": "order-1", "payload_hash": "a" * 64},  # no status
    ],
)
def test_a_state_record_the_workflow_did_not_write_is_dead_lettered(run: Run, state: dict[str, str]) -> None:
    next_state, data = decide(run, state, {"order_id": "order-1", "payload_hash": INPUT["payload_hash"]})
    assert next_state not in (PUBLISH, ALREADY_SENT, RECORD)
    reason = dead_letter_reason(run, next_state, data)
    assert reason[dead_letters.EVENT_ID] == "order-1"


def test_an_order_row_without_payload_hash_is_a_conflict(run: Run) -> None:
    next_state, data = decide(run, None, {"order_id": "order-1"})
    reason = dead_letter_reason(run, next_state, data)
    assert "conflict" in reason[dead_letters.ERROR].lower()


def test_a_look_up_cancelled_by_a_concurrent_transaction_is_retried_then_dead_lettered(run: Run) -> None:
    cancelled = after_cancelled_record(run)
    assert run(LOOK_UP, cancelled, mock=(CANCELLED, CONFLICT_CAUSE), retries_made=0)["status"] == "RETRIABLE"
    exhausted = run(LOOK_UP, cancelled, mock=(CANCELLED, CONFLICT_CAUSE), retries_made=99)
    assert (exhausted["status"], exhausted["nextState"]) == ("CAUGHT_ERROR", TO_DEAD_LETTER)


def test_nothing_recorded_records_again_a_bounded_number_of_times(run: Run) -> None:
    """A cancellation that wrote nothing (TransactionConflict) is recorded again, then dead-lettered."""
    data: dict[str, Any] = INPUT
    cancellations = 0
    for _ in range(RECORD_AGAIN_AT_MOST + 2):
        cancellations += 1
        cancelled = after_cancelled_record(run, data, cause=CONFLICT_CAUSE)
        looked_up = output(run(LOOK_UP, cancelled, mock=lookup_result(None, None)))
        next_state, data = follow(run, WHAT_IS_LEFT, looked_up, until={RECORD, DEAD_LETTER, PUBLISH})
        if next_state == DEAD_LETTER:
            break
        assert next_state == RECORD
        assert {key: data[key] for key in INPUT} == INPUT
    assert next_state == DEAD_LETTER
    assert cancellations == RECORD_AGAIN_AT_MOST + 1  # recorded again 5 times, the 6th cancellation dead-letters
    reason = dead_letter_reason(run, DEAD_LETTER, data)
    assert "TransactionConflict" in reason[dead_letters.CAUSE]


# Publish notification


def test_publish_sends_the_payload_to_the_topic_then_marks_sent(run: Run) -> None:
    pending = decide(run, {"event_id": "order-1", "status": "pending", "payload_hash": INPUT["payload_hash"]}, None)
    response = run(PUBLISH, INPUT, mock={"MessageId": "m-1"})
    assert (response["status"], response["nextState"]) == ("SUCCEEDED", MARK_SENT)
    sent = sent_parameters(response)
    assert sent["TopicArn"] == SUBSTITUTIONS["NotificationTopicArn"]
    assert json.loads(sent["Message"]) == PAYLOAD
    assert pending[0] != RECORD  # a pending record is never written again


def test_publish_retries_a_throttled_publish_then_dead_letters_it(run: Run) -> None:
    throttled = ("SNS.ThrottledException", "Rate exceeded")
    for retries_made in range(PUBLISH_RETRIES):
        response = run(PUBLISH, INPUT, mock=throttled, retries_made=retries_made)
        assert response["status"] == "RETRIABLE", (retries_made, response)
        assert (response["error"], response["cause"]) == throttled
    exhausted = run(PUBLISH, INPUT, mock=throttled, retries_made=PUBLISH_RETRIES)
    assert (exhausted["status"], exhausted["nextState"]) == ("CAUGHT_ERROR", TO_DEAD_LETTER)
    reason = dead_letter_reason(run, TO_DEAD_LETTER, output(exhausted))
    assert (reason[dead_letters.ERROR], reason[dead_letters.CAUSE]) == throttled


def test_publish_to_a_missing_topic_is_dead_lettered_without_retrying(run: Run) -> None:
    response = run(PUBLISH, INPUT, mock=("SNS.NotFoundException", "Topic does not exist"), retries_made=0)
    assert (response["status"], response["nextState"]) == ("CAUGHT_ERROR", TO_DEAD_LETTER)


# Mark as sent


def test_mark_as_sent_ends_the_execution_and_lets_the_record_expire(run: Run) -> None:
    response = run(MARK_SENT, {**INPUT, "notification": {"message_id": "m-1"}}, mock={})
    assert response["status"] == "SUCCEEDED"
    assert "nextState" not in response  # the last state: no separate Done state
    update = sent_parameters(response)
    assert update["TableName"] == SUBSTITUTIONS["ProcessedEventsTable"]
    assert update["Key"] == {"event_id": {"S": "order-1"}}
    assert "attribute_exists(event_id)" in update["ConditionExpression"]
    values = update["ExpressionAttributeValues"]
    assert {"S": "sent"} in values.values()
    assert {"N": str(INPUT["ttl"])} in values.values()  # ttl is written now, and only now
    assert {"S": INPUT["payload_hash"]} in values.values()  # only this payload's record is marked
    removed = update["UpdateExpression"].split("REMOVE", 1)[1]
    assert "pending_since" in removed and "pending_shard" in removed


def test_mark_as_sent_retries_throttling_then_dead_letters(run: Run) -> None:
    throttled = ("DynamoDB.ThrottlingException", "Rate of requests exceeds the allowed throughput.")
    for retries_made in range(MARK_SENT_RETRIES):
        assert run(MARK_SENT, INPUT, mock=throttled, retries_made=retries_made)["status"] == "RETRIABLE"
    exhausted = run(MARK_SENT, INPUT, mock=throttled, retries_made=MARK_SENT_RETRIES)
    assert (exhausted["status"], exhausted["nextState"]) == ("CAUGHT_ERROR", TO_DEAD_LETTER)


def test_mark_as_sent_that_finds_no_matching_record_is_dead_lettered(run: Run) -> None:
    failed = ("DynamoDB.ConditionalCheckFailedException", "The conditional request failed")
    response = run(MARK_SENT, INPUT, mock=failed, retries_made=0)
    assert (response["status"], response["nextState"]) == ("CAUGHT_ERROR", TO_DEAD_LETTER)


# Send to dead-letter queue, and the end states


def test_dead_letter_sends_the_original_body_with_the_reason_attributes(run: Run) -> None:
    failed = {**INPUT, "error": {"Error": "SNS.NotFoundException", "Cause": "Topic does not exist"}}
    response = run(DEAD_LETTER, failed, mock={"MessageId": "dl-1", "MD5OfMessageBody": "0" * 32})
    assert (response["status"], response["nextState"]) == ("SUCCEEDED", DEAD_LETTERED)
    sent = sent_parameters(response)
    assert sent["QueueUrl"] == SUBSTITUTIONS["DeadLetterQueueUrl"]
    assert sent["MessageBody"] == BODY  # the original SQS body, byte for byte
    attributes = {name: value["StringValue"] for name, value in sent["MessageAttributes"].items()}
    assert set(attributes) <= dead_letters.WRITTEN_ATTRIBUTES
    assert attributes[dead_letters.REDRIVE_COUNT] == INPUT["message"]["redrive_count"]
    assert attributes[dead_letters.ERROR] == "SNS.NotFoundException"
    assert attributes[dead_letters.CAUSE] == "Topic does not exist"  # plain text, not JSON
    assert attributes[dead_letters.SOURCE] == dead_letters.FROM_STATE_MACHINE
    assert attributes[dead_letters.EVENT_ID] == "order-1"
    assert attributes[dead_letters.SOURCE_MESSAGE_ID] == INPUT["message"]["id"]
    assert attributes[dead_letters.EXECUTION_ARN].startswith("arn:aws:states:")


def test_a_standard_source_s_letter_goes_to_the_standard_send(run: Run) -> None:
    failed = {**INPUT, "error": {"Error": "SNS.NotFoundException", "Cause": "Topic does not exist"}}
    response = run(TO_DEAD_LETTER, failed)
    assert (response["status"], response["nextState"]) == ("SUCCEEDED", DEAD_LETTER)


def test_a_fifo_source_s_letter_keeps_its_group_and_gets_a_deduplication_id_per_entry(run: Run) -> None:
    """A FIFO dead-letter queue needs MessageGroupId and MessageDeduplicationId
    (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html)."""
    message = {**INPUT["message"], "group_id": "customer-7"}
    failed = {**INPUT, "message": message, "error": {"Error": "SNS.NotFoundException", "Cause": "gone"}}
    chosen = run(TO_DEAD_LETTER, failed)
    assert (chosen["status"], chosen["nextState"]) == ("SUCCEEDED", FIFO_DEAD_LETTER)
    response = run(FIFO_DEAD_LETTER, output(chosen), mock={"MessageId": "dl-1", "MD5OfMessageBody": "0" * 32})
    assert (response["status"], response["nextState"]) == ("SUCCEEDED", DEAD_LETTERED)
    sent = sent_parameters(response)
    assert sent["MessageGroupId"] == "customer-7"
    assert len(sent["MessageDeduplicationId"]) == 64  # SHA-256 of the execution and the state's entry
    assert sent["MessageBody"] == BODY
    standard = sent_parameters(run(DEAD_LETTER, failed, mock={"MessageId": "dl-2", "MD5OfMessageBody": "0" * 32}))
    # Otherwise the standard send's request: same queue, body and reason attributes.
    assert set(sent) - set(standard) == {"MessageGroupId", "MessageDeduplicationId"}
    assert sent["QueueUrl"] == standard["QueueUrl"]
    assert set(sent["MessageAttributes"]) == set(standard["MessageAttributes"])


def test_a_failed_dead_letter_send_is_retried(run: Run) -> None:
    failed = {**INPUT, "error": {"Error": "SNS.NotFoundException", "Cause": "Topic does not exist"}}
    response = run(
        DEAD_LETTER, failed, mock=("SQS.SdkClientException", "Unable to execute HTTP request"), retries_made=0
    )
    assert response["status"] == "RETRIABLE"


def test_dead_lettered_fails_the_execution_with_its_own_error(run: Run) -> None:
    response = run(DEAD_LETTERED, INPUT)
    assert (response["status"], response["error"]) == ("FAILED", "Onceflow.DeadLettered")


@pytest.mark.parametrize("state", [ALREADY_SENT, EXPIRED])
def test_the_already_done_states_succeed(run: Run, state: str) -> None:
    response = run(state, INPUT)
    assert response["status"] == "SUCCEEDED" and "nextState" not in response
