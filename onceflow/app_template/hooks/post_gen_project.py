"""cookiecutter's post-generation hook of the Onceflow app template: makes the skeleton the new app's own.

The template carries Onceflow's own app as its skeleton (template.yaml, statemachine/, functions/,
copied without rendering); this hook, run in the new app's folder, changes only what a domain is
(docs/ARCHITECTURE.md, "What a domain is, and where each part of it lives"):

- events/bodies/<noun>.json, the sample body, and events/sqs-<noun>.json, an SQS event of it for
  `sam local invoke`;
- template.yaml: `Metadata.Onceflow.SampleBody`, the starter's PAYLOAD_EVENT_ID_PATH, PAYLOAD_SCHEMA
  instead of PAYLOAD_MODEL, the BusinessTable's key, the example subscriber's TALLY_KEY_PATH;
- functions/starter/domain/: the app's JSON Schema made from the sample (its top-level fields
  required, with their types) instead of the skeleton's own model;
- statemachine/pipeline.asl.json: the business item (the second Put of the Task that calls
  transactWriteItems) built from the sample's fields, and its key in that Put's condition and in
  the look-up's Get;
- README.md: the lines to change for the business item, the schema and the subscriber's effect.

It runs under whatever interpreter runs cookiecutter (`onceflow init`'s, or that of a pip-installed
`sam init`), so it uses the standard library only and Python 3.9's syntax at run time. `onceflow
init` imports it to check its inputs first (one line for a mistake, before anything is written);
cookiecutter renders this file before running it, which fills in CONTEXT below.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# cookiecutter's context, filled in when cookiecutter renders this file (unrendered when imported).
CONTEXT = r"""{{ cookiecutter | tojson }}"""

RECORD_RESOURCE = "arn:aws:states:::aws-sdk:dynamodb:transactWriteItems"
LOOK_UP_RESOURCE = "arn:aws:states:::aws-sdk:dynamodb:transactGetItems"
BUSINESS_TABLE = "${BusinessTable}"
KEY_ALIAS = "#key"
# The business item's own attributes, written by the workflow (the skeleton's item keeps them).
WORKFLOW_ATTRIBUTES = ("payload_hash", "received_at", "recorded_at", "execution_arn")
# A name JSONPath reaches as `$.payload.<name>` (other names stay in the payload only).
_PLAIN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_NOUN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
# CloudFormation: "A stack name can contain only alphanumeric characters (case-sensitive) and
# hyphens. It must start with an alphabetic character and can't be longer than 128 characters."
_STACK_NAME = re.compile(r"^[A-Za-z][-A-Za-z0-9]{0,127}$")
# YAML 1.1 words a plain scalar would turn into a boolean or null.
_YAML_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"}


class InitError(ValueError):
    """An input the app cannot be made from; the message names it and what is allowed (one line)."""


@dataclass(frozen=True)
class Inputs:
    """What the new app is made from, checked."""

    sample: dict[str, Any]
    event_id_path: str
    business_key: str
    group_by: str
    noun: str
    project_name: str
    stack_name: str

    @property
    def sample_file(self) -> str:
        return f"events/bodies/{self.noun}.json"

    @property
    def schema_file(self) -> str:
        """Relative to the starter's code directory, as PAYLOAD_SCHEMA names it."""
        return f"domain/{self.noun}.schema.json"


def _get(document: Any, path: str) -> Any:
    for name in path.split("."):
        document = document.get(name) if isinstance(document, dict) else None
    return document


def parse_sample(text: str) -> dict[str, Any]:
    try:
        sample = json.loads(text)
    except ValueError as error:
        raise InitError(f"the sample event is not JSON ({error})") from None
    if not isinstance(sample, dict) or not sample:
        raise InitError("the sample event must be a JSON object with fields (a message body of your domain)")
    return sample


def default_noun(business_key: str) -> str:
    """`payment_id` -> `payment`: the word files are named after."""
    word = re.sub(r"(_id|Id|-id|_key)$", "", business_key) or business_key
    word = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", word).lower()
    word = re.sub(r"[^a-z0-9_-]+", "-", word).strip("-_")
    return word if _NOUN.match(word) and word not in ("id", "key") else "event"


