"""`redrive`: DLQ -> source queue on the embedded endpoint, as `onceflow redrive` runs it."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from onceflow.local.faults import sqs_send_failures
from onceflow.local.safety_net import DETAIL_TYPE, SOURCE, status_change_detail
from onceflow.ops.executions import wait_for_all
from onceflow.ops.observe import drain
from onceflow.ops.redrive import main, redrive
from onceflow_common import dead_letters
from tests.support import execution_input, order


def _string(value: str) -> dict[str, str]:
    return {"DataType": "String", "StringValue": value}


def _dead_letter(stack, body: str, **attributes: str) -> str:
    sqs = stack.client("sqs")
    message_attributes = {name: _string(value) for name, value in attributes.items()}
    return sqs.send_message(
        QueueUrl=stack.dead_letter_queue_url,
        MessageBody=body,
        **({"MessageAttributes": message_attributes} if message_attributes else {}),
    )["MessageId"]


def _from_state_machine(stack, order_id: str, error: str = "SNS.ThrottledException", **extra: str) -> str:
    return _dead_letter(
        stack,
        json.dumps(order(order_id)),
        error=error,
        cause=json.dumps({"Error": error, "Cause": "injected"}),
        event_id=order_id,
        execution_arn=f"arn:aws:states:us-east-1:123456789012:execution:pipeline:{order_id}",
        source="state-machine",
        **extra,
    )


def _safety_net_event(described: dict) -> str:
    """The body the safety net rule puts on the DLQ: the whole status change event."""
    return json.dumps(
        {"version": "0", "source": SOURCE, "detail-type": DETAIL_TYPE, "detail": status_change_detail(described)}
    )


def _described(arn: str, body: str, status: str = "ABORTED", include_input: bool = True) -> dict:
    from datetime import UTC, datetime

    now = datetime.now(UTC)
    return {
        "executionArn": arn,
        "stateMachineArn": arn.replace(":execution:", ":stateMachine:").rsplit(":", 1)[0],
        "name": arn.rsplit(":", 1)[1],
        "status": status,
        "startDate": now,
        "stopDate": now,
        "input": execution_input(body) if include_input else "x" * 300_000,
    }


def _run(stack, **kwargs):
    options = {"dry_run": False, "limit": None, **kwargs}
    return redrive(stack.client("sqs"), stack.dead_letter_queue_url, stack.source_queue_url, **options)


def _source(stack):
    return drain(stack.client("sqs"), stack.source_queue_url)


def _dead(stack, delete=True):
    return drain(stack.client("sqs"), stack.dead_letter_queue_url, delete=delete)


def test_dry_run_counts_and_lists_without_moving(stack):
    for i in range(3):
        _from_state_machine(stack, f"order-{i}")

    report = _run(stack, dry_run=True)

    assert (report.count, report.would_move, report.moved) == (3, 3, 0)
    assert report.by_reason() == {"state-machine: SNS.ThrottledException": 3}
    assert "would move 3" in report.summary()
    assert _source(stack) == []
    assert len(_dead(stack, delete=False)) == 3  # still there, and visible again at once


def test_moves_the_body_byte_for_byte_with_provenance(stack):
    body = '{ "order_id":"order-ü", "customer_id": "c", "amount": 1.10, "currency":"EUR" }'
    message_id = _dead_letter(
        stack,
        body,
        error="SNS.ThrottledException",
        cause="...",
        event_id="order-ü",
        source="state-machine",
        tenant="t-1",
    )

    report = _run(stack)

    assert report.moved == 1
    [moved] = _source(stack)
    assert moved.body == body
    assert moved.attributes == {
        "tenant": "t-1",  # the producer's attribute is kept; the reason attributes are summarised
        "onceflow_redrive_count": "1",
        "onceflow_redriven_from": message_id,
        "onceflow_dead_letter_source": "state-machine",
        "onceflow_dead_letter_error": "SNS.ThrottledException",
        "onceflow_first_dead_letter": "state-machine: SNS.ThrottledException",
        "onceflow_redriven_at": moved.attributes["onceflow_redriven_at"],
    }
    assert _dead(stack) == []


def test_limit_moves_at_most_that_many_and_leaves_the_rest_visible(stack):
    for i in range(5):
        _from_state_machine(stack, f"order-{i}")

    report = _run(stack, limit=2)

    assert report.moved == 2
    assert len(_source(stack)) == 2
    assert len(_dead(stack, delete=False)) == 3
    assert _run(stack, limit=0).count == 0


def test_errors_that_would_fail_again_can_be_left_in_place(stack):
    _from_state_machine(stack, "order-conflict", error="Onceflow.PayloadConflict")
    _dead_letter(stack, "not json", error="Onceflow.InvalidMessage", source="starter", field="body", rule="json")
    _from_state_machine(stack, "order-ok")

    report = _run(stack, skip_errors={"Onceflow.PayloadConflict", "Onceflow.InvalidMessage"})

    assert (report.moved, report.skipped) == (1, 2)
    assert [m.json["order_id"] for m in _source(stack)] == ["order-ok"]
    assert sorted(m.attributes["error"] for m in _dead(stack)) == [
        "Onceflow.InvalidMessage",
        "Onceflow.PayloadConflict",
    ]


def test_a_redrive_policy_dead_letter_keeps_its_attributes_and_counts_redrives(stack):
    body = json.dumps(order("order-retried"))
    _dead_letter(stack, body, trace="abc", onceflow_redrive_count="1")

    report = _run(stack)

    assert [(i.source, i.error) for i in report.items] == [("redrive-policy", None)]
    [moved] = _source(stack)
    assert (moved.body, moved.attributes["trace"], moved.attributes["onceflow_redrive_count"]) == (body, "abc", "2")


def test_a_safety_net_event_is_unwrapped_to_the_original_body(stack):
    body = json.dumps(order("order-stopped"))
    arn = "arn:aws:states:us-east-1:123456789012:execution:pipeline:order-stopped-1"
    _dead_letter(stack, _safety_net_event(_described(arn, body)))

    report = _run(stack)

    assert [(i.source, i.error, i.event_id) for i in report.items] == [
        ("safety-net", "Execution.ABORTED", "order-stopped")
    ]
    assert [m.body for m in _source(stack)] == [body]


def test_a_safety_net_event_without_its_input_is_read_back_from_the_execution(stack):
    sfn = stack.client("stepfunctions")
    body = json.dumps(order("order-big"))
    arn = sfn.start_execution(stateMachineArn=stack.state_machine_arn, name="big", input=execution_input(body))[
        "executionArn"
    ]
    event = json.loads(_safety_net_event(_described(arn, body, include_input=False)))
    assert event["detail"]["input"] is None and event["detail"]["inputDetails"] == {"included": False}
    _dead_letter(stack, json.dumps(event))

    without = _run(stack)
    assert (without.skipped, without.moved) == (1, 0)
    assert "DescribeExecution" in without.items[0].reason

    report = _run(stack, sfn=sfn)
    assert report.moved == 1
    assert [m.body for m in _source(stack)] == [body]


def test_a_failed_send_leaves_the_dead_letter_in_place(stack):
    _from_state_machine(stack, "order-1")

    with sqs_send_failures("SourceQueue") as fault:
        report = _run(stack)

    assert fault.injected == 1
    assert (report.moved, report.failed) == (0, 1)
    assert [m.json["order_id"] for m in _dead(stack, delete=False)] == ["order-1"]
    assert _run(stack).moved == 1


def test_a_negative_limit_is_refused(stack):
    with pytest.raises(ValueError):
        _run(stack, limit=-1)


def test_the_command_redrives_a_deployed_stack_found_by_name(stack, embedded_aws, monkeypatch, capsys):
    for name, value in embedded_aws.environment().items():  # boto3's defaults point at the endpoint
        monkeypatch.setenv(name, value)
    _from_state_machine(stack, "order-1")

    assert main(["--stack-name", stack.stack_name, "--dry-run"]) == 0
    assert "would move 1" in capsys.readouterr().out
    assert main(["--stack-name", stack.stack_name, "--skip-error", "Onceflow.PayloadConflict"]) == 0
    assert "moved 1" in capsys.readouterr().out
    assert [m.json["order_id"] for m in _source(stack)] == ["order-1"]


def _back_to_the_dead_letter_queue(stack, error: str | None = None) -> None:
    """What SQS's redrive policy does with a message that fails again: the same body, its attributes kept."""
    sqs = stack.client("sqs")
    for message in sqs.receive_message(
        QueueUrl=stack.source_queue_url, MaxNumberOfMessages=10, MessageAttributeNames=["All"]
    ).get("Messages", []):
        attributes = {
            name: {k: v for k, v in value.items() if k in ("DataType", "StringValue")}
            for name, value in message.get("MessageAttributes", {}).items()
        }
        if error:
            attributes.update(error=_string(error), source=_string("state-machine"))
        sqs.send_message(
            QueueUrl=stack.dead_letter_queue_url, MessageBody=message["Body"], MessageAttributes=attributes
        )
        sqs.delete_message(QueueUrl=stack.source_queue_url, ReceiptHandle=message["ReceiptHandle"])


