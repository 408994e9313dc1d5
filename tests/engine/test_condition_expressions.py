"""A ConditionExpression evaluates as DynamoDB evaluates it whether the engine parses each (text, names,
values) once (the `condition_expressions` speed-up) or per request as moto does. Compared here
parse by parse with moto's own parser, and through the API on the embedded engine with the speed-up
on (the suite's) and off (`ONCEFLOW_SPEEDUPS_OFF=condition_expressions` runs this file the other way).

AWS: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError
from moto.dynamodb.comparisons import ConditionExpressionParser
from moto.dynamodb.models.dynamo_type import DynamoType, Item

from onceflow.engine.speedups import condition_expressions

MOTO_PARSE = ConditionExpressionParser.__dict__["parse"]  # this module is imported before any engine starts

CONDITIONS: list[tuple[str, dict[str, str], dict[str, Any]]] = [
    ("attribute_not_exists(event_id)", {}, {}),
    ("attribute_exists(event_id) AND payload_hash = :payload_hash", {}, {":payload_hash": {"S": "abc"}}),
    (
        "#s = :sent OR (n BETWEEN :low AND :high AND NOT attribute_exists(gone))",
        {"#s": "status"},
        {":sent": {"S": "sent"}, ":low": {"N": "1"}, ":high": {"N": "10"}},
    ),
    (
        "size(tags) > :two AND contains(tags, :tag) AND begins_with(#k, :prefix)",
        {"#k": "key"},
        {":two": {"N": "2"}, ":tag": {"S": "red"}, ":prefix": {"S": "ord-"}},
    ),
    (
        "n IN (:a, :b, :c) AND attribute_type(m, :map)",
        {},
        {":a": {"N": "1"}, ":b": {"N": "5"}, ":c": {"N": "7"}, ":map": {"S": "M"}},
    ),
    ("m.#i.deeper = :v AND l[1] <> :w", {"#i": "inner"}, {":v": {"S": "x"}, ":w": {"N": "3"}}),
]
ITEMS = [
    None,
    {"event_id": {"S": "e1"}, "payload_hash": {"S": "abc"}, "status": {"S": "sent"}, "n": {"N": "5"}},
    {
        "event_id": {"S": "e2"},
        "payload_hash": {"S": "xyz"},
        "status": {"S": "pending"},
        "n": {"N": "7"},
        "gone": {"S": "here"},
        "tags": {"SS": ["red", "blue", "green"]},
        "key": {"S": "ord-1"},
        "m": {"M": {"inner": {"M": {"deeper": {"S": "x"}}}}},
        "l": {"L": [{"N": "1"}, {"N": "2"}]},
    },
]


def _item(attributes: dict[str, Any] | None) -> Item | None:
    if attributes is None:
        return None
    key = next(iter(attributes.values()))
    return Item(DynamoType(key), None, attributes)


@pytest.fixture
def cached_parse(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """ConditionExpressionParser.parse as the speed-up patches it (fresh cache), counting moto's parses."""
    parses: list[str] = []

    def counted(self: ConditionExpressionParser) -> Any:
        parses.append(self.condition_expression)
        return MOTO_PARSE(self)

    monkeypatch.setattr(ConditionExpressionParser, "parse", counted)
    for owner, name, replacement in condition_expressions.patches():  # wraps the counted parse
        monkeypatch.setattr(owner, name, replacement)
    yield parses


def _answers(condition: Any) -> list[Any]:
    """The condition's answer for each item, or the error it raises (moto's size() of a missing
    attribute, types that do not compare)."""
    answers: list[Any] = []
    for attributes in ITEMS:
        try:
            answers.append(condition.expr(_item(attributes)))
        except Exception as error:
            answers.append(f"{type(error).__name__}: {error}")
    return answers


def _moto(expression: str, names: dict[str, str], values: dict[str, Any]) -> tuple[Any, list[str], list[str]]:
    """moto's own parse, around the speed-up (not counted)."""
    parser = ConditionExpressionParser(expression, names, values)
    return MOTO_PARSE(parser), parser.expr_attr_names_found, parser.expr_attr_values_found


