"""UpdateItem's checks of an UpdateExpression as DynamoDB makes them, whether the engine runs the checks
that read only the expression, its attribute names and the table's key attributes once per
combination (the `update_validation` speed-up) or on every request as moto does:
`ONCEFLOW_SPEEDUPS_OFF=update_validation` runs this file the other way.

AWS: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.UpdateExpressions.html
(an expression may not update a key attribute, nor name one path twice or two overlapping paths).
"""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError


@pytest.fixture
def table(stack) -> tuple[Any, str]:
    return stack.client("dynamodb"), stack.business_table


def _update(dynamodb: Any, table: str, key: str, expression: str, **kwargs: Any) -> dict[str, Any]:
    return dynamodb.update_item(
        TableName=table, Key={"order_id": {"S": key}}, UpdateExpression=expression, ReturnValues="ALL_NEW", **kwargs
    )["Attributes"]


def _refusal(dynamodb: Any, table: str, key: str, expression: str, **kwargs: Any) -> str:
    with pytest.raises(ClientError) as refused:
        _update(dynamodb, table, key, expression, **kwargs)
    assert refused.value.response["Error"]["Code"] == "ValidationException"
    return refused.value.response["Error"]["Message"]


def test_a_text_that_passed_with_other_names_is_refused_when_a_name_is_the_key(table):
    """The same text names the key attribute through another ExpressionAttributeNames: refused, after
    the same text updated a plain attribute."""
    dynamodb, name = table
    expression = "SET #field = :v"
    item = _update(
        dynamodb,
        name,
        "v-1",
        expression,
        ExpressionAttributeNames={"#field": "note"},
        ExpressionAttributeValues={":v": {"S": "first"}},
    )
    assert item == {"order_id": {"S": "v-1"}, "note": {"S": "first"}}
    message = _refusal(
        dynamodb,
        name,
        "v-1",
        expression,
        ExpressionAttributeNames={"#field": "order_id"},
        ExpressionAttributeValues={":v": {"S": "v-2"}},
    )
    assert "Cannot update attribute order_id. This attribute is part of the key" in message
    stored = dynamodb.get_item(TableName=name, Key={"order_id": {"S": "v-1"}})["Item"]
    assert stored == {"order_id": {"S": "v-1"}, "note": {"S": "first"}}


def test_a_text_that_passed_with_other_names_is_refused_when_two_names_are_one_path(table):
    dynamodb, name = table
    expression = "SET #a = :v, #b = :v"
    _update(
        dynamodb,
        name,
        "v-3",
        expression,
        ExpressionAttributeNames={"#a": "left", "#b": "right"},
        ExpressionAttributeValues={":v": {"S": "x"}},
    )
    message = _refusal(
        dynamodb,
        name,
        "v-3",
        expression,
        ExpressionAttributeNames={"#a": "same", "#b": "same"},
        ExpressionAttributeValues={":v": {"S": "y"}},
    )
    assert "Two document paths overlap with each other" in message
    stored = dynamodb.get_item(TableName=name, Key={"order_id": {"S": "v-3"}})["Item"]
    assert stored == {"order_id": {"S": "v-3"}, "left": {"S": "x"}, "right": {"S": "x"}}


@pytest.mark.parametrize(
    "expression",
    ["SET order_id = :v", "SET a = :v, a = :v", "SET m.inner = :v, m = :v", "SET a = :v SET b = :v"],
)
def test_a_refused_text_is_refused_on_every_request(table, expression):
    dynamodb, name = table
    messages = [
        _refusal(dynamodb, name, "v-4", expression, ExpressionAttributeValues={":v": {"S": "x"}}) for _ in range(3)
    ]
    assert len(set(messages)) == 1
    assert "Item" not in dynamodb.get_item(TableName=name, Key={"order_id": {"S": "v-4"}})


def test_a_text_that_passed_still_checks_each_request_s_values_and_item(table):
    """What the item and the values decide (a value not defined, a type that does not add) is checked
    on every request of a text that passed before."""
    dynamodb, name = table
    expression = "SET running_total = if_not_exists(running_total, :zero) + :amount REMOVE pending_since"
    values = {":zero": {"N": "0"}, ":amount": {"N": "4"}}
    assert _update(dynamodb, name, "v-5", expression, ExpressionAttributeValues=values)["running_total"] == {"N": "4"}
    assert _update(dynamodb, name, "v-5", expression, ExpressionAttributeValues=values)["running_total"] == {"N": "8"}
    undefined = _refusal(dynamodb, name, "v-5", expression, ExpressionAttributeValues={":zero": {"N": "0"}})
    assert "An expression attribute value used in expression is not defined" in undefined
    mismatched = _refusal(
        dynamodb, name, "v-5", expression, ExpressionAttributeValues={":zero": {"N": "0"}, ":amount": {"S": "four"}}
    )
    assert "Incorrect operand type for operator or function; operator or function: +" in mismatched
    stored = dynamodb.get_item(TableName=name, Key={"order_id": {"S": "v-5"}})["Item"]
    assert stored == {"order_id": {"S": "v-5"}, "running_total": {"N": "8"}}
