"""DynamoDB Time to Live, emulated on a clock that a test or the demo advances: moto never expires items.

AWS (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TTL.html and the UpdateTimeToLive
API reference): an item whose TTL attribute is a Number of epoch seconds less than the current time is
expired and later deleted in the background, typically within days; until then it still shows up in
reads, queries and scans. So nothing here runs by itself: items go only when the clock is advanced
(`advance`) or asked to (`expire`), and an expired item that was not swept yet is still readable, as on
AWS. Only tables whose TimeToLiveSpecification is enabled are swept, on the attribute it names, read
from the endpoint (DescribeTimeToLive), and each delete is conditional on the item still being
expired, as an item updated to a later TTL meanwhile is not deleted.

Everything goes through the DynamoDB API of the endpoint given: no moto internals, nothing patched.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

SECONDS_PER_DAY = 86_400


@dataclass(frozen=True)
class ExpiredItem:
    table: str
    key: dict[str, Any]
    ttl: int


@dataclass
class TtlClock:
    """The time DynamoDB's TTL sweeper sees. `dynamodb` is a boto3 client of the endpoint."""

    dynamodb: Any
    now: float = field(default_factory=time.time)
    deleted: list[ExpiredItem] = field(default_factory=list)

    def advance(self, seconds: float) -> list[ExpiredItem]:
        """Move the clock on and sweep: what DynamoDB would have deleted by then."""
        self.now += seconds
        return self.expire()

    def advance_days(self, days: float) -> list[ExpiredItem]:
        return self.advance(days * SECONDS_PER_DAY)

    def expire(self, now: float | None = None) -> list[ExpiredItem]:
        """Delete every item of a TTL-enabled table whose TTL is before `now` (the clock's time by default)."""
        if now is not None:
            self.now = now
        swept = [item for table in self._tables() for item in self._sweep(table)]
        self.deleted.extend(swept)
        return swept

    def _tables(self) -> Iterator[str]:
        for page in self.dynamodb.get_paginator("list_tables").paginate():
            yield from page["TableNames"]

    def _ttl_attribute(self, table: str) -> str | None:
        described = self.dynamodb.describe_time_to_live(TableName=table)["TimeToLiveDescription"]
        return described.get("AttributeName") if described.get("TimeToLiveStatus") == "ENABLED" else None

    def _sweep(self, table: str) -> list[ExpiredItem]:
        attribute = self._ttl_attribute(table)
        if attribute is None:
            return []
        key_names = [k["AttributeName"] for k in self.dynamodb.describe_table(TableName=table)["Table"]["KeySchema"]]
        expired = {
            "FilterExpression": "attribute_type(#ttl, :number) AND #ttl < :now",
            "ExpressionAttributeNames": {"#ttl": attribute},
            "ExpressionAttributeValues": {":number": {"S": "N"}, ":now": {"N": str(int(self.now))}},
        }
        swept: list[ExpiredItem] = []
        for page in self.dynamodb.get_paginator("scan").paginate(TableName=table, ConsistentRead=True, **expired):
            for item in page["Items"]:
                key = {name: item[name] for name in key_names}
                try:
                    self.dynamodb.delete_item(
                        TableName=table,
                        Key=key,
                        ConditionExpression=expired["FilterExpression"],
                        ExpressionAttributeNames=expired["ExpressionAttributeNames"],
                        ExpressionAttributeValues=expired["ExpressionAttributeValues"],
                    )
                except self.dynamodb.exceptions.ConditionalCheckFailedException:
                    continue  # updated to a later TTL (or deleted) since the scan
                swept.append(ExpiredItem(table=table, key=key, ttl=int(item[attribute]["N"])))
        return swept