@pytest.mark.parametrize(("expression", "names", "values"), CONDITIONS)
def test_a_remembered_condition_evaluates_and_finds_placeholders_as_moto_s_parse(
    cached_parse: list[str], expression: str, names: dict[str, str], values: dict[str, Any]
) -> None:
    reference, names_found, values_found = _moto(expression, names, values)  # moto's parse (counted too)
    answers = _answers(reference)
    assert True in answers or expression.startswith("m.")  # the items tell the conditions apart
    for _ in range(3):
        parser = ConditionExpressionParser(expression, dict(names), {k: dict(v) for k, v in values.items()})
        condition = parser.parse()
        assert _answers(condition) == answers
        assert (parser.expr_attr_names_found, parser.expr_attr_values_found) == (names_found, values_found)
    assert cached_parse == [expression]  # parsed once


def test_other_values_are_bound_to_the_same_parse_and_other_names_are_another(cached_parse: list[str]) -> None:
    expression = "#s = :v"
    sent = ConditionExpressionParser(expression, {"#s": "status"}, {":v": {"S": "sent"}}).parse()
    pending = ConditionExpressionParser(expression, {"#s": "status"}, {":v": {"S": "pending"}}).parse()
    by_hash = ConditionExpressionParser(expression, {"#s": "payload_hash"}, {":v": {"S": "sent"}}).parse()
    item = _item(ITEMS[1])
    assert (sent.expr(item), pending.expr(item), by_hash.expr(item)) == (True, False, False)
    assert len(cached_parse) == 2  # the values of a request are bound into the parse of its text and names
    ConditionExpressionParser(expression, {"#s": "status"}, {":v": {"S": "x"}, ":w": {"S": "y"}}).parse()
    assert len(cached_parse) == 3  # another set of placeholders: another parse


VALUE_KINDS = [
    {"S": "sent"},
    {"N": "5"},
    {"N": "5.00"},
    {"SS": ["red", "blue", "green"]},
    {"L": [{"N": "1"}, {"N": "2"}]},
    {"M": {"inner": {"M": {"deeper": {"S": "x"}}}}},
    {"BOOL": True},
    {"NULL": True},
    {"B": "YWJj"},
]


@pytest.mark.parametrize("value", VALUE_KINDS, ids=lambda value: next(iter(value)))
def test_each_request_s_values_evaluate_as_moto_s_parse_of_that_request(
    cached_parse: list[str], value: dict[str, Any]
) -> None:
    """Every kind of value, bound into the parse kept for the text, compares as moto's own parse of the
    request compares it, in each place a value may stand (a comparison, IN, BETWEEN, a function)."""
    expression = "n = :v OR n IN (:v, :w) OR n BETWEEN :w AND :v OR contains(tags, :v) OR #m <> :v"
    names = {"#m": "m"}
    ConditionExpressionParser(expression, names, {":v": {"S": "first"}, ":w": {"S": "kept"}}).parse()
    for other in VALUE_KINDS:
        values = {":v": value, ":w": other}
        assert _parsed_as(ConditionExpressionParser.parse, expression, names, values) == _parsed_as(
            MOTO_PARSE, expression, names, values
        )
    assert cached_parse == [expression]


def _parsed_as(parse: Any, expression: str, names: dict[str, str], values: dict[str, Any]) -> Any:
    """What `parse` makes of the request: the condition's outcomes and the placeholders found, or the
    error it raises (moto refuses a NULL bound of BETWEEN when it makes the condition)."""
    parser = ConditionExpressionParser(expression, names, values)
    try:
        condition = parse(parser)
    except Exception as error:
        return f"{type(error).__name__}: {error}"
    return _answers(condition), parser.expr_attr_names_found, parser.expr_attr_values_found


