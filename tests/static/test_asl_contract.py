"""What the workflow must keep, asserted on the ASL itself where behaviour on the embedded engine
cannot show it (issue 8 §6). Each test names the property; breaking it in the ASL fails the test."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from onceflow_common import dead_letters
from tests.static.asl_paths import Document, load

RECORD = "Record event and business item"
LOOK_UP = "Look up earlier record"
PUBLISH = "Publish notification"
MARK_SENT = "Mark as sent"
DEAD_LETTER = "Send to dead-letter queue"
COMPARISONS = ("StringEquals", "StringEqualsPath", "NumericLessThan", "NumericLessThanPath", "BooleanEquals")


@pytest.fixture
def states() -> dict[str, Document]:
    return load()["States"]


def _puts(states: dict[str, Document]) -> dict[str, Document]:
    return {put["Put"]["TableName"]: put["Put"] for put in states[RECORD]["Parameters"]["TransactItems"]}


def test_record_writes_both_items_only_if_neither_exists(states):
    puts = _puts(states)
    assert puts["${ProcessedEventsTable}"]["ConditionExpression"] == "attribute_not_exists(event_id)"
    assert puts["${BusinessTable}"]["ConditionExpression"] == "attribute_not_exists(order_id)"
    assert states[RECORD]["Resource"] == "arn:aws:states:::aws-sdk:dynamodb:transactWriteItems"


def test_a_pending_record_has_no_ttl_and_carries_the_pending_index_keys(states):
    item = _puts(states)["${ProcessedEventsTable}"]["Item"]
    assert "ttl" not in item, "a pending record must never expire"
    assert item["status"] == {"S": "pending"}
    assert item["pending_since"] == {"S.$": "$$.State.EnteredTime"}
    assert item["pending_shard"] == {"S.$": "$.pending_shard"}


def test_the_business_item_is_built_in_one_place_and_carries_hash_and_execution(states):
    writers = [
        name for name, state in states.items() if "${BusinessTable}" in str(state.get("Parameters")) and name != LOOK_UP
    ]
    assert writers == [RECORD]
    assert "BUSINESS ITEM" in states[RECORD]["Comment"]
    item = _puts(states)["${BusinessTable}"]["Item"]
    assert item["payload_hash"] == {"S.$": "$.payload_hash"}
    assert item["execution_arn"] == {"S.$": "$$.Execution.Id"}
    assert not any(state["Type"] == "Pass" and "order_id" in str(state) for state in states.values())


def test_the_look_up_is_strongly_consistent_and_keeps_the_payload_out_of_the_state(states):
    """A transactional read is serializable: it sees both items of a committed transaction or neither
    (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html)."""
    look_up = states[LOOK_UP]
    assert look_up["Resource"] == "arn:aws:states:::aws-sdk:dynamodb:transactGetItems"
    gets = [entry["Get"] for entry in look_up["Parameters"]["TransactItems"]]
    assert [get["TableName"] for get in gets] == ["${ProcessedEventsTable}", "${BusinessTable}"]
    for get in gets:
        projected = {name.strip() for name in get["ProjectionExpression"].split(",")}
        projected = {get.get("ExpressionAttributeNames", {}).get(name, name) for name in projected}
        assert "payload" not in projected
        assert "payload_hash" in projected
    assert look_up["ResultPath"] == "$.earlier"


def test_mark_as_sent_cannot_create_a_record_and_ends_the_execution(states):
    mark = states[MARK_SENT]["Parameters"]
    assert "attribute_exists(event_id)" in mark["ConditionExpression"]
    set_part, remove_part = mark["UpdateExpression"].split(" REMOVE ")
    assert "#ttl = :ttl" in set_part and mark["ExpressionAttributeNames"]["#ttl"] == "ttl"
    assert {name.strip() for name in remove_part.split(",")} == {"pending_since", "pending_shard"}
    assert states[MARK_SENT].get("End") is True
    assert not any(
        state["Type"] == "Succeed" and "Recorded, published" in state.get("Comment", "") for state in states.values()
    )


def test_literal_budgets(states):
    """Expected values written out, not read from the ASL under test: a change must be made here too."""
    [_, bounded] = states["Record again?"]["Choices"]
    assert bounded["NumericLessThan"] == 5
    [publish_retry] = states[PUBLISH]["Retry"]
    assert (publish_retry["MaxAttempts"], publish_retry["MaxDelaySeconds"], publish_retry["JitterStrategy"]) == (
        5,
        16,
        "FULL",
    )
    assert load()["TimeoutSeconds"] == 300


def test_publish_does_not_retry_what_cannot_succeed(states):
    retried = {error for retrier in states[PUBLISH]["Retry"] for error in retrier["ErrorEquals"]}
    assert "States.ALL" not in retried
    assert not retried & {"SNS.NotFoundException", "SNS.AuthorizationErrorException", "SNS.InvalidParameterException"}
    assert {"SNS.ThrottledException", "SNS.InternalErrorException"} <= retried


def test_dead_letter_attributes_are_the_shared_names(states):
    attributes = states[DEAD_LETTER]["Parameters"]["MessageAttributes"]
    assert set(attributes) == {
        dead_letters.ERROR,
        dead_letters.CAUSE,
        dead_letters.SOURCE,
        dead_letters.EVENT_ID,
        dead_letters.EXECUTION_ARN,
        dead_letters.SOURCE_MESSAGE_ID,
        dead_letters.REDRIVE_COUNT,
    }
    assert set(attributes) <= dead_letters.WRITTEN_ATTRIBUTES
    # A redriven message's count goes on (the starter puts it in the input, "0" if never redriven).
    assert attributes[dead_letters.REDRIVE_COUNT] == {"DataType": "Number", "StringValue.$": "$.message.redrive_count"}
    assert attributes[dead_letters.SOURCE]["StringValue"] == dead_letters.FROM_STATE_MACHINE
    assert attributes[dead_letters.CAUSE]["StringValue.$"] == "$.error.Cause", "plain Cause text, not JSON"
    assert states[DEAD_LETTER]["Parameters"]["MessageBody.$"] == "$.message.body", "the original SQS body"


# --- no Choice rule reads an absent variable ------------------------------------------------------
# On AWS a comparison on a variable that is not in the input raises States.Runtime, which no Catch
# handles (https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html). Whether
# And stops at its first false member is not documented, so the check below assumes it does not.

ALWAYS_PRESENT = ("$.payload_hash", "$.event_id")


def _paths(rule: Document) -> Iterator[str]:
    for key in ("And", "Or"):
        for member in rule.get(key, []):
            yield from _paths(member)
    if "Not" in rule:
        yield from _paths(rule["Not"])
    if "Variable" in rule:
        yield rule["Variable"]
    for key, value in rule.items():
        if key.endswith("Path") and key != "Variable":
            yield value


def _worlds(paths: list[str]) -> Iterator[dict[str, bool]]:
    """Every presence of the paths that JSON allows: a path is present only if its parents are."""
    for flags in itertools.product([True, False], repeat=len(paths)):
        world = dict(zip(paths, flags, strict=True))
        if all(not world[p] or all(world[q] for q in paths if p.startswith(q + ".")) for p in paths):
            yield world


class _Absent(Exception):
    pass


def _evaluate(rule: Document, world: dict[str, bool]) -> set[bool]:
    """Possible outcomes of a rule (comparisons on present values may go either way)."""
    if "And" in rule or "Or" in rule:
        members = [_evaluate(member, world) for member in rule.get("And", rule.get("Or", []))]  # all evaluated
        combine = all if "And" in rule else any
        return {combine(choice) for choice in itertools.product(*members)}
    if "Not" in rule:
        return {not outcome for outcome in _evaluate(rule["Not"], world)}
    if "IsPresent" in rule:
        return {world.get(rule["Variable"], True) == rule["IsPresent"]}
    for path in _paths(rule):
        if not world.get(path, True):
            raise _Absent(path)
    return {True, False}


def _choice_errors(choice: Document) -> list[str]:
    paths = sorted({p for rule in choice["Choices"] for p in _paths(rule) if p not in ALWAYS_PRESENT})
    errors = []
    for world in _worlds(paths):
        for rule in choice["Choices"]:
            try:
                outcomes = _evaluate(rule, world)
            except _Absent as absent:
                errors.append(f"{absent} absent in {world}")
                break
            if outcomes == {True}:
                break
    return errors


def test_no_choice_rule_reads_an_absent_variable(states):
    choices = {name: state for name, state in states.items() if state["Type"] == "Choice"}
    assert choices, "the workflow branches on Choice states"
    for name, choice in choices.items():
        assert _choice_errors(choice) == [], name


def test_the_guard_check_catches_an_unguarded_rule(states):
    """The check above must fail when a rule compares the stored hash before proving a record is there."""
    choice = states["What is left to do?"]
    unguarded = {**choice, "Choices": [choice["Choices"][3], *choice["Choices"]]}
    assert _choice_errors(unguarded) != []