def test_a_message_redriven_twice_counts_up_and_keeps_its_first_reason(stack):
    _from_state_machine(stack, "order-loop", error="SNS.NotFoundException")
    assert _run(stack).moved == 1
    _back_to_the_dead_letter_queue(stack)  # failed again; the redrive policy moved it

    second = _run(stack)

    assert [(i.source, i.redrive_count) for i in second.items] == [("redrive-policy", 1)]
    assert "1 had been redriven before (up to 1 times)" in second.summary()
    [moved] = _source(stack)
    assert moved.attributes["onceflow_redrive_count"] == "2"
    assert moved.attributes["onceflow_first_dead_letter"] == "state-machine: SNS.NotFoundException"
    assert moved.attributes["onceflow_dead_letter_source"] == "redrive-policy"


class _FailsAgainAtOnce:
    """The pipeline dead-letters each redriven message again the moment it arrives (a fault that
    outlasts the redrive): the real SQS client, with every send to the source queue echoed to the DLQ."""

    def __init__(self, sqs, stack):
        self._sqs, self._stack, self.echoed = sqs, stack, 0

    def send_message(self, **kwargs):
        response = self._sqs.send_message(**kwargs)
        if kwargs["QueueUrl"] == self._stack.source_queue_url:
            self._sqs.send_message(
                QueueUrl=self._stack.dead_letter_queue_url,
                MessageBody=kwargs["MessageBody"],
                MessageAttributes={"error": _string("SNS.NotFoundException"), "source": _string("state-machine")},
            )
            self.echoed += 1
        return response

    def __getattr__(self, name):
        return getattr(self._sqs, name)


