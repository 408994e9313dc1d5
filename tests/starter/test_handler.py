"""The real starter handler on the embedded AWS: partial batch responses, execution names,
redelivery, producer resends, dead-lettering and its failure, Step Functions errors, logs."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from typing import Any

import pytest
from moto.core.exceptions import AWSError
from moto.dynamodb.responses import DynamoHandler
from moto.stepfunctions.parser.models import StepFunctionsParserBackend

from onceflow.local.faults import Fault, inject, sns_publish_failures, sqs_send_failures
from onceflow.ops.executions import list_executions, wait_for, wait_for_all
from onceflow.ops.observe import scan
from starter.messages import MAX_EXECUTION_INPUT_BYTES
from starter.naming import execution_name
from starter.settings import ConfigurationError
from tests.starter.helpers import dead_letters, failed_ids, log_lines, metric_totals
from tests.support import execution_input, order, sqs_event, sqs_record


def start_execution_fails_for(event_id: str) -> AbstractContextManager[Fault]:
    """StartExecution denied for one event_id's executions (a 400: boto3 does not retry it)."""
    prefix = execution_name(event_id, "any").rsplit("-", 1)[0] + "-"

    def applies(state_machine_arn: str, name: str | None = None, *args: Any, **kwargs: Any) -> bool:
        return bool(name and name.startswith(prefix))

    def error() -> Exception:
        return AWSError("Injected fault: not authorized", exception_type="AccessDeniedException")

    return inject(StepFunctionsParserBackend, "start_execution", error, applies=applies)


def executions(stack) -> list[dict[str, Any]]:
    return list_executions(stack.client("stepfunctions"), stack.state_machine_arn)


def records_logged(starter_logs, message: str) -> list[dict[str, Any]]:
    return [line for line in log_lines(starter_logs) if line.get("message") == message]


def test_batch_reports_exactly_the_records_that_can_be_retried(stack, starter):
    good = [sqs_record(order(f"order-{i}")) for i in range(3)]
    poison = [sqs_record("not json"), sqs_record(order("order-9", amount=-5))]
    unlucky = sqs_record(order("order-denied"))
    batch = [good[0], poison[0], unlucky, good[1], poison[1], good[2]]

    with start_execution_fails_for("order-denied") as fault:
        response = starter.invoke(sqs_event(*batch))

    assert fault.injected == 1
    assert response == {"batchItemFailures": [{"itemIdentifier": unlucky["messageId"]}]}
    # Poison is dead-lettered and acknowledged, not retried.
    assert set(dead_letters(stack)) == {r["messageId"] for r in poison}
    expected = {execution_name(f"order-{i}", good[i]["messageId"]) for i in range(3)}
    assert {e["name"] for e in executions(stack)} == expected


def test_redelivery_of_one_message_starts_one_execution(stack, starter, starter_logs):
    record = sqs_record(order("order-1"), message_id="7b0b6b62-5c1a-4f8e-9d4c-1d2f3a4b5c6d")

    first = starter.invoke(sqs_event(record))
    # Still running (same name and input: Step Functions answers with the running execution)
    # or already finished (ExecutionAlreadyExists): a success either way.
    at_once = starter.invoke(sqs_event(record))
    sfn = stack.client("stepfunctions")
    [started] = executions(stack)
    assert wait_for(sfn, started["executionArn"]).status == "SUCCEEDED"
    after_finish = starter.invoke(sqs_event(record))  # sent: the pre-check acknowledges it

    assert first == at_once == after_finish == {"batchItemFailures": []}
    assert [e["name"] for e in executions(stack)] == [execution_name("order-1", record["messageId"])]
    outcomes = [line["message"] for line in log_lines(starter_logs) if line.get("message_id") == record["messageId"]]
    assert outcomes[0] == "Execution started"
    # Still running: StartExecution answers with the running execution (same name and input);
    # closed: ExecutionAlreadyExists; already marked sent: the pre-check.
    assert outcomes[1] in (
        "Execution started",
        "Delivery already handed over: execution exists",
        "Already sent with this payload: acknowledged without an execution",
    )
    assert outcomes[-1] == "Already sent with this payload: acknowledged without an execution"
    assert len(outcomes) == 3
    assert metric_totals(starter_logs)["AlreadySentAcknowledged"] >= 1
    described = sfn.describe_execution(executionArn=started["executionArn"])
    assert described["input"] == execution_input(order("order-1"), message_id=record["messageId"])


