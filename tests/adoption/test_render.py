"""The payments app as the app template renders it: its files, its domain in the five places a domain
lives and nowhere else, the skeleton otherwise unchanged, no word of the worked example's domain."""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from pathlib import Path

import fastjsonschema
import pytest

from onceflow.app_template.render import Rendered, examples
from onceflow.ops.workflow import RECORD_RESOURCE

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = json.loads(examples()["payments"].sample_text)
LOOK_UP_RESOURCE = "arn:aws:states:::aws-sdk:dynamodb:transactGetItems"
# The worked example's domain, as identifiers and values (English "in order" is not one of them).
LEAKS = re.compile(r"order_id|\bOrders?\b|\borders\b|\border-\d|order\.json|domain\.order|customer_id")


def _text_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts]


def test_the_app_has_every_file_a_sam_application_and_its_tests_need(payments_root: Path) -> None:
    names = {str(p.relative_to(payments_root)) for p in _text_files(payments_root)}
    expected = {
        "template.yaml",
        "samconfig.toml",
        "pyproject.toml",
        "README.md",
        ".gitignore",
        "statemachine/pipeline.asl.json",
        "events/bodies/payment.json",
        "events/sqs-payment.json",
        "tests/test_pipeline.py",
        "functions/starter/domain/__init__.py",
        "functions/starter/domain/payment.schema.json",
    }
    assert expected <= names
    functions = {n for n in names if n.startswith("functions/") and not n.startswith("functions/starter/domain/")}
    root_functions = {
        str(p.relative_to(ROOT))
        for p in (ROOT / "functions").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and "domain" not in p.relative_to(ROOT / "functions").parts
    }
    assert functions == root_functions  # every function file of the skeleton, its domain folder aside
    assert {n for n in names if n.startswith("functions/starter/domain/")} == {
        "functions/starter/domain/__init__.py",
        "functions/starter/domain/payment.schema.json",
    }
    assert not [n for n in names if n.endswith(".pyc")]


def test_no_identifier_or_value_of_the_worked_example_domain_reaches_the_app(payments_root: Path) -> None:
    leaks = [
        f"{path.relative_to(payments_root)}:{number}: {line.strip()}"
        for path in _text_files(payments_root)
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if LEAKS.search(line)
    ]
    assert not leaks, "\n".join(leaks[:20])


def test_the_leak_check_finds_the_worked_example_in_the_repository_itself() -> None:
    """The check above would see a leak: the root app names its domain in these places."""
    assert LEAKS.search((ROOT / "template.yaml").read_text())
    assert LEAKS.search((ROOT / "statemachine/pipeline.asl.json").read_text())


def test_the_template_is_the_skeleton_but_for_the_domains_lines(payments_root: Path) -> None:
    root = (ROOT / "template.yaml").read_text().splitlines()
    app = (payments_root / "template.yaml").read_text().splitlines()
    changed = [line for line in difflib.unified_diff(root, app, lineterm="", n=0) if line[:1] in "+-"]
    added = sorted(line[1:].strip() for line in changed if line.startswith("+") and not line.startswith("+++"))
    assert added == sorted(
        [
            "SampleBody: events/bodies/payment.json",
            "PAYLOAD_EVENT_ID_PATH: payment_id",
            "PAYLOAD_SCHEMA: domain/payment.schema.json",
            "- AttributeName: payment_id",
            "- AttributeName: payment_id",
            "TALLY_KEY_PATH: account_id",
        ]
    )
    assert len(app) == len(root)


def _states(path: Path) -> dict[str, dict]:
    return json.loads(path.read_text())["States"]


def _task(states: dict[str, dict], resource: str) -> dict:
    (state,) = [s for s in states.values() if s.get("Resource") == resource]
    return state


