"""Every request the embedded AWS handles during a measurement, with who made it and what it costs.

moto's request handler (`BaseResponse.call_action`) is wrapped in this process, where the
embedded server runs. The caller is told apart by the access key of the request (moto reads
it from the signature, when it looks like an AWS key id): the cost run gives the starter, the event
source, the producer and its own reads their own keys; the state machine's service integrations
sign with a key moto does not recognise, which it reports as its default key id. DynamoDB units are computed from the request and
the items stored before and after it (moto's backend), as AWS counts them (units.py).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from moto.core.responses import BaseResponse
from moto.dynamodb.models import dynamodb_backends

from onceflow.devtools.cost.units import item_size, read_units, write_units

WORKFLOW = "workflow"
STARTER = "starter"
EVENT_SOURCE = "event_source"
PRODUCER = "producer"
HARNESS = "harness"
SUBSCRIBER = "subscriber"  # the example subscriber (DeploySubscriber=true), cost/subscriber.py
# moto's Step Functions service integrations sign with "ak" (moto/stepfunctions/parser/asl/utils/boto_client.py),
# which is no key id: moto's BaseResponse.get_access_key() reports its default for it.
_MOTO_DEFAULT_KEY = "AKIAEXAMPLE"
CALLER_KEYS = {
    STARTER: "AKIDONCEFLOWSTARTER0",
    EVENT_SOURCE: "AKIDONCEFLOWESM00000",
    PRODUCER: "AKIDONCEFLOWPRODUCER",
    HARNESS: "AKIDONCEFLOWHARNESS0",
    SUBSCRIBER: "AKIDONCEFLOWSUBSCRIB",
}
_CALLERS = {key: caller for caller, key in CALLER_KEYS.items()} | {_MOTO_DEFAULT_KEY: WORKFLOW}
# With IAM enforced (docs/IAM.md) a function signs with a session of its role named after the function
# (`<stack>-StarterFunction`), the state machine with a session of its own role: told apart by the session.
_FUNCTION_SESSIONS = {"StarterFunction": STARTER, "SubscriberFunction": SUBSCRIBER}


def caller_of(key: str, account: str) -> str:
    """The cost run's caller behind an access key (a role session's by its session name)."""
    if key in _CALLERS:
        return _CALLERS[key]
    if key.startswith("ASIA"):
        from moto.sts.models import sts_backends

        session = sts_backends[account]["aws"].get_assumed_role_from_access_key(key)
        if session is not None:
            name = session.session_name
            return next((c for suffix, c in _FUNCTION_SESSIONS.items() if name.endswith(suffix)), WORKFLOW)
    return HARNESS


_SERVICES = {"states": "stepfunctions"}


@dataclass(frozen=True)
class Call:
    caller: str
    service: str
    action: str
    request_bytes: int
    target: str
    succeeded: bool
    read_units: float = 0.0
    write_units: float = 0.0


class _Units:
    """DynamoDB units of one request, from the stored items before and after it."""

    def __init__(self, handler: Any, action: str, params: dict[str, Any]):
        self.backend = dynamodb_backends[handler.current_account][handler.region]
        self.action = action
        self.params = params
        self.before = self._stored_sizes()

    def _key(self, table_name: str, item_or_key: dict[str, Any]) -> dict[str, Any] | None:
        table = self.backend.tables.get(table_name)
        if table is None:
            return None
        names = [name for name in (table.hash_key_attr, table.range_key_attr) if name]
        if not all(name in item_or_key for name in names):
            return None
        return {name: item_or_key[name] for name in names}

    def _stored(self, table_name: str, item_or_key: dict[str, Any]) -> int:
        key = self._key(table_name, item_or_key)
        if key is None:
            return 0
        try:
            item = self.backend.get_item(table_name, key)
        except Exception:  # a missing table is the request's own error, reported to its caller
            return 0
        return item_size(item.to_json()["Attributes"]) if item is not None else 0

    def _targets(self) -> list[tuple[str, str, dict[str, Any], dict[str, Any] | None]]:
        """(operation, table, key-or-item, new item) for each item the request touches."""
        params = self.params
        if self.action in ("GetItem", "DeleteItem", "UpdateItem"):
            return [(self.action, params["TableName"], params["Key"], None)]
        if self.action == "PutItem":
            return [("PutItem", params["TableName"], params["Item"], params["Item"])]
        if self.action == "TransactWriteItems":
            found = []
            for entry in params.get("TransactItems", []):
                [(operation, body)] = entry.items()
                item = body.get("Item")
                found.append((operation, body["TableName"], item or body["Key"], item))
            return found
        if self.action == "TransactGetItems":
            return [("Get", e["Get"]["TableName"], e["Get"]["Key"], None) for e in params.get("TransactItems", [])]
        if self.action == "BatchGetItem":
            return [
                ("Get", table, key, None)
                for table, request in params.get("RequestItems", {}).items()
                for key in request.get("Keys", [])
            ]
        return []

    def _stored_sizes(self) -> list[int]:
        return [self._stored(table, key) for _, table, key, _ in self._targets()]

    def compute(self, response_body: str) -> tuple[float, float]:
        """(read units, write units) of the request, now that it has run."""
        after = self._stored_sizes()
        targets = self._targets()
        if self.action == "GetItem":
            return read_units(after[0], consistent=bool(self.params.get("ConsistentRead"))), 0.0
        if self.action == "TransactGetItems":
            return sum(read_units(size, True, transactional=True) for size in after), 0.0
        if self.action == "BatchGetItem":  # each key read as its own GetItem, its table's consistency
            consistent = [
                bool(request.get("ConsistentRead"))
                for request in self.params.get("RequestItems", {}).values()
                for _ in request.get("Keys", [])
            ]
            return sum(read_units(size, strong) for size, strong in zip(after, consistent, strict=True)), 0.0
        if self.action in ("Query", "Scan"):
            items = json.loads(response_body or "{}").get("Items", [])
            size = sum(item_size(item) for item in items)
            return read_units(size, consistent=bool(self.params.get("ConsistentRead"))), 0.0
        transactional = self.action == "TransactWriteItems"
        units = 0
        for (_, _, _, new_item), before, now in zip(targets, self.before, after, strict=True):
            units += write_units(max(before, now, item_size(new_item)), transactional=transactional)
        return 0.0, float(units)


def _request_bytes(handler: BaseResponse) -> int:
    """The request's payload: its body, or for form-encoded requests (SNS) the encoded form."""
    if handler.raw_body:
        return len(handler.raw_body)
    pairs = [(key, value) for key, values in handler.querystring.items() for value in values]
    return len(urlencode(pairs).encode("utf-8"))


