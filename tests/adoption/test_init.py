"""`onceflow init`: an app from any sample, and one line for every mistake, before anything is written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from onceflow.app_template.hooks import post_gen_project as hook
from onceflow.app_template.render import InitError, render
from onceflow.cli import app
from tests.adoption.conftest import payments_values

runner = CliRunner()


def _init(*args: str) -> tuple[int, list[str]]:
    result = runner.invoke(app, ["init", *args])
    return result.exit_code, result.output.strip().splitlines()


def test_init_writes_the_app_and_says_what_to_do_next(tmp_path: Path) -> None:
    code, lines = _init(str(tmp_path / "pay"), "--example", "payments", "--stack-name", "pay-prod")
    assert code == 0, lines
    assert (tmp_path / "pay/template.yaml").is_file()
    assert 'stack_name = "pay-prod"' in (tmp_path / "pay/samconfig.toml").read_text()
    assert "business key payment_id" in lines[0] and any("pytest" in line for line in lines)


def test_init_into_an_existing_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "pay").mkdir()
    code, lines = _init(str(tmp_path / "pay"), "--example", "payments")
    assert code == 0, lines
    assert (tmp_path / "pay/events/bodies/payment.json").is_file()


def test_the_location_is_the_template_sam_init_takes() -> None:
    code, lines = _init("--location")
    assert code == 0
    assert (Path(lines[0]) / "cookiecutter.json").is_file()
    assert (Path(lines[0]) / "hooks/post_gen_project.py").is_file()


def _sample(tmp_path: Path, body: object) -> str:
    path = tmp_path / "sample.json"
    path.write_text(json.dumps(body) if not isinstance(body, str) else body)
    return str(path)


PAYMENT = {"payment_id": "pay-1", "account_id": "acct-1", "amount": 2.5}
MISTAKES = [
    (["--example", "refunds"], "'refunds': the shipped examples are payments"),
    (["--sample-event", "{sample}"], "give --sample-event FILE and --event-id-path EXPR"),
    (["--sample-event", "{missing}", "--event-id-path", "payment_id"], "cannot be read (No such file or directory)"),
    (["--sample-event", "{sample}", "--event-id-path", "id"], "has no non-empty text at 'id', where its event_id is"),
    (["--sample-event", "{sample}", "--event-id-path", "payment id"], "names joined by dots"),
    (["--sample-event", "{sample}", "--event-id-path", "amount"], "has no non-empty text at 'amount'"),
    (
        ["--sample-event", "{sample}", "--event-id-path", "payment_id", "--business-key", "account_id"],
        "a field of the sample that is not the event_id",
    ),
    (
        ["--sample-event", "{sample}", "--event-id-path", "payment_id", "--business-key", "payload_hash"],
        "the workflow writes that attribute itself",
    ),
    (["--sample-event", "{sample}", "--event-id-path", "payment_id", "--business-key", "a-b"], "letters, digits and _"),
    (["--sample-event", "{sample}", "--event-id-path", "payment_id", "--group-by", "nope"], "group by 'nope'"),
    (["--sample-event", "{sample}", "--event-id-path", "payment_id", "--stack-name", "9lives"], "stack name '9lives'"),
    (["--example", "payments", "--sample-event", "{sample}"], "give --example or --sample-event, not both"),
]


@pytest.mark.parametrize(("args", "says"), MISTAKES, ids=[m[1][:40] for m in MISTAKES])
def test_a_mistake_gets_one_line_and_writes_nothing(tmp_path: Path, args: list[str], says: str) -> None:
    sample = _sample(tmp_path, PAYMENT)
    filled = [a.format(sample=sample, missing=tmp_path / "missing.json") for a in args]
    code, lines = _init(str(tmp_path / "app"), *filled)
    assert code == 2
    assert len(lines) == 1 and lines[0].startswith("onceflow init: ") and says in lines[0], lines
    assert not (tmp_path / "app").exists()


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[1, 2", "the sample event is not JSON"),
        ("[1, 2]", "must be a JSON object with fields"),
        ("{}", "must be a JSON object with fields"),
        ('{"payment_id": "p", "payload_hash": "x"}', "the sample has a field 'payload_hash'"),
    ],
)
def test_a_sample_that_cannot_make_an_app_is_named(tmp_path: Path, text: str, says: str) -> None:
    code, lines = _init(
        str(tmp_path / "app"), "--sample-event", _sample(tmp_path, text), "--event-id-path", "payment_id"
    )
    assert code == 2 and len(lines) == 1 and says in lines[0], lines


def test_a_folder_with_anything_in_it_is_refused(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app/notes.txt").write_text("mine")
    code, lines = _init(str(tmp_path / "app"), "--example", "payments")
    assert code == 2 and "not empty (1 entries)" in lines[0]
    assert [p.name for p in (tmp_path / "app").iterdir()] == ["notes.txt"]


def test_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "app").write_text("")
    code, lines = _init(str(tmp_path / "app"), "--example", "payments")
    assert code == 2 and "a file; give a new or empty folder" in lines[0]


def test_a_sample_with_jinja_in_its_strings_is_written_as_given(tmp_path: Path) -> None:
    """cookiecutter renders every variable as Jinja: a `{{`, `{%` or `{#` in the sample stays text."""
    sample = {"ticket_id": "t-1", "text": "{{ not a tag }} {% nor this %} {# nor that #}", "n": {"{{k}}": 1}}
    made = render(tmp_path / "tickets", {"sample_body": json.dumps(sample), "event_id_path": "ticket_id"})
    assert json.loads((made.path / "events/bodies/ticket.json").read_text()) == sample


def test_every_kind_of_json_value_gets_its_attribute_type() -> None:
    assert hook.attribute_value("a", "x") == {"S.$": "$.payload.a"}
    assert hook.attribute_value("a", 1) == {"N.$": "States.JsonToString($.payload.a)"}
    assert hook.attribute_value("a", 1.5) == {"N.$": "States.JsonToString($.payload.a)"}
    assert hook.attribute_value("a", True) == {"BOOL.$": "$.payload.a"}
    assert hook.attribute_value("a", {"b": 1}) == {"S.$": "States.JsonToString($.payload.a)"}
    assert hook.attribute_value("a", [1]) == {"S.$": "States.JsonToString($.payload.a)"}
    assert hook.attribute_value("a", None) is None  # no type to write
    assert hook.attribute_value("a-b", "x") is None  # JSONPath's dot notation cannot reach it


def test_a_nested_event_id_is_required_along_its_path(tmp_path: Path) -> None:
    sample = {"meta": {"id": "e-1", "source": "web"}, "total": 3}
    inputs = hook.check_inputs({"sample_body": json.dumps(sample), "event_id_path": "meta.id", "project_name": "x"})
    schema = hook.payload_schema(inputs)
    assert inputs.business_key == "id" and inputs.noun == "event" and inputs.group_by == "meta.id"
    assert schema["required"] == ["meta", "total"]
    assert schema["properties"]["meta"]["properties"]["id"] == {"type": "string", "minLength": 1}
    assert schema["properties"]["meta"]["required"] == ["id", "source"]


@pytest.mark.parametrize(
    ("key", "noun"),
    [("payment_id", "payment"), ("paymentId", "payment"), ("invoiceNumber", "invoice_number"), ("id", "event")],
)
def test_files_are_named_after_the_key(key: str, noun: str) -> None:
    assert hook.default_noun(key) == noun


def test_the_hook_refuses_to_run_unrendered(capsys: pytest.CaptureFixture[str]) -> None:
    assert hook.main() == 2
    assert "run by cookiecutter" in capsys.readouterr().err


def test_a_skeleton_without_a_domain_line_is_named(tmp_path: Path) -> None:
    """A change to the root template that the hook no longer finds fails the rendering, naming the line."""
    inputs = hook.check_inputs(payments_values())
    with pytest.raises(InitError, match=re.escape("has 0 lines 'TALLY_KEY_PATH: ...'")):
        hook.make_template_own(
            "Metadata:\n  Onceflow:\n    SampleBody: x.json\nPAYLOAD_EVENT_ID_PATH: a\nPAYLOAD_MODEL: m\n", inputs
        )