def test_redelivery_after_its_execution_ended_unfinished_is_acknowledged(stack, starter, starter_logs):
    """The execution dead-lettered the event itself (SNS down), so the event stays pending and the
    pre-check lets the redelivery through: StartExecution with the same name answers
    ExecutionAlreadyExists (a closed execution's name is not reused, API_StartExecution.html), and
    that is this delivery's success. Reporting it failed would redeliver it until the redrive
    policy dead-letters it a second time."""
    record = sqs_record(order("order-ended"), message_id="3f1c9a52-6d0e-4b7a-8e21-9c4d5b6a7f80")
    sfn = stack.client("stepfunctions")
    with sns_publish_failures() as outage:
        assert starter.invoke(sqs_event(record)) == {"batchItemFailures": []}
        [ended] = executions(stack)
        assert wait_for(sfn, ended["executionArn"]).error == "Onceflow.DeadLettered"
    assert outage.injected >= 1
    assert [row["status"] for row in scan(stack.client("dynamodb"), stack.processed_events_table)] == ["pending"]

    redelivered = starter.invoke(sqs_event(record))

    assert redelivered == {"batchItemFailures": []}
    assert [e["executionArn"] for e in executions(stack)] == [ended["executionArn"]]
    [line] = records_logged(starter_logs, "Delivery already handed over: execution exists")
    assert line["message_id"] == record["messageId"]
    assert metric_totals(starter_logs)["ExecutionsAlreadyStarted"] == 1


def test_producer_resend_after_sent_starts_no_execution(stack, starter, starter_logs, inbox):
    """The pre-check (one BatchGetItem): an event already sent with this payload is acknowledged."""
    sfn = stack.client("stepfunctions")
    first = starter.invoke(sqs_event(sqs_record(order("order-1"), message_id="first-send")))
    [started] = executions(stack)
    assert wait_for(sfn, started["executionArn"]).path[-1] == "Mark as sent"

    resend = starter.invoke(sqs_event(sqs_record(order("order-1"), message_id="resend")))

    assert first == resend == {"batchItemFailures": []}
    assert [e["name"] for e in executions(stack)] == [execution_name("order-1", "first-send")]
    assert [row["order_id"] for row in scan(stack.client("dynamodb"), stack.business_table)] == ["order-1"]
    assert inbox.by_event_id() == {"order-1": 1}
    assert metric_totals(starter_logs)["AlreadySentAcknowledged"] == 1
    [line] = records_logged(starter_logs, "Already sent with this payload: acknowledged without an execution")
    assert (line["message_id"], line["event_id"]) == ("resend", "order-1")


def test_resend_while_pending_or_with_another_payload_starts_an_execution(stack, starter, inbox):
    """Only `sent` with the same payload_hash is skipped: the workflow decides everything else."""
    sfn = stack.client("stepfunctions")
    with sns_publish_failures() as outage:  # the first execution records the event and cannot publish
        starter.invoke(sqs_event(sqs_record(order("order-p"), message_id="p-1")))
        [pending] = executions(stack)
        assert wait_for(sfn, pending["executionArn"]).status == "FAILED"
    assert outage.injected >= 1
    starter.invoke(sqs_event(sqs_record(order("order-s"), message_id="s-1")))
    wait_for_all(sfn, stack.state_machine_arn)

    response = starter.invoke(
        sqs_event(
            sqs_record(order("order-p"), message_id="p-2"),  # pending: publish now
            sqs_record(order("order-s", amount=99), message_id="s-2"),  # sent, another payload: a conflict
        )
    )

    assert response == {"batchItemFailures": []}
    results = {r.name: r for r in wait_for_all(sfn, stack.state_machine_arn)}
    assert results[execution_name("order-p", "p-2")].status == "SUCCEEDED"
    assert results[execution_name("order-s", "s-2")].error == "Onceflow.DeadLettered"
    assert inbox.by_event_id() == {"order-p": 1, "order-s": 1}