class Recorder:
    """Collects the calls made while `recording()` is open."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self._lock = threading.Lock()

    def take(self) -> list[Call]:
        with self._lock:
            taken, self.calls = self.calls, []
        return taken

    def _record(self, call: Call) -> None:
        with self._lock:
            self.calls.append(call)

    @contextmanager
    def recording(self) -> Iterator[Recorder]:
        original = BaseResponse.call_action
        recorder = self

        def call_action(handler: BaseResponse) -> Any:
            try:
                caller = caller_of(handler.get_access_key(), handler.current_account)
                service = _SERVICES.get(handler.service_name, handler.service_name)
                action = handler._get_action()
                params = dict(getattr(handler, "params", None) or {})
            except Exception:
                return original(handler)
            units = _Units(handler, action, params) if service == "dynamodb" and caller != HARNESS else None
            response = original(handler)
            status, _, body = response
            text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body or "")
            read, write = units.compute(text) if units is not None else (0.0, 0.0)
            target = str(params.get("QueueUrl") or params.get("TopicArn") or params.get("TableName") or "")
            recorder._record(
                Call(
                    caller=caller,
                    service=service,
                    action=action,
                    request_bytes=_request_bytes(handler),
                    target=target,
                    succeeded=int(status) < 400,
                    read_units=read,
                    write_units=write,
                )
            )
            return response

        BaseResponse.call_action = call_action  # type: ignore[method-assign]
        try:
            yield self
        finally:
            BaseResponse.call_action = original  # type: ignore[method-assign]