def _into_the_next_millisecond() -> None:
    """A dead letter sent in the millisecond the run starts counts as come back (the safe side)."""
    now = int(time.time() * 1000)
    while int(time.time() * 1000) <= now:
        pass


def test_a_run_never_moves_a_dead_letter_that_came_back_during_it(stack):
    _from_state_machine(stack, "order-loop")
    _from_state_machine(stack, "order-loop")  # a duplicate dead letter, there before the run: moved too
    _into_the_next_millisecond()  # SentTimestamp has millisecond steps: the run starts after both were sent
    sqs = _FailsAgainAtOnce(stack.client("sqs"), stack)

    report = redrive(sqs, stack.dead_letter_queue_url, stack.source_queue_url, dry_run=False, limit=None)

    assert sqs.echoed == 2
    assert (report.moved, report.skipped) == (2, 2)
    assert {i.reason for i in report.items if i.action == "skipped"} == {
        "came back during this run after it was redriven"
    }
    assert [m.json["order_id"] for m in _source(stack)] == ["order-loop", "order-loop"]
    assert len(_dead(stack)) == 2  # the ones that came back stay, for the next run or a person


def test_the_command_skips_the_errors_named_and_refuses_a_negative_limit(stack, embedded_aws):
    from typer.testing import CliRunner

    from onceflow.cli import app

    _from_state_machine(stack, "order-conflict", error="Onceflow.PayloadConflict")
    _from_state_machine(stack, "order-ok")
    where = ["--endpoint", embedded_aws.endpoint_url, "--stack-name", stack.stack_name]
    runner = CliRunner()

    refused = runner.invoke(app, ["redrive", *where, "--limit", "-1"])
    assert refused.exit_code == 2 and "--limit" in refused.output and "-1: must be 0 or more" in refused.output
    result = runner.invoke(app, ["redrive", *where, "--skip-error", "Onceflow.PayloadConflict"])

    assert result.exit_code == 0, result.output
    assert "moved 1, skipped 1" in result.output
    assert [m.json["order_id"] for m in _source(stack)] == ["order-ok"]
    assert [m.attributes["error"] for m in _dead(stack)] == ["Onceflow.PayloadConflict"]


