"""DynamoDB's responses as AWS answers them, where moto 5.2.5 adds what was not asked for:

- consumed_capacity: UpdateItem answers `ConsumedCapacity` only when the request asks for it
  (`ReturnConsumedCapacity` TOTAL or INDEXES; the default is NONE). moto answered it always, so a
  Step Functions task's result (`dynamodb:updateItem`, `aws-sdk:dynamodb:updateItem`) carried it.
  https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html
  ("ConsumedCapacity ... returned only if the ReturnConsumedCapacity parameter was specified");
  AWS's recording: LocalStack's services/test_aws_sdk_task_service.snapshot.json
  (test_dynamodb_put_update_get_item).
"""

from __future__ import annotations

from typing import Any

from moto.dynamodb.responses import DynamoHandler

from onceflow.engine.moto_shape import Need, need

Patch = tuple[Any, str, Any]


def moto_needs() -> list[Need]:
    return [need(DynamoHandler, "update_item")]


def patches() -> list[Patch]:
    return [*consumed_capacity()]


def consumed_capacity() -> list[Patch]:
    original = DynamoHandler.update_item

    def update_item(self: DynamoHandler) -> Any:
        result = original(self)
        if self.body.get("ReturnConsumedCapacity", "NONE") == "NONE" and isinstance(result.result, dict):
            result.result.pop("ConsumedCapacity", None)
        return result

    return [(DynamoHandler, "update_item", update_item)]