def default_group_by(sample: dict[str, Any], event_id_path: str) -> str:
    """The first top-level text field that is not the event_id, else the event_id itself."""
    top = event_id_path.split(".")[0]
    for name, value in sample.items():
        if name != top and _PLAIN_NAME.match(name) and isinstance(value, str) and value:
            return name
    return event_id_path


def default_stack_name(project_slug: str) -> str:
    name = re.sub(r"[^A-Za-z0-9-]+", "-", project_slug).strip("-")
    name = name if name[:1].isalpha() else f"app-{name}".rstrip("-")
    return name[:128]


def check_inputs(values: dict[str, Any]) -> Inputs:
    """The template's variables (cookiecutter's context, or `onceflow init`'s options) checked;
    empty ones get their defaults. InitError names the first mistake."""
    sample = parse_sample(str(values.get("sample_body", "")))
    path = str(values.get("event_id_path", "")).strip()
    if not _PATH.match(path):
        raise InitError(
            f"event id path {path!r}: names joined by dots (letters, digits, _), the place of the event_id "
            "in the body, e.g. payment_id or detail.payment_id"
        )
    event_id = _get(sample, path)
    if not isinstance(event_id, str) or not event_id:
        raise InitError(f"the sample event has no non-empty text at {path!r}, where its event_id is")
    business_key = str(values.get("business_key") or path.split(".")[-1])
    if not _PLAIN_NAME.match(business_key):
        raise InitError(f"business key {business_key!r}: a DynamoDB attribute name of letters, digits and _")
    if business_key in WORKFLOW_ATTRIBUTES:
        raise InitError(f"business key {business_key!r}: the workflow writes that attribute itself; pick another")
    if business_key in sample and business_key != path:
        raise InitError(
            f"business key {business_key!r} is a field of the sample that is not the event_id; the key carries "
            f"the event_id (at {path!r}): pick another name"
        )
    clashes = sorted(name for name in sample if name in WORKFLOW_ATTRIBUTES)
    if clashes:
        raise InitError(
            f"the sample has a field {clashes[0]!r}, which the business item's own attribute of that name would "
            "hide; rename it in your domain or change the business item by hand"
        )
    group_by = str(values.get("group_by") or default_group_by(sample, path))
    group_value = _get(sample, group_by) if _PATH.match(group_by) else None
    if isinstance(group_value, bool) or not isinstance(group_value, (str, int, float)) or group_value == "":
        raise InitError(
            f"group by {group_by!r}: the sample needs text or a number there (the subscriber's tally key and a FIFO "
            "source's message group)"
        )
    noun = str(values.get("noun") or default_noun(business_key))
    if not _NOUN.match(noun):
        raise InitError(f"noun {noun!r}: lower-case letters, digits, - and _ (it names the sample and schema files)")
    project_name = str(values.get("project_name") or "").strip()
    if not project_name:
        raise InitError("the project name is empty")
    stack_name = str(values.get("stack_name") or default_stack_name(str(values.get("project_slug") or project_name)))
    if not _STACK_NAME.match(stack_name):
        raise InitError(
            f"stack name {stack_name!r}: CloudFormation takes letters, digits and hyphens, starting with a letter, "
            "at most 128"
        )
    return Inputs(sample, path, business_key, group_by, noun, project_name, stack_name)


# --- the JSON Schema -------------------------------------------------------------------------


def _json_type(value: Any) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"  # 25 in the sample does not forbid 25.5
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return None  # null: no type to require


def _object_schema(document: dict[str, Any], id_parts: list[str]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for name, value in document.items():
        kind = _json_type(value)
        if kind is None:
            continue
        if id_parts and name == id_parts[0] and len(id_parts) > 1 and isinstance(value, dict):
            properties[name] = _object_schema(value, id_parts[1:])
        elif id_parts and name == id_parts[0] and len(id_parts) == 1:
            properties[name] = {"type": "string", "minLength": 1}
        else:
            properties[name] = {"type": kind}
    return {"type": "object", "required": list(properties), "properties": properties}


def payload_schema(inputs: Inputs) -> dict[str, Any]:
    """Draft-07 JSON Schema of the payload: every field of the sample that has a value is required,
    with its type (the event_id a non-empty string). The business item reads these fields, and on
    AWS a JSONPath that finds nothing fails the Record state with States.Runtime, which no Catch
    handles (https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html): so
    the starter dead-letters a body without them, naming the field and the rule."""
    schema = _object_schema(inputs.sample, inputs.event_id_path.split("."))
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$comment": (
            f"Made by onceflow init from {inputs.sample_file}: every field of the sample required, with its type. "
            "The business item in statemachine/pipeline.asl.json reads the required fields; a field you stop "
            "requiring here must leave the business item too. Add your own rules (minimum, pattern, enum)."
        ),
        "title": inputs.noun,
        **schema,
    }