def test_the_pipeline_errors_redrive_knows_are_those_the_asl_and_the_functions_write():
    """`--skip-error` accepts these even when no dead letter has them now (dead_letters.PIPELINE_ERRORS);
    the list must not drift from the names the writers use. Onceflow.DeadLettered is the Fail
    state's error, on no dead letter."""
    root = Path(__file__).parents[2]
    sources = [root / "statemachine" / "pipeline.asl.json", *sorted((root / "functions").rglob("*.py"))]
    written = {name for path in sources for name in re.findall(r"Onceflow\.[A-Z]\w+", path.read_text())}
    assert written - {"Onceflow.DeadLettered"} == dead_letters.PIPELINE_ERRORS


def test_a_redriven_message_the_starter_dead_letters_again_keeps_its_count_and_first_reason(stack, event_source):
    """The starter carries a redrive's provenance over to the message's next dead letter, so the
    second redrive counts 2 and warns of a loop (the count restarted at 0 before)."""
    sqs = stack.client("sqs")
    sqs.send_message(QueueUrl=stack.source_queue_url, MessageBody="still not json")
    event_source.run_until_empty()
    first = redrive(sqs, stack.dead_letter_queue_url, stack.source_queue_url, dry_run=False, limit=None)
    assert (first.moved, first.items[0].redrive_count) == (1, 0)
    event_source.run_until_empty()  # dead-lettered again, as invalid as before

    again = redrive(sqs, stack.dead_letter_queue_url, stack.source_queue_url, dry_run=True, limit=None)

    [item] = again.items
    assert (item.source, item.error, item.redrive_count) == ("starter", "Onceflow.InvalidMessage", 1)
    assert "1 had been redriven before (up to 1 times): a redrive loop?" in again.summary()
    [letter] = drain(sqs, stack.dead_letter_queue_url)
    assert letter.attributes[dead_letters.FIRST_DEAD_LETTER] == "starter: Onceflow.InvalidMessage"


def test_a_redriven_message_the_workflow_dead_letters_again_keeps_counting(stack, event_source):
    """A payload conflict redriven unchanged conflicts again: the starter puts the message's redrive
    count in the execution input and the ASL's dead-letter state writes it, so the next redrive
    counts on and warns of a loop (before, the workflow's dead letter started again at 0)."""
    sqs, sfn = stack.client("sqs"), stack.client("stepfunctions")
    for amount in (10, 99):  # the same order id with another payload: a conflict
        sqs.send_message(QueueUrl=stack.source_queue_url, MessageBody=json.dumps(order("order-c", amount=amount)))
        event_source.run_until_empty()
        wait_for_all(sfn, stack.state_machine_arn)
    first = redrive(sqs, stack.dead_letter_queue_url, stack.source_queue_url, dry_run=False, limit=None)
    assert [(i.source, i.error, i.redrive_count) for i in first.items] == [
        ("state-machine", "Onceflow.PayloadConflict", 0)
    ]
    event_source.run_until_empty()
    wait_for_all(sfn, stack.state_machine_arn)

    again = redrive(sqs, stack.dead_letter_queue_url, stack.source_queue_url, dry_run=True, limit=None)

    [item] = again.items
    assert (item.source, item.error, item.redrive_count) == ("state-machine", "Onceflow.PayloadConflict", 1)
    assert "1 had been redriven before (up to 1 times): a redrive loop?" in again.summary()
