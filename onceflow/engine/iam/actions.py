"""What a request asks IAM for: each (action, resource ARN) it is authorized by.

From each service's "Actions, resources, and condition keys" page of the Service Authorization
Reference (https://docs.aws.amazon.com/service-authorization/latest/reference/):
- SQS (list_amazonsqs.html): the queue's ARN; a batch call is authorized by its single action
  (SendMessageBatch by sqs:SendMessage, DeleteMessageBatch by sqs:DeleteMessage,
  ChangeMessageVisibilityBatch by sqs:ChangeMessageVisibility: API_AddPermission.html);
- SNS (list_amazonsns.html): the topic's ARN; PublishBatch by sns:Publish;
- DynamoDB (list_amazondynamodb.html): `table/<name>`, a Query or Scan of an index
  `table/<name>/index/<index>`; BatchGetItem and BatchWriteItem once per table; a transaction by
  the actions of its items (Put: PutItem, Update: UpdateItem, Delete: DeleteItem, ConditionCheck:
  ConditionCheckItem, Get: GetItem), on each item's table
  (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html);
- Step Functions (list_awsstepfunctions.html): the state machine's ARN for StartExecution,
  StartSyncExecution, ListExecutions, DescribeStateMachine; the execution's ARN for
  DescribeExecution, StopExecution, GetExecutionHistory, RedriveExecution;
- CloudWatch Logs (list_amazoncloudwatchlogs.html): `log-group:<name>:log-stream:<stream>` for
  CreateLogStream and PutLogEvents, `log-group:<name>` otherwise;
- KMS (list_awskeymanagementservice.html): the key's ARN (an alias resolved to its key).

Any other action is asked on resource `*` (only a grant on `*` admits it): where the map stops.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

# moto's service name -> IAM's service prefix
PREFIXES = {"stepfunctions": "states", "monitoring": "cloudwatch"}
BATCH_OF = {
    "SendMessageBatch": "SendMessage",
    "DeleteMessageBatch": "DeleteMessage",
    "ChangeMessageVisibilityBatch": "ChangeMessageVisibility",
    "PublishBatch": "Publish",
}
TRANSACTION_ACTIONS = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
    "Get": "GetItem",
}
MACHINE_ACTIONS = {
    "StartExecution",
    "StartSyncExecution",
    "ListExecutions",
    "DescribeStateMachine",
    "UpdateStateMachine",
}
EXECUTION_ACTIONS = {"DescribeExecution", "StopExecution", "GetExecutionHistory", "RedriveExecution"}


@dataclass(frozen=True)
class Asked:
    """One authorization a request needs."""

    action: str  # service:Action
    resource: str


@dataclass(frozen=True)
class Call:
    """A request as the enforcement sees it."""

    service: str  # moto's service name (sqs, dynamodb, stepfunctions, ...)
    operation: str  # the API operation (SendMessageBatch)
    params: Mapping[str, Any]
    region: str
    account: str


def queue_arn(call: Call, url_or_name: str) -> str:
    name = str(url_or_name).rstrip("/").rsplit("/", 1)[-1]
    return f"arn:aws:sqs:{call.region}:{call.account}:{name}"


def table_arn(call: Call, name: str) -> str:
    if str(name).startswith("arn:"):
        return str(name)
    return f"arn:aws:dynamodb:{call.region}:{call.account}:table/{name}"


def log_group_arn(call: Call, group: str, stream: str | None = None) -> str:
    base = f"arn:aws:logs:{call.region}:{call.account}:log-group:{group}"
    return f"{base}:log-stream:{stream}" if stream is not None else base


def _sqs(call: Call, action: str) -> list[Asked]:
    params = call.params
    if "QueueUrl" in params:
        return [Asked(action, queue_arn(call, params["QueueUrl"]))]
    if "QueueName" in params:
        return [Asked(action, queue_arn(call, params["QueueName"]))]
    return [Asked(action, "*")]


def _sns(call: Call, action: str) -> list[Asked]:
    arn = call.params.get("TopicArn") or call.params.get("TargetArn") or call.params.get("ResourceArn")
    return [Asked(action, str(arn) if arn else "*")]


def _dynamodb(call: Call, action: str) -> list[Asked]:
    params = call.params
    if call.operation in ("TransactWriteItems", "TransactGetItems"):
        asked: list[Asked] = []
        for item in params.get("TransactItems", []):
            for kind, body in item.items():
                asked.append(Asked(f"dynamodb:{TRANSACTION_ACTIONS[kind]}", table_arn(call, body["TableName"])))
        return list(dict.fromkeys(asked))
    if call.operation in ("BatchGetItem", "BatchWriteItem"):
        return [Asked(action, table_arn(call, table)) for table in params.get("RequestItems", {})]
    if "TableName" in params:
        arn = table_arn(call, params["TableName"])
        if params.get("IndexName") and call.operation in ("Query", "Scan"):
            arn = f"{arn}/index/{params['IndexName']}"
        return [Asked(action, arn)]
    return [Asked(action, "*")]


def _states(call: Call, action: str) -> list[Asked]:
    params = call.params
    if call.operation in MACHINE_ACTIONS and params.get("stateMachineArn"):
        return [Asked(action, str(params["stateMachineArn"]))]
    if call.operation in EXECUTION_ACTIONS and params.get("executionArn"):
        return [Asked(action, str(params["executionArn"]))]
    return [Asked(action, "*")]


def _logs(call: Call, action: str) -> list[Asked]:
    group = call.params.get("logGroupName")
    if not group:
        return [Asked(action, "*")]
    stream = call.params.get("logStreamName") if call.operation in ("CreateLogStream", "PutLogEvents") else None
    return [Asked(action, log_group_arn(call, str(group), str(stream) if stream is not None else None))]


_BY_SERVICE: dict[str, Callable[[Call, str], list[Asked]]] = {
    "sqs": _sqs,
    "sns": _sns,
    "dynamodb": _dynamodb,
    "states": _states,
    "logs": _logs,
}


def asked(call: Call, key_arn: Callable[[str], str] | None = None) -> list[Asked]:
    """Every (action, resource) the request needs allowed. `key_arn` resolves a KMS key id or alias."""
    prefix = PREFIXES.get(call.service, call.service)
    action = f"{prefix}:{BATCH_OF.get(call.operation, call.operation)}"
    if prefix == "kms":
        key = call.params.get("KeyId")
        return [Asked(action, key_arn(str(key)) if key and key_arn else "*")]
    by_service = _BY_SERVICE.get(prefix)
    return by_service(call, action) if by_service else [Asked(action, "*")]


def params_of(response: Any) -> dict[str, Any]:
    """A moto response object's request parameters, whatever its protocol."""
    if getattr(response, "automated_parameter_parsing", False):
        return dict(getattr(response, "params", {}) or {})
    params: dict[str, Any] = {}
    body = getattr(response, "body", None)
    if isinstance(body, dict):
        params.update(body)
    elif body:
        try:
            parsed = json.loads(body)
        except (ValueError, TypeError):
            parsed = None
        if isinstance(parsed, dict):
            params.update(parsed)
    for name, values in (getattr(response, "querystring", None) or {}).items():
        params.setdefault(name, values[0] if isinstance(values, list) and values else values)
    return params