# --- the business item -------------------------------------------------------------------------


def attribute_value(name: str, value: Any) -> dict[str, str] | None:
    """The DynamoDB JSON of one payload field, read from the execution input at `$.payload.<name>`.

    Numbers go as N, their text made with States.JsonToString (AWS's intrinsic page, "Intrinsics for
    JSON data manipulation": https://docs.aws.amazon.com/step-functions/latest/dg/intrinsic-functions.html;
    recorded against AWS, it gives 1.1 -> "1.1" and true -> "true": LocalStack's aws-validated
    test_json_manipulation snapshots); DynamoDB takes a number as a string
    (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_AttributeValue.html).
    Objects and arrays go as S, their JSON text. None for a null (no type) or a name JSONPath's dot
    notation cannot reach."""
    if value is None or not _PLAIN_NAME.match(name):
        return None
    path = f"$.payload.{name}"
    if isinstance(value, bool):
        return {"BOOL.$": path}
    if isinstance(value, (int, float)):
        return {"N.$": f"States.JsonToString({path})"}
    if isinstance(value, str):
        return {"S.$": path}
    return {"S.$": f"States.JsonToString({path})"}


def business_item(inputs: Inputs, skeleton_item: dict[str, Any]) -> dict[str, Any]:
    """The key (the event_id), then each field of the sample, then the workflow's own attributes
    as the skeleton writes them."""
    item: dict[str, Any] = {inputs.business_key: {"S.$": "$.event_id"}}
    for name, value in inputs.sample.items():
        if name == inputs.business_key:
            continue
        attribute = attribute_value(name, value)
        if attribute is not None:
            item[name] = attribute
    for name in WORKFLOW_ATTRIBUTES:
        if name not in skeleton_item:
            raise InitError(f"the skeleton's business item has no {name!r}: this template does not match its skeleton")
        item[name] = skeleton_item[name]
    return item


def _task(definition: dict[str, Any], resource: str) -> dict[str, Any]:
    tasks = [
        s for s in definition.get("States", {}).values() if s.get("Type") == "Task" and s.get("Resource") == resource
    ]
    if len(tasks) != 1:
        raise InitError(f"the skeleton's workflow has {len(tasks)} Task states calling {resource}, not one")
    return tasks[0]


def _on_business_table(actions: list[dict[str, Any]], action: str) -> dict[str, Any]:
    found = [a[action] for a in actions if a.get(action, {}).get("TableName") == BUSINESS_TABLE]
    if len(found) != 1:
        raise InitError(f"the skeleton's workflow has {len(found)} {action}s on {BUSINESS_TABLE}, not one")
    return found[0]


def make_workflow_own(definition: dict[str, Any], inputs: Inputs) -> dict[str, Any]:
    """The skeleton's definition with the app's business item, its key named through
    ExpressionAttributeNames (so any attribute name works, DynamoDB's reserved words included)."""
    put = _on_business_table(_task(definition, RECORD_RESOURCE)["Parameters"]["TransactItems"], "Put")
    put["Item"] = business_item(inputs, put["Item"])
    put["ConditionExpression"] = f"attribute_not_exists({KEY_ALIAS})"
    put["ExpressionAttributeNames"] = {KEY_ALIAS: inputs.business_key}
    get = _on_business_table(_task(definition, LOOK_UP_RESOURCE)["Parameters"]["TransactItems"], "Get")
    get["Key"] = {inputs.business_key: {"S.$": "$.event_id"}}
    get["ProjectionExpression"] = f"{KEY_ALIAS}, payload_hash"
    get["ExpressionAttributeNames"] = {KEY_ALIAS: inputs.business_key}
    return definition


# --- template.yaml, edited as text (its comments and layout stay the skeleton's) ---------------


def yaml_scalar(text: str) -> str:
    plain = re.match(r"^[A-Za-z_][A-Za-z0-9_./-]*$", text) and text.lower() not in _YAML_WORDS
    return text if plain else json.dumps(text)