def test_the_workflow_is_the_skeletons_but_for_the_business_item_and_its_look_up(payments_root: Path) -> None:
    root, app = (
        _states(ROOT / "statemachine/pipeline.asl.json"),
        _states(payments_root / "statemachine/pipeline.asl.json"),
    )
    assert list(app) == list(root)
    different = [name for name in root if root[name] != app[name]]
    assert sorted(different) == sorted(
        [name for name, s in root.items() if s.get("Resource") in (RECORD_RESOURCE, LOOK_UP_RESOURCE)]
    )
    root_record, app_record = _task(root, RECORD_RESOURCE), _task(app, RECORD_RESOURCE)
    assert app_record["Parameters"]["TransactItems"][0] == root_record["Parameters"]["TransactItems"][0]
    assert {k: v for k, v in app_record.items() if k != "Parameters"} == {
        k: v for k, v in root_record.items() if k != "Parameters"
    }


def test_the_business_item_is_built_from_the_samples_fields_with_their_types(payments_root: Path) -> None:
    record = _task(_states(payments_root / "statemachine/pipeline.asl.json"), RECORD_RESOURCE)
    put = record["Parameters"]["TransactItems"][1]["Put"]
    assert put["TableName"] == "${BusinessTable}"
    assert put["ConditionExpression"] == "attribute_not_exists(#key)"
    assert put["ExpressionAttributeNames"] == {"#key": "payment_id"}
    assert put["Item"] == {
        "payment_id": {"S.$": "$.event_id"},
        "account_id": {"S.$": "$.payload.account_id"},
        "amount": {"N.$": "States.JsonToString($.payload.amount)"},
        "currency": {"S.$": "$.payload.currency"},
        "method": {"S.$": "$.payload.method"},
        "payload_hash": {"S.$": "$.payload_hash"},
        "received_at": {"S.$": "$.received_at"},
        "recorded_at": {"S.$": "$$.State.EnteredTime"},
        "execution_arn": {"S.$": "$$.Execution.Id"},
    }


def test_the_look_up_reads_the_business_item_back_by_the_same_key(payments_root: Path) -> None:
    look_up = _task(_states(payments_root / "statemachine/pipeline.asl.json"), LOOK_UP_RESOURCE)
    (get,) = [a["Get"] for a in look_up["Parameters"]["TransactItems"] if a["Get"]["TableName"] == "${BusinessTable}"]
    assert get["Key"] == {"payment_id": {"S.$": "$.event_id"}}
    assert get["ProjectionExpression"] == "#key, payload_hash"
    assert get["ExpressionAttributeNames"] == {"#key": "payment_id"}


def test_every_field_the_business_item_reads_is_one_the_schema_requires(payments_root: Path) -> None:
    """On AWS a JSONPath that finds nothing is States.Runtime, which no Catch handles: the starter
    must have dead-lettered a body without the field before any execution reads it."""
    item = _task(_states(payments_root / "statemachine/pipeline.asl.json"), RECORD_RESOURCE)["Parameters"][
        "TransactItems"
    ][1]["Put"]["Item"]
    read = {m for v in item.values() for m in re.findall(r"\$\.payload\.(\w+)", next(iter(v.values())))}
    schema = json.loads((payments_root / "functions/starter/domain/payment.schema.json").read_text())
    assert read and read <= set(schema["required"])


@pytest.fixture(scope="module")
def validate(payments_root: Path):
    """The schema compiled as the starter compiles it (fastjsonschema, functions/starter/starter/payload_validation.py)."""
    return fastjsonschema.compile(
        json.loads((payments_root / "functions/starter/domain/payment.schema.json").read_text())
    )


def test_the_schema_accepts_the_sample_and_other_values_of_its_types(validate) -> None:
    validate(SAMPLE)
    validate({**SAMPLE, "amount": 7, "note": "extra fields are the producer's business"})


@pytest.mark.parametrize(
    ("change", "rule"),
    [
        ({"amount": "25.0"}, "type"),
        ({"account_id": 42}, "type"),
        ({"payment_id": ""}, "minLength"),
        ({"method": None}, "type"),
    ],
    ids=["amount as text", "account as a number", "empty event_id", "null method"],
)
def test_the_schema_refuses_a_field_of_another_type(validate, change: dict, rule: str) -> None:
    with pytest.raises(fastjsonschema.JsonSchemaValueException) as refused:
        validate({**SAMPLE, **change})
    assert refused.value.rule == rule


