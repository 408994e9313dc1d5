"""A domain read from an app's own template (docs/ARCHITECTURE.md, "What a domain is"), and the
bodies made from its sample: nothing here depends on the worked example's words, so each case
runs on a second, made-up domain too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from onceflow.domain import DomainError, conflicting_candidates, fresh_bodies, load_domain, poison_candidates
from onceflow.domain.bodies import event_id, id_prefix
from onceflow.local.template import TEMPLATE_PATH

SHIPMENT = {"shipment": {"ref": "SHP-77"}, "carrier": "acme", "weight_kg": 2.5, "fragile": False}


def shipment_app(tmp_path: Path, sample: object = SHIPMENT, path: str = "shipment.ref", metadata: bool = True) -> Path:
    """The smallest template a domain is read from: a sample named in its Metadata, and a function
    whose environment says where the event_id is."""
    (tmp_path / "events").mkdir()
    (tmp_path / "events" / "shipment.json").write_text(json.dumps(sample))
    template = tmp_path / "template.yaml"
    template.write_text(
        ("Metadata:\n  Onceflow:\n    SampleBody: events/shipment.json\n" if metadata else "")
        + "Parameters:\n  EventIdPath: {Type: String, Default: ''}\n"
        + "Resources:\n  Starter:\n    Type: AWS::Serverless::Function\n    Properties:\n"
        + f"      Environment:\n        Variables:\n          QUEUE: !Ref Queue\n          PAYLOAD_EVENT_ID_PATH: {path}\n"
    )
    return template


def test_the_worked_example_is_read_from_its_template() -> None:
    domain = load_domain(TEMPLATE_PATH)
    assert (domain.event_id_path, domain.sample_event_id) == ("order_id", "order-1001")
    assert domain.sample_path == TEMPLATE_PATH.parent / "events" / "bodies" / "order.json"


def test_another_domain_with_a_nested_event_id(tmp_path: Path) -> None:
    domain = load_domain(shipment_app(tmp_path))
    assert (domain.event_id_path, domain.sample_event_id, id_prefix(domain)) == ("shipment.ref", "SHP-77", "shp")
    bodies = [json.loads(body) for body in fresh_bodies(domain, 3, "r1")]
    assert [b["shipment"]["ref"] for b in bodies] == ["shp-r1-00000", "shp-r1-00001", "shp-r1-00002"]
    assert all({**b, "shipment": SHIPMENT["shipment"]} == SHIPMENT for b in bodies)  # only the id changed
    assert domain.event_id_of(json.dumps(bodies[1])) == "shp-r1-00001"
    assert domain.event_id_of("not JSON") is None and domain.event_id_of("[1]") is None


def test_the_event_id_path_parameter_overrides_the_functions(tmp_path: Path) -> None:
    domain = load_domain(shipment_app(tmp_path), {"EventIdPath": "carrier"})
    assert domain.sample_event_id == "acme"


def test_a_conflict_keeps_the_id_and_changes_one_field(tmp_path: Path) -> None:
    domain = load_domain(shipment_app(tmp_path))
    original = json.loads(fresh_bodies(domain, 1)[0])
    candidates = list(conflicting_candidates(domain, original))
    assert {json.dumps(c["shipment"]) for c in candidates} == {json.dumps(original["shipment"])}
    assert all(sum(c[k] != original[k] for k in original) == 1 for c in candidates)
    assert len(candidates) == 3  # carrier, weight_kg, fragile: each changed in turn


def test_poison_candidates_for_every_domain_come_first(tmp_path: Path) -> None:
    domain = load_domain(shipment_app(tmp_path))
    kinds = dict(poison_candidates(domain))
    assert kinds["not JSON"] == "this is not JSON"
    assert "ref" not in json.loads(kinds["no event_id"])["shipment"]
    assert json.loads(kinds["an empty event_id"])["shipment"]["ref"] == ""
    assert kinds["a number no service can carry"].endswith('"onceflow_poison_number": 1e400}')
    assert json.loads(kinds["carrier of the wrong type"])["carrier"] == 12345


@pytest.mark.parametrize(
    ("change", "says"),
    [
        pytest.param(
            {"metadata": False}, "names no sample body; add `Metadata: Onceflow: SampleBody:", id="no-metadata"
        ),
        pytest.param(
            {"path": "shipment.missing"}, "has no non-empty string at 'shipment.missing'", id="no-id-in-sample"
        ),
        pytest.param({"path": "shipment.items[0]"}, "only for a path of plain names joined by dots", id="not-settable"),
        pytest.param({"sample": ["a list"]}, "must be a JSON object", id="sample-not-object"),
    ],
)
def test_an_app_that_does_not_describe_its_domain_is_told_what_to_add(tmp_path: Path, change: dict, says: str) -> None:
    with pytest.raises(DomainError) as refused:
        load_domain(shipment_app(tmp_path, **change))
    assert says in str(refused.value)


def test_a_missing_template_or_sample_is_named(tmp_path: Path) -> None:
    with pytest.raises(DomainError, match="cannot read the template"):
        load_domain(tmp_path / "nope.yaml")
    template = shipment_app(tmp_path)
    (tmp_path / "events" / "shipment.json").unlink()
    with pytest.raises(DomainError, match="the template's sample body cannot be read"):
        load_domain(template)


def test_ids_without_a_run_id_are_numbered_under_the_samples_prefix(tmp_path: Path) -> None:
    assert event_id(load_domain(shipment_app(tmp_path)), 3) == "shp-00003"