def _replace_value(text: str, key: str, value: str, count: int = 1, within: tuple[int, int] | None = None) -> str:
    start, end = within or (0, len(text))
    pattern = re.compile(rf"^(\s*(?:- )?{re.escape(key)}:)[ \t]*\S.*$", re.MULTILINE)
    found = list(pattern.finditer(text, start, end))
    if len(found) != count:
        raise InitError(f"the skeleton's template.yaml has {len(found)} lines '{key}: ...' where {count} were expected")
    for match in reversed(found):
        text = text[: match.start()] + f"{match.group(1)} {value}" + text[match.end() :]
    return text


def _resource_block(text: str, logical_id: str) -> tuple[int, int]:
    head = re.search(rf"^  {re.escape(logical_id)}:\s*$", text, re.MULTILINE)
    if head is None:
        raise InitError(f"the skeleton's template.yaml has no resource {logical_id}")
    following = re.compile(r"^  \S", re.MULTILINE).search(text, head.end())
    return head.end(), following.start() if following else len(text)


def make_template_own(text: str, inputs: Inputs) -> str:
    text = _replace_value(text, "SampleBody", yaml_scalar(inputs.sample_file))
    text = _replace_value(text, "PAYLOAD_EVENT_ID_PATH", yaml_scalar(inputs.event_id_path))
    text = re.sub(r"^(\s*)PAYLOAD_MODEL:.*$", rf"\1PAYLOAD_SCHEMA: {inputs.schema_file}", text, count=1, flags=re.M)
    if f"PAYLOAD_SCHEMA: {inputs.schema_file}" not in text:
        raise InitError("the skeleton's template.yaml names no PAYLOAD_MODEL to replace by PAYLOAD_SCHEMA")
    text = _replace_value(text, "TALLY_KEY_PATH", yaml_scalar(inputs.group_by))
    table = _resource_block(text, "BusinessTable")
    return _replace_value(text, "AttributeName", yaml_scalar(inputs.business_key), count=2, within=table)


# --- events/ -----------------------------------------------------------------------------------


def sqs_event(body: str, noun: str) -> dict[str, Any]:
    """One SQS record as Lambda hands it to the starter (`sam local invoke StarterFunction -e ...`)."""
    return {
        "Records": [
            {
                "messageId": "0d5e8a3b-7c21-4f96-b4a0-1e9c6d2f7b00",
                "receiptHandle": f"AQEBexample-{noun}",
                "body": body,
                "attributes": {
                    "ApproximateReceiveCount": "1",
                    "SentTimestamp": "1790000000000",
                    "SenderId": "AIDAIENQZJOLO23YVJ4VO",
                    "ApproximateFirstReceiveTimestamp": "1790000000120",
                },
                "messageAttributes": {},
                "md5OfBody": hashlib.md5(body.encode()).hexdigest(),  # SQS's own checksum of the body
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:SourceQueue",
                "awsRegion": "us-east-1",
            }
        ]
    }


# --- README.md: where to change what -----------------------------------------------------------

WHERE_MARKER = "<!-- onceflow:where-to-change -->"


def _line_of(text: str, needle: str, start: int = 0) -> int:
    """The 1-based line of the first `needle` at or after `start`."""
    index = text.find(needle, start)
    if index < 0:
        raise InitError(f"cannot find {needle!r} in the generated files")
    return text.count("\n", 0, index) + 1


