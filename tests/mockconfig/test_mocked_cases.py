"""Every test case of statemachine/test/MockConfigFile.json, started as `stateMachineArn#TestCase`.

Mocked states answer from the file and touch nothing; the states a test case does not name call the
(embedded) services for real. Each test asserts the path, the invocations per Task state and what the
tables and queues hold afterwards.
"""

from __future__ import annotations

import json

from tests.mockconfig.cases import (
    DEAD_LETTER,
    EVENT_ID,
    LOOK_UP,
    MARK_SENT,
    PUBLISH,
    RECORD,
    SAME_PAYLOAD,
    TO_DEAD_LETTER,
    WHAT_IS_LEFT,
    attempts,
    dead_letters,
    event_body,
    event_input,
    order_rows,
    run_case,
    seed_earlier_run,
    source_messages,
    state_rows,
)

NO_TASKS = {RECORD: 0, LOOK_UP: 0, PUBLISH: 0, MARK_SENT: 0, DEAD_LETTER: 0}


def test_happy_path_fully_mocked_writes_and_publishes_nothing(mock_stack, inbox):
    result = run_case(mock_stack, "HappyPath")

    assert result.status == "SUCCEEDED"
    assert result.path == [RECORD, PUBLISH, MARK_SENT]
    assert attempts(result) == {**NO_TASKS, RECORD: 1, PUBLISH: 1, MARK_SENT: 1}
    assert result.task_failures() == []
    # Every Task was mocked: the transaction, the publish and the update never reached a service.
    assert state_rows(mock_stack) == []
    assert order_rows(mock_stack) == []
    assert inbox.collect() == []
    assert dead_letters(mock_stack) == []


def test_publish_throttled_twice_then_succeeds_after_real_write(mock_stack, inbox):
    result = run_case(mock_stack, "PublishThrottledTwiceThenSucceeds")

    assert result.status == "SUCCEEDED"
    assert result.path == [RECORD, PUBLISH, MARK_SENT]
    assert attempts(result) == {**NO_TASKS, RECORD: 1, PUBLISH: 3, MARK_SENT: 1}
    assert [f["error"] for f in result.task_failures(PUBLISH)] == ["SNS.ThrottledException"] * 2
    # Record and Mark as sent were not mocked: they wrote for real.
    [state] = state_rows(mock_stack)
    assert (state["event_id"], state["status"], state["sent_by"]) == (EVENT_ID, "sent", result.arn)
    assert [row["order_id"] for row in order_rows(mock_stack)] == [EVENT_ID]
    assert inbox.collect() == [], "the publish that succeeded was the mocked one"
    assert dead_letters(mock_stack) == []


def test_publish_failing_beyond_retries_dead_letters_and_leaves_record_pending(mock_stack, inbox):
    result = run_case(mock_stack, "PublishFailsBeyondRetries")

    assert result.status == "FAILED"
    assert result.error == "Onceflow.DeadLettered"
    assert result.path == [RECORD, PUBLISH, TO_DEAD_LETTER, DEAD_LETTER, "Dead-lettered"]
    assert attempts(result) == {**NO_TASKS, RECORD: 1, PUBLISH: 6, DEAD_LETTER: 1}  # MaxAttempts 5: 1 + 5 retries
    assert {f["error"] for f in result.task_failures(PUBLISH)} == {"SNS.InternalErrorException"}
    [state] = state_rows(mock_stack)
    assert state["status"] == "pending", "a redrive publishes without rewriting"
    assert [row["order_id"] for row in order_rows(mock_stack)] == [EVENT_ID]
    [letter] = dead_letters(mock_stack)
    assert letter.body == json.dumps(event_body())
    assert letter.attributes["error"] == "SNS.InternalErrorException"
    assert letter.attributes["event_id"] == EVENT_ID
    assert letter.attributes["execution_arn"] == result.arn
    assert inbox.collect() == []
    assert source_messages(mock_stack) == []


def test_record_cancelled_already_sent_does_nothing(mock_stack, inbox):
    result = run_case(mock_stack, "RecordCancelledAlreadySent")

    assert result.status == "SUCCEEDED"
    assert result.path == [RECORD, LOOK_UP, WHAT_IS_LEFT, "Already sent"]
    assert attempts(result) == {**NO_TASKS, RECORD: 1, LOOK_UP: 1}
    assert [f["error"] for f in result.task_failures(RECORD)] == ["DynamoDb.TransactionCanceledException"]
    assert state_rows(mock_stack) == []
    assert order_rows(mock_stack) == []
    assert inbox.collect() == []
    assert dead_letters(mock_stack) == []