def test_a_value_moto_cannot_read_raises_as_moto_s_parse_raises(cached_parse: list[str]) -> None:
    ConditionExpressionParser("a = :v", {}, {":v": {"S": "fine"}}).parse()
    for _ in range(2):
        with pytest.raises(IndexError):  # moto's AttributeValue of a value with no type
            ConditionExpressionParser("a = :v", {}, {":v": {}}).parse()
    with pytest.raises(KeyError):  # a placeholder the request does not define
        ConditionExpressionParser("a = :other", {}, {":v": {"S": "x"}}).parse()


def test_a_caller_s_later_change_to_its_values_reaches_no_remembered_condition(cached_parse: list[str]) -> None:
    values = {":h": {"S": "abc"}}
    condition = ConditionExpressionParser("payload_hash = :h", {}, values).parse()
    values[":h"]["S"] = "xyz"
    assert condition.expr(_item(ITEMS[1])) is True
    again = ConditionExpressionParser("payload_hash = :h", {}, {":h": {"S": "abc"}}).parse()
    assert again.expr(_item(ITEMS[1])) is True and len(cached_parse) == 1


def test_a_text_that_does_not_parse_raises_every_time(cached_parse: list[str]) -> None:
    for _ in range(2):
        with pytest.raises(Exception) as raised:
            ConditionExpressionParser("attribute_exists(a) AND", {}, {}).parse()
        assert type(raised.value).__name__ == "InvalidConditionExpression" or isinstance(raised.value, ValueError)
    assert len(cached_parse) == 2  # nothing kept


def test_names_that_are_not_plain_json_are_parsed_as_moto_parses_them(cached_parse: list[str]) -> None:
    unhashable = {"#a": ["not", "a", "name"]}
    assert condition_expressions.cache_key(ConditionExpressionParser("#a = :v", unhashable, {})) is None
    ConditionExpressionParser("attribute_exists(a)", None, None).parse()
    ConditionExpressionParser("attribute_exists(a)", {}, {}).parse()
    assert len(cached_parse) == 1  # None and {} are the same request


@pytest.mark.embedded_only(reason="runs the API on the engine whose speed-up it checks")
def test_conditional_writes_through_the_api(embedded_aws: Any) -> None:
    """The pipeline's kinds of conditions, twice each (the second time remembered), through the API."""
    import boto3

    dynamodb = boto3.client(
        "dynamodb",
        endpoint_url=embedded_aws.endpoint_url,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    table = "condition-expressions"
    dynamodb.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": "event_id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "event_id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    try:
        for event in ("e1", "e2"):
            put = {
                "TableName": table,
                "Item": {"event_id": {"S": event}, "payload_hash": {"S": "abc"}},
                "ConditionExpression": "attribute_not_exists(event_id)",
            }
            dynamodb.put_item(**put)
            with pytest.raises(ClientError) as again:
                dynamodb.put_item(**put)
            assert again.value.response["Error"]["Code"] == "ConditionalCheckFailedException"
            update = {
                "TableName": table,
                "Key": {"event_id": {"S": event}},
                "ConditionExpression": "attribute_exists(event_id) AND payload_hash = :payload_hash",
                "UpdateExpression": "SET #status = :sent",
                "ExpressionAttributeNames": {"#status": "status"},
            }
            with pytest.raises(ClientError) as other_hash:
                dynamodb.update_item(
                    **update, ExpressionAttributeValues={":payload_hash": {"S": "xyz"}, ":sent": {"S": "sent"}}
                )
            assert other_hash.value.response["Error"]["Code"] == "ConditionalCheckFailedException"
            dynamodb.update_item(
                **update, ExpressionAttributeValues={":payload_hash": {"S": "abc"}, ":sent": {"S": "sent"}}
            )
            with pytest.raises(ClientError) as unused:
                dynamodb.update_item(
                    **update,
                    ExpressionAttributeValues={":payload_hash": {"S": "abc"}, ":sent": {"S": "sent"}, ":x": {"S": "x"}},
                )
            assert "unused in expressions" in unused.value.response["Error"]["Message"]
        statuses = {i["event_id"]["S"]: i["status"]["S"] for i in dynamodb.scan(TableName=table)["Items"]}
        assert statuses == {"e1": "sent", "e2": "sent"}
    finally:
        dynamodb.delete_table(TableName=table)