def where_to_change(root: Path, inputs: Inputs) -> str:
    """A Markdown table: what to change, in which file, on which lines of the files as generated."""
    asl = (root / "statemachine/pipeline.asl.json").read_text(encoding="utf-8")
    template = (root / "template.yaml").read_text(encoding="utf-8")
    subscriber = (root / "functions/subscriber/app.py").read_text(encoding="utf-8")
    path, group = yaml_scalar(inputs.event_id_path), yaml_scalar(inputs.group_by)
    put = asl.find(f"attribute_not_exists({KEY_ALIAS})")
    table_line = _line_of(asl, '"TableName"', asl.rfind('"TableName"', 0, put))
    item = f"{table_line}-{_line_of(asl, KEY_ALIAS, asl.find('ExpressionAttributeNames', put))}"
    get = asl.find(f"{KEY_ALIAS}, payload_hash")
    key_line = _line_of(asl, '"Key"', asl.rfind('"Get"', 0, get))
    read_back = f"{key_line}-{_line_of(asl, KEY_ALIAS, get + 1)}"
    table = template.find("\n  BusinessTable:")
    keys = [
        _line_of(template, "AttributeName:", table),
        _line_of(template, "AttributeName:", template.find("KeySchema", table)),
    ]
    rows = [
        (
            "the business item (the second Put of `Record event and business item`)",
            "statemachine/pipeline.asl.json",
            item,
        ),
        ("its key, read back (`Look up earlier record`)", "statemachine/pipeline.asl.json", read_back),
        ("the business table's key", "template.yaml", f"{keys[0]} and {keys[1]}"),
        ("what a payload must be", f"functions/starter/{inputs.schema_file}", "the whole file"),
        ("where the event_id is", "template.yaml", str(_line_of(template, f"PAYLOAD_EVENT_ID_PATH: {path}"))),
        ("the subscriber's effect (`effect`)", "functions/subscriber/app.py", str(_line_of(subscriber, "def effect("))),
        ("the subscriber's tally key", "template.yaml", str(_line_of(template, f"TALLY_KEY_PATH: {group}"))),
    ]
    lines = ["| what | file | lines |", "| --- | --- | --- |"]
    return "\n".join(lines + [f"| {what} | `{file}` | {where} |" for what, file, where in rows])


# --- the whole change --------------------------------------------------------------------------


def _remove_caches(root: Path) -> None:
    for cache in sorted(root.rglob("__pycache__"), reverse=True):
        shutil.rmtree(cache, ignore_errors=True)
    for compiled in root.rglob("*.pyc"):
        compiled.unlink()


def make_app_own(root: Path, inputs: Inputs) -> None:
    """Turn the copied skeleton in `root` into the app of `inputs`."""
    _remove_caches(root)
    body = json.dumps(inputs.sample, indent=2, ensure_ascii=False) + "\n"
    (root / "events/bodies").mkdir(parents=True, exist_ok=True)
    (root / inputs.sample_file).write_text(body, encoding="utf-8")
    compact = json.dumps(inputs.sample, separators=(",", ":"), ensure_ascii=False)
    event = json.dumps(sqs_event(compact, inputs.noun), indent=2, ensure_ascii=False) + "\n"
    (root / f"events/sqs-{inputs.noun}.json").write_text(event, encoding="utf-8")

    domain = root / "functions/starter/domain"
    for path in domain.iterdir():
        if path.name != "__init__.py":
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    schema = json.dumps(payload_schema(inputs), indent=2, ensure_ascii=False) + "\n"
    (root / "functions/starter" / inputs.schema_file).write_text(schema, encoding="utf-8")

    template = root / "template.yaml"
    template.write_text(make_template_own(template.read_text(encoding="utf-8"), inputs), encoding="utf-8")
    asl = root / "statemachine/pipeline.asl.json"
    definition = make_workflow_own(json.loads(asl.read_text(encoding="utf-8")), inputs)
    asl.write_text(json.dumps(definition, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

    for name in ("README.md", "samconfig.toml"):
        path = root / name
        if path.is_file():
            path.write_text(fill_in(path.read_text(encoding="utf-8"), root, inputs), encoding="utf-8")


def fill_in(text: str, root: Path, inputs: Inputs) -> str:
    """A file's `@@NAME@@` words (values this hook works out, which cookiecutter's Jinja cannot) and the
    README's table of where to change what."""
    words = {
        "STACK_NAME": inputs.stack_name,
        "SAMPLE_FILE": inputs.sample_file,
        "SCHEMA_FILE": f"functions/starter/{inputs.schema_file}",
        "EVENT_ID_PATH": inputs.event_id_path,
        "BUSINESS_KEY": inputs.business_key,
        "GROUP_BY": inputs.group_by,
        "NOUN": inputs.noun,
    }
    for name, value in words.items():
        text = text.replace(f"@@{name}@@", value)
    return text.replace(WHERE_MARKER, where_to_change(root, inputs)) if WHERE_MARKER in text else text


def main() -> int:
    if CONTEXT.startswith("{" * 2):  # not rendered (two braces, written so that Jinja leaves this line alone)
        print("post_gen_project: run by cookiecutter, which fills in its context", file=sys.stderr)
        return 2
    try:
        make_app_own(Path.cwd(), check_inputs(json.loads(CONTEXT)))
    except InitError as error:
        print(f"onceflow app template: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
