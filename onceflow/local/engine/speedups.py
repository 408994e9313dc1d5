"""Speed-ups for moto's Step Functions and DynamoDB, safe because the embedded AWS handles one
request at a time (see embedded.py). Each returns (owner, attribute, replacement) for the caller
to patch and restore; embedded.py checks moto's version and shape before applying them.

- Parsed definitions are cached: moto re-parses the ASL (ANTLR) for every execution, about half
  of an execution's CPU time. Evaluation state lives in each execution's Environment, not in the
  parsed program, so one program serves every execution of a definition.
- Service-integration clients are cached per service instead of built for every task.
- TransactWriteItems rolls back only the items it touched: moto deep-copies whole tables before
  every transaction, a cost that grows with table size (400 ms at 20,000 items).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from typing import Any

from moto.dynamodb import models as dynamodb_models
from moto.dynamodb.models.table import Table
from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser
from moto.stepfunctions.parser.asl.utils import boto_client as sfn_boto_client
from moto.stepfunctions.parser.backend import execution_worker

INTEGRATION_MODULES = [
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_aws_sdk",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_dynamodb",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sns",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sqs",
]

Patch = tuple[Any, str, Any]


class _CachedParser(AmazonStateLanguageParser):
    @staticmethod
    @functools.lru_cache(maxsize=64)
    def parse(definition: str) -> Any:
        return AmazonStateLanguageParser.parse(definition)


def parse_cache() -> list[Patch]:
    return [(execution_worker, "AmazonStateLanguageParser", _CachedParser)]


def client_cache() -> list[Patch]:
    import importlib
    import os

    original = sfn_boto_client.boto_client_for

    @functools.lru_cache(maxsize=64)
    def cached(region: str, service: str, port: str) -> Any:
        return original(region, service)

    def boto_client_for(region: str, service: str, state_credentials: Any = None) -> Any:
        if state_credentials is not None:
            return original(region, service, state_credentials)
        return cached(region, service, os.environ.get("MOTO_PORT", "5000"))

    return [(importlib.import_module(name), "boto_client_for", boto_client_for) for name in INTEGRATION_MODULES]


class _TablesByReference:
    """What moto's transact_write_items sees as `copy`: tables are not copied (rollback is ours)."""

    def deepcopy(self, value: Any, memo: Any = None) -> Any:
        return value if isinstance(value, Table) else copy.deepcopy(value, memo)

    def __getattr__(self, name: str) -> Any:
        return getattr(copy, name)


def _item_key(backend: Any, operation: str, body: dict[str, Any]) -> dict[str, Any] | None:
    table = backend.tables.get(body.get("TableName"))
    if table is None:
        return None
    if operation != "Put":
        return body.get("Key")
    attributes = body.get("Item", {})
    key = {table.hash_key_attr: attributes.get(table.hash_key_attr)}
    if table.range_key_attr is not None:
        key[table.range_key_attr] = attributes.get(table.range_key_attr)
    return None if None in key.values() else key


def item_level_rollback() -> list[Patch]:
    original: Callable[..., None] = dynamodb_models.DynamoDBBackend.transact_write_items

    def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
        before: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = []
        for entry in transact_items:
            operation, body = next(iter(entry.items()))
            key = _item_key(self, operation, body)
            if key is not None:
                try:
                    current = self.get_item(body["TableName"], key)
                except Exception:  # an invalid key: moto's own validation will report it
                    continue
                before.append(
                    (body["TableName"], key, copy.deepcopy(current.to_json()["Attributes"]) if current else None)
                )
        dynamodb_models.copy = _TablesByReference()
        try:
            original(self, transact_items)
        except Exception:
            for table_name, key, attributes in reversed(before):
                if attributes is None:
                    self.delete_item(table_name, key)
                else:
                    self.put_item(table_name, attributes)
            raise
        finally:
            dynamodb_models.copy = copy

    return [(dynamodb_models.DynamoDBBackend, "transact_write_items", transact_write_items)]


def all_speedups() -> list[Patch]:
    return parse_cache() + client_cache() + item_level_rollback()
