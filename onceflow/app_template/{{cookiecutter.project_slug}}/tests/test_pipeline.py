"""This app's guarantees, on its own stack: template.yaml deployed on the embedded AWS (no account,
no Docker) by the onceflow pytest plugin, its bodies made from events/bodies/ (the template's
Metadata.Onceflow.SampleBody) with fresh event ids. The fixtures and the driver: onceflow's
docs/ADOPTING.md. Every test judges the run with the same verdicts as `onceflow demo`."""

from __future__ import annotations

import json
import re

import pytest


def test_new_events_are_written_once_and_notified(onceflow_driver):
    onceflow_driver.send(5)
    onceflow_driver.settle()
    report = onceflow_driver.assert_guarantees("R1", "R2", "R3")
    assert report.business_rows == 5
    assert report.notified_events == 5


def test_resends_and_redeliveries_are_written_once(onceflow_driver):
    bodies = onceflow_driver.bodies(3)
    onceflow_driver.send(bodies + bodies)  # a producer's resends: the same event_id in a new message
    onceflow_driver.settle()
    onceflow_driver.redeliver()  # SQS hands handled messages over once more
    onceflow_driver.settle()
    report = onceflow_driver.assert_guarantees()
    assert (report.messages_sent, report.unique_events, report.business_rows) == (6, 3, 3)


def test_bodies_that_can_never_succeed_are_dead_lettered_with_the_reason(onceflow_driver):
    poison = onceflow_driver.poison()  # not JSON, no event_id, a field of the wrong type (the schema), ...
    assert poison, "the starter accepts every kind of broken body"
    onceflow_driver.send([body for _, body in poison] + onceflow_driver.bodies(2))
    onceflow_driver.settle()
    report = onceflow_driver.assert_guarantees()
    letters = onceflow_driver.dead_letters()
    assert report.business_rows == 2
    assert len(letters) == len(poison)
    assert all(letter.attributes.get("error") == "Onceflow.InvalidMessage" for letter in letters)


def test_the_business_item_holds_the_fields_it_reads_from_the_body(onceflow_driver, onceflow_stack):
    """Each attribute of statemachine/pipeline.asl.json's business item that reads `$.payload.<field>`
    holds that field of the body (numbers as N, objects and arrays as their JSON text)."""
    body = onceflow_driver.bodies(1)[0]
    onceflow_driver.send([body])
    onceflow_driver.settle()
    (row,) = onceflow_driver.business_rows()
    assert row[onceflow_stack.business_key] == onceflow_stack.domain.event_id_of(body)
    read = _fields_read_by_the_business_item(onceflow_stack.definition_path)
    if not read:
        pytest.skip("the business item reads no field of the payload: only its key is checked")
    payload = json.loads(body)
    for attribute, field in read.items():
        stored, sent = row[attribute], payload[field]
        if isinstance(sent, dict | list):
            assert json.loads(stored) == sent, attribute
        else:
            assert stored == sent, attribute  # a number comes back as a Decimal equal to it


def _fields_read_by_the_business_item(definition_path):
    """attribute -> payload field, from the Put on ${BusinessTable} of the Task that writes the record."""
    definition = json.loads(definition_path.read_text())
    (record,) = [s for s in definition["States"].values() if s.get("Resource", "").endswith("transactWriteItems")]
    (put,) = [a["Put"] for a in record["Parameters"]["TransactItems"] if a["Put"]["TableName"] == "${BusinessTable}"]
    read = {}
    for attribute, value in put["Item"].items():
        path = next(iter(value.values()))
        found = re.search(r"\$\.payload\.([A-Za-z_][A-Za-z0-9_]*)", str(path))
        if found:
            read[attribute] = found.group(1)
    return read


def test_a_conflicting_payload_under_a_known_event_id_is_dead_lettered(onceflow_driver):
    (first,) = onceflow_driver.bodies(1)
    try:
        conflicting = onceflow_driver.conflicting(first)  # the same event_id, another payload
    except ValueError as no_field:
        pytest.skip(str(no_field))
    onceflow_driver.send([first])
    onceflow_driver.settle()
    onceflow_driver.send([conflicting])
    onceflow_driver.settle()
    onceflow_driver.assert_guarantees()
    (letter,) = onceflow_driver.dead_letters()
    assert letter.attributes["error"] == "Onceflow.PayloadConflict"


@pytest.mark.onceflow_parameters(StateMachineType="EXPRESS")
def test_an_express_workflow_keeps_the_guarantees(onceflow_driver):
    bodies = onceflow_driver.bodies(4)
    onceflow_driver.send(bodies + bodies[:2])
    onceflow_driver.settle()
    assert onceflow_driver.assert_guarantees().business_rows == 4


@pytest.mark.onceflow_parameters(DeploySubscriber="true")
def test_the_subscriber_applies_each_event_once(onceflow_driver):
    bodies = onceflow_driver.bodies(4)
    onceflow_driver.send(bodies + bodies[:2])
    onceflow_driver.settle()
    onceflow_driver.assert_guarantees("R1", "R2", "R3", "R4")


@pytest.mark.onceflow_parameters(SourceQueueType="FIFO")
def test_a_fifo_source_keeps_the_order_within_each_group(onceflow_driver):
    onceflow_driver.send(8, groups=2)
    onceflow_driver.settle()
    onceflow_driver.assert_guarantees("R1", "R2", "R3", "R5")