def test_record_cancelled_pending_publishes_and_marks_the_earlier_record_sent(mock_stack, inbox):
    earlier = "arn:aws:states:us-east-1:123456789012:execution:earlier:crashed-after-record"
    seed_earlier_run(mock_stack, "pending", earlier)  # what the crashed run left, and what the mocked lookup says

    result = run_case(mock_stack, "RecordCancelledPending")

    assert result.status == "SUCCEEDED"
    assert result.path == [RECORD, LOOK_UP, WHAT_IS_LEFT, PUBLISH, MARK_SENT]
    assert attempts(result) == {**NO_TASKS, RECORD: 1, LOOK_UP: 1, PUBLISH: 1, MARK_SENT: 1}
    # Publish and Mark as sent ran for real; the mocked Record rewrote nothing.
    [state] = state_rows(mock_stack)
    assert (state["status"], state["sent_by"], state["execution_arn"]) == ("sent", result.arn, earlier)
    [business] = order_rows(mock_stack)
    assert business["execution_arn"] == earlier
    [notification] = inbox.collect()
    assert notification.json == event_body()
    assert notification.attributes["event_id"] == EVENT_ID
    assert dead_letters(mock_stack) == []


def test_record_cancelled_different_payload_dead_letters_without_writing(mock_stack, inbox):
    result = run_case(mock_stack, "RecordCancelledDifferentPayload")

    assert result.status == "FAILED"
    assert result.error == "Onceflow.DeadLettered"
    assert result.path == [
        RECORD,
        LOOK_UP,
        WHAT_IS_LEFT,
        "Describe payload conflict",
        TO_DEAD_LETTER,
        DEAD_LETTER,
        "Dead-lettered",
    ]
    assert attempts(result) == {**NO_TASKS, RECORD: 1, LOOK_UP: 1, DEAD_LETTER: 1}
    assert state_rows(mock_stack) == []
    assert order_rows(mock_stack) == []
    [letter] = dead_letters(mock_stack)
    assert letter.attributes["error"] == "Onceflow.PayloadConflict"
    cause = letter.attributes["cause"]
    assert "0" * 64 in cause and event_input()["payload_hash"] in cause
    assert inbox.collect() == []


def test_record_cancelled_with_no_record_records_again_and_succeeds(mock_stack, inbox):
    result = run_case(mock_stack, "RecordCancelledNoRecordThenSucceeds")

    assert result.status == "SUCCEEDED"
    assert result.path == [
        RECORD,
        LOOK_UP,
        WHAT_IS_LEFT,
        "Record again?",
        "Start counting record retries",
        "Count record retry",
        "Back off before recording again",
        RECORD,  # entered again: Step Functions Local's invocation counter gives it response "1"
        PUBLISH,
        MARK_SENT,
    ]
    assert attempts(result) == {**NO_TASKS, RECORD: 2, LOOK_UP: 1, PUBLISH: 1, MARK_SENT: 1}
    assert "[TransactionConflict, None]" in result.task_failures(RECORD)[0]["cause"]
    # Record (both times) and Mark as sent were mocked; Publish was real.
    assert state_rows(mock_stack) == []
    assert order_rows(mock_stack) == []
    assert inbox.by_event_id() == {EVENT_ID: 1}
    assert dead_letters(mock_stack) == []


def test_record_cancelled_with_only_the_order_left_ends_already_done(mock_stack, inbox):
    """The state record expired (TTL) and only the business row's condition failed: nothing to do."""
    result = run_case(mock_stack, "RecordCancelledRecordExpired")

    assert result.status == "SUCCEEDED"
    assert result.path == [RECORD, LOOK_UP, WHAT_IS_LEFT, SAME_PAYLOAD, "Already done, record expired"]
    assert attempts(result) == {**NO_TASKS, RECORD: 1, LOOK_UP: 1}
    assert "[None, ConditionalCheckFailed]" in result.task_failures(RECORD)[0]["cause"]
    assert state_rows(mock_stack) == []
    assert order_rows(mock_stack) == []
    assert inbox.collect() == []
    assert dead_letters(mock_stack) == []


def test_record_cancelled_conflict_while_pending_dead_letters_unpublished(mock_stack, inbox):
    """The payload hash is compared before the status: a pending record with another payload is a conflict."""
    result = run_case(mock_stack, "RecordCancelledConflictWhilePending")

    assert result.path == [
        RECORD,
        LOOK_UP,
        WHAT_IS_LEFT,
        "Describe payload conflict",
        TO_DEAD_LETTER,
        DEAD_LETTER,
        "Dead-lettered",
    ]
    assert attempts(result) == {**NO_TASKS, RECORD: 1, LOOK_UP: 1, DEAD_LETTER: 1}
    [letter] = dead_letters(mock_stack)
    assert letter.attributes["error"] == "Onceflow.PayloadConflict"
    assert inbox.collect() == []
