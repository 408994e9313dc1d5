"""The reconciler's own table: one marker per execution it has dealt with, and its checkpoint.

A dead letter is sent in three steps: claim (a conditional put: only one run, or one of a status
change event and a sweep, wins), send, complete. A send that fails releases the claim (Lambda's
retry of the invocation, or the next sweep, sends it). A crash between claim and send (the
function timed out or was killed) leaves a claim that is never completed; once it is older than
`stale_seconds` a later run takes it over and sends. A crash between send and complete does the same, so that event is dead-lettered twice:
SQS has no transaction to join, and a duplicate dead letter costs only a redrive that the
pipeline absorbs (its event is already recorded), while a lost one would break R1.

A sweep reads the markers of the executions and events it lists a hundred at a time (one
BatchGetItem per page of ListExecutions, `settled_among`); a status change event reads its one marker.

Markers expire (DynamoDB TTL on `expires_at`) when the dead letter they stand for may have left
the dead-letter queue; expiry is checked here too, since TTL deletes items only eventually
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/howitworks-ttl.html).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from onceflow_common.batch_reads import batch_get

CLAIMED = "claimed"
DEAD_LETTERED = "dead-lettered"
LEFT_TO_THE_STATE_MACHINE = "dead-lettered-by-state-machine"
CHECKPOINT_KEY = "checkpoint#executions"


def execution_key(execution_arn: str) -> str:
    return f"execution#{execution_arn}"


def _conditional_check_failed(error: ClientError) -> bool:
    return error.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException"


@dataclass(frozen=True)
class Claim:
    key: str
    claimed_at: int


class Claims:
    def __init__(self, dynamodb: Any, table: str, retention_seconds: int, stale_seconds: int):
        self._dynamodb = dynamodb
        self._table = table
        self._retention = retention_seconds
        self._stale = stale_seconds

    def settled(self, key: str, now: int) -> bool:
        """A live marker says this execution needs nothing more (a claim in progress counts)."""
        item = self._dynamodb.get_item(TableName=self._table, Key={"pk": {"S": key}}, ConsistentRead=True).get("Item")
        return self._live(item, now)

    def settled_among(self, keys: Sequence[str], now: int) -> set[str]:
        """The keys among `keys` that `settled` answers True for, read a hundred at a time with one
        strongly consistent BatchGetItem (a sweep lists up to a hundred executions a page). A key
        DynamoDB leaves unprocessed is read with its own GetItem, which the SDK retries with back-off."""
        unique = list(dict.fromkeys(keys))  # BatchGetItem refuses a request that names a key twice
        items, unprocessed = batch_get(
            self._dynamodb, self._table, [{"pk": {"S": key}} for key in unique], 1, ConsistentRead=True
        )
        found = {item["pk"]["S"] for item in items if self._live(item, now)}
        return found | {key["pk"]["S"] for key in unprocessed if self.settled(key["pk"]["S"], now)}

    def _live(self, item: dict[str, Any] | None, now: int) -> bool:
        if item is None or int(item["expires_at"]["N"]) <= now:
            return False
        if item["state"]["S"] == CLAIMED:
            return int(item["claimed_at"]["N"]) > now - self._stale
        return True

    def _put_unless_live(self, key: str, now: int, state: str, expires_at: int) -> bool:
        try:
            self._dynamodb.put_item(
                TableName=self._table,
                Item={
                    "pk": {"S": key},
                    "state": {"S": state},
                    "claimed_at": {"N": str(now)},
                    "expires_at": {"N": str(expires_at)},
                },
                ConditionExpression=(
                    "attribute_not_exists(pk) OR expires_at <= :now"
                    " OR (#state = :claimed AND claimed_at <= :stale_before)"
                ),
                ExpressionAttributeNames={"#state": "state"},
                ExpressionAttributeValues={
                    ":now": {"N": str(now)},
                    ":claimed": {"S": CLAIMED},
                    ":stale_before": {"N": str(now - self._stale)},
                },
            )
        except ClientError as error:
            if _conditional_check_failed(error):
                return False
            raise
        return True

    def claim(self, key: str, now: int) -> Claim | None:
        """Take the right to send this dead letter; None if another run has it or it is done."""
        return Claim(key, now) if self._put_unless_live(key, now, CLAIMED, now + self._retention) else None

    def complete(self, claim: Claim) -> None:
        """The dead letter is sent. A run that took over a stale claim of ours keeps its own."""
        try:
            self._dynamodb.update_item(
                TableName=self._table,
                Key={"pk": {"S": claim.key}},
                UpdateExpression="SET #state = :done",
                ConditionExpression="claimed_at = :mine",
                ExpressionAttributeNames={"#state": "state"},
                ExpressionAttributeValues={":done": {"S": DEAD_LETTERED}, ":mine": {"N": str(claim.claimed_at)}},
            )
        except ClientError as error:
            if not _conditional_check_failed(error):
                raise

    def release(self, claim: Claim) -> None:
        """Give up a claim whose dead letter was not sent (the send failed)."""
        try:
            self._dynamodb.delete_item(
                TableName=self._table,
                Key={"pk": {"S": claim.key}},
                ConditionExpression="claimed_at = :mine AND #state = :claimed",
                ExpressionAttributeNames={"#state": "state"},
                ExpressionAttributeValues={":mine": {"N": str(claim.claimed_at)}, ":claimed": {"S": CLAIMED}},
            )
        except ClientError as error:
            if not _conditional_check_failed(error):
                raise

    def leave_to_state_machine(self, key: str, now: int, expires_at: int) -> None:
        """The execution dead-lettered its event itself: remember that until that dead letter may expire."""
        self._put_unless_live(key, now, LEFT_TO_THE_STATE_MACHINE, expires_at)

    def checkpoint(self) -> int | None:
        """Epoch seconds up to which ended executions were swept, if a sweep ever completed."""
        item = self._dynamodb.get_item(
            TableName=self._table, Key={"pk": {"S": CHECKPOINT_KEY}}, ConsistentRead=True
        ).get("Item")
        return int(item["swept_until"]["N"]) if item else None

    def save_checkpoint(self, swept_until: int) -> None:
        self._dynamodb.put_item(
            TableName=self._table,
            Item={"pk": {"S": CHECKPOINT_KEY}, "swept_until": {"N": str(swept_until)}},
        )