def test_a_failed_already_sent_lookup_starts_the_executions(stack, starter, starter_logs):
    with inject(
        DynamoHandler,  # the BatchGetItem API itself (moto's backend has no batch method)
        "batch_get_item",
        lambda: AWSError("Injected fault", exception_type="InternalServerError", status=500),
    ) as fault:
        response = starter.invoke(sqs_event(sqs_record(order("order-1"), message_id="m-1")))

    assert fault.injected >= 1
    assert response == {"batchItemFailures": []}
    assert [e["name"] for e in executions(stack)] == [execution_name("order-1", "m-1")]
    [warning] = records_logged(starter_logs, "Already-sent lookup failed; starting every execution")
    assert warning["level"] == "WARNING"


POISON = {
    "not-json": ("{'order_id': 'o-1'}", "body", "json", None),
    "json-array": (json.dumps([order("o-2")]), "body", "json_object", None),
    "no-event-id": (json.dumps({"customer_id": "c", "amount": 1, "currency": "EUR"}), "order_id", "event_id", None),
    "empty-event-id": (json.dumps(order("")), "order_id", "event_id", None),
    "negative-amount": (json.dumps(order("o-5", amount=-1)), "amount", "greater_than", "o-5"),
    "bad-currency": (json.dumps(order("o-6", currency="euro")), "currency", "string_pattern_mismatch", "o-6"),
    # Characters outside the set SQS accepts (moto does not check) become U+FFFD in the attributes.
    "control-character": (json.dumps(order("o-\u0007", amount=0)), "amount", "greater_than", "o-\ufffd"),
    "too-large": (
        json.dumps(order("o-7", note="x" * (MAX_EXECUTION_INPUT_BYTES // 2))),
        "body",
        "max_state_size",
        "o-7",
    ),
    # Python reads 1e400 as inf and writes it back as Infinity, which AWS refuses at StartExecution.
    "infinite-number": (json.dumps(order("o-8")).replace("42.5", "1e400"), "amount", "finite_number", "o-8"),
    "39-digit-integer": (
        json.dumps(order("o-9", units=1)).replace('"units": 1', '"units": ' + "7" * 39),
        "units",
        "dynamodb_number",
        "o-9",
    ),
}


def test_poison_messages_are_dead_lettered_with_the_reason_and_acknowledged(stack, starter, starter_logs):
    records = {kind: sqs_record(body, message_id=f"poison-{kind}") for kind, (body, *_) in POISON.items()}

    response = starter.invoke(sqs_event(*records.values()))

    assert response == {"batchItemFailures": []}
    assert executions(stack) == []
    dead = dead_letters(stack)
    assert set(dead) == {r["messageId"] for r in records.values()}
    for kind, (body, field, rule, event_id) in POISON.items():
        message = dead[f"poison-{kind}"]
        assert message.body == body  # unchanged, ready to fix and redrive
        attributes = message.attributes
        assert attributes["error"] == "Onceflow.InvalidMessage"
        assert (attributes["field"], attributes["rule"], attributes.get("event_id")) == (field, rule, event_id)
        assert attributes["cause"].startswith(f"message poison-{kind}: field '{field}' breaks rule '{rule}': ")
        assert attributes["source_message_id"] == f"poison-{kind}"
    assert metric_totals(starter_logs)["InvalidMessagesDeadLettered"] == len(POISON)
    warnings = records_logged(starter_logs, "Invalid message: dead-lettering it")
    assert {(w["message_id"], w["field"], w["rule"]) for w in warnings} == {
        (f"poison-{kind}", field, rule) for kind, (_, field, rule, _) in POISON.items()
    }


def test_dead_letter_send_failure_keeps_the_record_for_sqs(stack, starter, starter_logs):
    poison, good = sqs_record("not json", message_id="poison-1"), sqs_record(order("order-1"))
    dead_letter_queue = stack.dead_letter_queue_url.rsplit("/", 1)[1]

    with sqs_send_failures(dead_letter_queue, times=1) as fault:
        response = starter.invoke(sqs_event(poison, good))

    assert fault.injected == 1
    assert failed_ids(response) == ["poison-1"]
    assert dead_letters(stack) == {}
    assert len(executions(stack)) == 1
    [failure] = records_logged(starter_logs, "Record failed; SQS will redeliver it")
    assert failure["message_id"] == "poison-1" and "Injected fault: send failed" in failure["exception"]
    assert metric_totals(starter_logs)["BatchRecordsFailed"] == 1

    assert starter.invoke(sqs_event(poison)) == {"batchItemFailures": []}  # SQS redelivers it: now it goes
    assert set(dead_letters(stack)) == {"poison-1"}


def test_step_functions_error_fails_the_record_and_logs_the_exception(stack, starter, starter_logs):
    record = sqs_record(order("order-denied"), message_id="m-denied")

    with start_execution_fails_for("order-denied") as fault:
        response = starter.invoke(sqs_event(record))

    assert fault.injected == 1
    assert failed_ids(response) == ["m-denied"]
    assert dead_letters(stack) == {}  # not poison: SQS retries it, its redrive policy decides
    [failure] = records_logged(starter_logs, "Record failed; SQS will redeliver it")
    assert failure["level"] == "ERROR"
    assert (failure["event_id"], failure["message_id"]) == ("order-denied", "m-denied")
    assert failure["error_code"] == "AccessDeniedException"
    assert "Traceback" in failure["exception"]


def test_logs_carry_event_id_only_while_its_record_is_handled(stack, starter, starter_logs):
    good, denied = sqs_record(order("order-1"), message_id="m-1"), sqs_record(order("order-2"), message_id="m-2")

    with start_execution_fails_for("order-2"):
        starter.invoke(sqs_event(good, denied))

    [started] = records_logged(starter_logs, "Execution started")
    assert (started["event_id"], started["correlation_id"], started["message_id"]) == ("order-1", "order-1", "m-1")
    assert started["execution_name"] == execution_name("order-1", "m-1")
    assert started["service"] == "onceflow"
    [summary] = records_logged(starter_logs, "Records reported failed; SQS will redeliver them")
    assert "event_id" not in summary and "correlation_id" not in summary and "message_id" not in summary


def test_configuration_error_fails_the_whole_invocation(stack, starter, starter_logs, monkeypatch):
    batch = sqs_event(sqs_record(order("order-1")), sqs_record("not json"))
    for variable, value in [("EVENT_FORMAT", "xml"), ("EVENT_ID_PATH", "detail.[oops"), ("STATE_MACHINE_ARN", "")]:
        with monkeypatch.context() as patch:
            patch.setenv(variable, value)  # restored afterwards: the runtime only ever adds to os.environ
            patch.setitem(starter.environment, variable, value)  # the function's environment, set per invocation
            with pytest.raises(ConfigurationError, match=variable):
                starter.invoke(batch)
        [line] = records_logged(starter_logs, "Starter misconfigured; no record of this batch was handled")
        assert variable in line["exception"]
        assert metric_totals(starter_logs) == {"ConfigurationErrors": 1}
        starter_logs.truncate(0)
        starter_logs.seek(0)

    assert executions(stack) == [] and dead_letters(stack) == {}  # nothing handled, nothing lost


def start_execution_refused(code: str, event_id: str, status: int = 400) -> AbstractContextManager[Fault]:
    """StartExecution answers `code` for one event_id's executions, as Step Functions would."""
    prefix = execution_name(event_id, "any").rsplit("-", 1)[0] + "-"

    def applies(state_machine_arn: str, name: str | None = None, *args: Any, **kwargs: Any) -> bool:
        return bool(name and name.startswith(prefix))

    return inject(
        StepFunctionsParserBackend,
        "start_execution",
        lambda: AWSError(f"Injected fault: {code}", exception_type=code, status=status),
        applies=applies,
    )


@pytest.mark.parametrize(("code", "field"), [("InvalidExecutionInput", "input"), ("InvalidName", "name")])
def test_permanent_start_execution_errors_are_dead_lettered_with_their_reason(
    stack, starter, starter_logs, code, field
):
    """API_StartExecution: these concern the message itself; no redelivery can cure them."""
    record = sqs_record(order("order-x"), message_id="m-x")

    with start_execution_refused(code, "order-x") as fault:
        response = starter.invoke(sqs_event(record))

    assert fault.injected == 1  # not retried
    assert response == {"batchItemFailures": []}
    [dead] = dead_letters(stack).values()
    assert dead.body == record["body"]
    attributes = dead.attributes
    assert (attributes["error"], attributes["field"], attributes["rule"]) == (f"StepFunctions.{code}", field, code)
    assert (attributes["event_id"], attributes["source"], attributes["source_message_id"]) == (
        "order-x",
        "starter",
        "m-x",
    )
    assert f"Injected fault: {code}" in attributes["cause"]
    assert metric_totals(starter_logs)["RejectedExecutionsDeadLettered"] == 1


@pytest.mark.parametrize(("code", "status"), [("InternalServerError", 500)])
def test_transient_start_execution_errors_are_retried_then_reported_failed(stack, starter, code, status, embedded_aws):
    """Throttling is waited out, then re-queued: tests/starter/test_throttling.py."""
    record = sqs_record(order("order-t"), message_id="m-t")

    with start_execution_refused(code, "order-t", status) as fault:
        response = starter.invoke(sqs_event(record))

    assert fault.injected == 3  # boto3's standard retry mode: three attempts, then SQS redelivers
    assert failed_ids(response) == ["m-t"]
    assert dead_letters(stack) == {}
    # botocore backed off between the attempts (up to 1 s, then 2 s: full jitter); the embedded AWS
    # records its back-offs and scales them (0 in tests) instead of sleeping for real.
    delays = embedded_aws.clock.sdk_retry_delays
    assert len(delays) == 2 and 0 <= delays[0] <= 1 and 0 <= delays[1] <= 2


def test_each_log_line_carries_the_keys_of_its_own_record_when_records_run_concurrently(stack, starter, starter_logs):
    """Concurrent invocations in one process, each with concurrent records: no line borrows another's keys."""
    batches = [
        [sqs_record(order(f"order-{b}-{r}"), message_id=f"m-{b}-{r}") for r in range(5)]
        + [sqs_record("not json", message_id=f"bad-{b}")]
        for b in range(4)
    ]
    with ThreadPoolExecutor(max_workers=4) as pool:
        responses = list(pool.map(lambda batch: starter.invoke(sqs_event(*batch)), batches))

    assert responses == [{"batchItemFailures": []}] * 4
    lines = [line for line in log_lines(starter_logs) if "message" in line and "_aws" not in line]
    by_record = [line for line in lines if "message_id" in line]
    assert len(by_record) == 4 * 6
    for line in by_record:
        message_id = line["message_id"]
        if message_id.startswith("bad-"):
            assert "event_id" not in line and "correlation_id" not in line
        else:
            expected = "order-" + message_id.removeprefix("m-")
            assert (line["event_id"], line["correlation_id"]) == (expected, expected), line
    requests = {line["function_request_id"] for line in by_record}
    assert len(requests) == 4  # one per invocation
    for batch_lines in ([line for line in by_record if line["function_request_id"] == request] for request in requests):
        assert len({line["message_id"].split("-")[1] for line in batch_lines}) == 1  # all of one batch


def test_a_conflicting_payload_in_the_batch_of_a_redelivery_still_starts_its_execution(stack, starter, inbox):
    """One batch carries a sent order's conflicting payload and then its redelivery: only the
    redelivery is acknowledged by the pre-check; the conflict goes to the workflow (and the DLQ)."""
    sfn = stack.client("stepfunctions")
    starter.invoke(sqs_event(sqs_record(order("order-d"), message_id="d-1")))
    wait_for_all(sfn, stack.state_machine_arn)

    response = starter.invoke(
        sqs_event(
            sqs_record(order("order-d", amount=5), message_id="d-conflict"),
            sqs_record(order("order-d"), message_id="d-1"),
        )
    )

    assert response == {"batchItemFailures": []}
    results = {r.name: r for r in wait_for_all(sfn, stack.state_machine_arn)}
    assert set(results) == {execution_name("order-d", "d-1"), execution_name("order-d", "d-conflict")}
    assert results[execution_name("order-d", "d-conflict")].error == "Onceflow.DeadLettered"
    assert set(dead_letters(stack)) == {"d-conflict"}
    assert inbox.by_event_id() == {"order-d": 1}


def test_a_record_the_parser_chokes_on_fails_alone(stack, starter, starter_logs):
    """Not an InvalidMessage but an unexpected error (here a record without attributes of the
    right type): that record is reported failed, the rest of the batch goes on."""
    broken = {**sqs_record(order("order-b"), message_id="m-broken"), "attributes": ["not", "a", "dict"]}
    good = sqs_record(order("order-g"), message_id="m-good")

    response = starter.invoke(sqs_event(broken, good))

    assert failed_ids(response) == ["m-broken"]
    assert [e["name"] for e in executions(stack)] == [execution_name("order-g", "m-good")]
    [failure] = records_logged(starter_logs, "Record failed; SQS will redeliver it")
    assert failure["message_id"] == "m-broken"