@pytest.mark.parametrize("missing", sorted(SAMPLE))
def test_the_schema_requires_every_field_of_the_sample(validate, missing: str) -> None:
    with pytest.raises(fastjsonschema.JsonSchemaValueException) as refused:
        validate({k: v for k, v in SAMPLE.items() if k != missing})
    assert refused.value.rule == "required"


def test_the_template_names_the_schema_and_the_sample_it_ships(payments_root: Path) -> None:
    from onceflow.domain import load_domain

    domain = load_domain(payments_root / "template.yaml")
    assert domain.sample == SAMPLE and domain.event_id_path == "payment_id"
    text = (payments_root / "template.yaml").read_text()
    assert "PAYLOAD_MODEL" not in text.split("PAYLOAD_SCHEMA")[1].split("RECORD_RETENTION_DAYS")[0]


def test_the_sqs_event_carries_the_sample_as_lambda_delivers_it(payments_root: Path) -> None:
    (record,) = json.loads((payments_root / "events/sqs-payment.json").read_text())["Records"]
    assert json.loads(record["body"]) == SAMPLE
    assert record["md5OfBody"] == hashlib.md5(record["body"].encode()).hexdigest()
    assert record["eventSource"] == "aws:sqs"


def test_the_readme_points_at_the_lines_to_change(payments_root: Path) -> None:
    readme = (payments_root / "README.md").read_text()
    assert "@@" not in readme and "cookiecutter" not in readme
    rows = dict(
        (m.group(1), (m.group(2), m.group(3)))
        for m in re.finditer(r"^\| ([^|]+?) \| `([^`]+)` \| ([^|]+?) \|$", readme, re.MULTILINE)
    )
    lines = {name: (payments_root / name).read_text().splitlines() for name in {f for f, _ in rows.values()}}

    def line(file: str, number: str) -> str:
        return lines[file][int(number) - 1]

    item_file, item_lines = rows["the business item (the second Put of `Record event and business item`)"]
    first, last = item_lines.split("-")
    assert '"TableName": "${BusinessTable}"' in line(item_file, first) and '"#key": "payment_id"' in line(
        item_file, last
    )
    read_file, read_lines = rows["its key, read back (`Look up earlier record`)"]
    first, last = read_lines.split("-")
    assert '"Key"' in line(read_file, first) and '"#key": "payment_id"' in line(read_file, last)
    file, keys = rows["the business table's key"]
    assert all("AttributeName: payment_id" in line(file, n) for n in keys.split(" and "))
    assert "PAYLOAD_EVENT_ID_PATH: payment_id" in line(*rows["where the event_id is"])
    assert "def effect(" in line(*rows["the subscriber's effect (`effect`)"])
    assert "TALLY_KEY_PATH: account_id" in line(*rows["the subscriber's tally key"])


def test_samconfig_and_pyproject_name_the_app(payments_app: Rendered) -> None:
    samconfig = (payments_app.path / "samconfig.toml").read_text()
    assert 'stack_name = "payments-app"' in samconfig and "@@" not in samconfig
    pyproject = (payments_app.path / "pyproject.toml").read_text()
    assert '"onceflow[local]>=' in pyproject and "{{" not in pyproject


def test_the_cookiecutter_defaults_are_the_payments_example() -> None:
    """So `sam init --location ... --no-input` makes the same app as `onceflow init --example payments`."""
    defaults = json.loads((ROOT / "onceflow/app_template/cookiecutter.json").read_text())
    example = examples()["payments"]
    assert json.loads(defaults["sample_body"]) == json.loads(example.sample_text)
    assert defaults["event_id_path"] == example.event_id_path
    assert defaults["group_by"] in ("", example.group_by)
    from importlib.metadata import version

    assert defaults["onceflow_version"] == version("onceflow")
