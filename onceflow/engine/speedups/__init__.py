"""Speed-ups for moto's Step Functions, DynamoDB and SQS, safe because the embedded AWS handles one
request at a time (see server.py). Each is switchable on its own and returns (owner, attribute,
replacement) triples for EmbeddedAws to patch and restore; `moto_needs()` lists what each one
relies on in the pinned moto, and EmbeddedAws checks it (engine/moto_shape.py) before applying any.

- parse_cache: parsed definitions are cached. moto re-parses the ASL (ANTLR) for every
  execution and for every CreateStateMachine (to validate it); evaluation state lives in each execution's Environment, not in the parsed program,
  so one program serves every execution of a definition.
- client_cache: service-integration clients are built once per region, service, port and role.
  moto builds a new boto3 client (~9 ms of CPU) for every task it runs.
- in_process_integrations: service-integration requests are handed to moto's backends in this
  process through moto's own BotocoreStubber (the request parsing, dispatch and error mapping
  `mock_aws` uses) instead of an HTTP round trip back into the embedded server; still one request
  at a time, under the server's request lock.
- jsonpath_cache: compiled JSONPath expressions are cached; moto builds a new JSONPath parser
  (PLY) for every path it evaluates. Compiled expressions hold no state of an evaluation.
- sqs_fast_paths: moto's ReceiveMessage computes every queue attribute (counting the queued
  messages three times, reading the clock twice per message) once per received message only to
  read the retention period, SendMessage once per sent message, GetQueueAttributes up to twice per
  name. Here the retention
  period is read from the queue, GetQueueAttributes computes the attributes once and counts only
  the messages in flight or delayed (engine/speedups/sqs_counts.py, applied after engine/sqs/visibility.py),
  and ReceiveMessage reads the queue only as far as its batch (with a backlog, both walked every
  queued message: issue 21). DeleteMessage and ChangeMessageVisibility find their message through
  a receipt-handle index whatever is switched (engine/sqs/receipts.py, which keeps nothing of
  deleted messages).
- dispatch_cache: moto's server lists its own package directory (a stat per entry, ~200) on every
  request to find the backend for the Host header, then matches the host against every backend's
  URL patterns (hundreds of regular expressions, twice a request), and every response class lists
  its methods (inspect.getmembers) on every request to find the action's; all are read once here.
- item_rollback: TransactWriteItems rolls back only the items it touched; moto deep-copies whole
  tables before every transaction, a cost that grows with table size (400 ms at 20,000 items).
- execution_index: executions found by ARN and name through an index instead of a walk of every
  execution, ListExecutions without re-sorting them all for each page, and its statusFilter
  reading only the executions that may still change status (ended ones are kept in a list per
  status), and a nextToken's execution found in the listing by identity instead of moto's test of
  every execution before it (paging through k executions cost k squared: the safety net's sweep
  after a busy spell, `trace`) (execution_index.py): without it the cost of an event grows with
  the number of executions before it (issue 21).
- index_query: a Query of a global secondary index reads the items that carry its partition key
  value, not every item of the table sorted (index_query.py): the reconciler's query of the
  sparse pending index cost more with every event ever recorded (issue 21).
- direct_transport: boto3 calls from this process to the embedded endpoint are handed to its WSGI
  application without a socket (direct_transport.py): the same application, lock and response,
  without a TCP connection and a server thread per call.
- serializer_fast_paths: moto's response serializer builds five alias providers for every member
  of every structure it writes, present or not (a history event has about 60), and parses every
  ISO timestamp with dateutil; here the keys are computed once per shape and exact ISO strings
  read with datetime.fromisoformat (serializer_fast_paths.py): GetExecutionHistory went from
  about 28 to 10 ms, ListExecutions and DescribeExecution to a fraction of a ms per execution;
  aware datetimes written as epoch seconds with integer arithmetic, and JSON bodies spared moto's
  XML request-id substitution (a ListExecutions page of 400: 1.17x cheaper, client included).
- idle_gates: `onceflow start`'s background round (the source queue's receive, the safety net's
  sweep, the notification inbox's drain, every 0.2 s) leaves out a receive from a queue that holds
  no message and a sweep when no execution was created or changed status since the last one
  began (idle_gates.py): an idle round made three requests, a third of the server's time while
  `trace` read executions from another process.
- backend_lookup: every `backends[account]` in moto (several per request, more per execution step)
  takes moto's global backend lock, lists the dict's keys and compares the dict with every
  registered BackendDict through a Python `__eq__`, only to find both already there; here an
  account already present in a dict that is registered (by identity) is answered at once, anything
  else goes through moto's own code.
- request_headers: a plain HTTP/1.1 request head (every boto3 call from another process) is read
  without the email parser http.server hands every header block to (request_headers.py), into the
  same message.
- json_lane: a signed JSON-protocol request (X-Amz-Target, POST /) reaches the service's moto
  response class without Flask's contexts, routing and hooks, with the same status, headers and
  body (json_lane.py): about a quarter of the server's CPU for a read such as DescribeExecution.

`ONCEFLOW_SPEEDUPS_OFF=name,name` (or `all`) switches speed-ups off wherever the default set is
asked for (`EmbeddedAws()`, `speedups=True`): a way to run any test or tool with one switched off.
"""

from __future__ import annotations

import copy
import functools
import importlib
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import boto3
from botocore.config import Config
from moto import backends as moto_backends
from moto.core import responses as moto_core_responses
from moto.core import utils as moto_core_utils
from moto.core.base_backend import BackendDict
from moto.core.botocore_stubber import BotocoreStubber
from moto.dynamodb import models as dynamodb_models
from moto.dynamodb.models.table import Table
from moto.moto_server.werkzeug_app import DomainDispatcherApplication
from moto.sqs import models as sqs_models
from moto.stepfunctions.parser import models as sfn_parser_models
from moto.stepfunctions.parser.asl.component.common.path import result_path
from moto.stepfunctions.parser.asl.component.state.exec.state_task import credentials as sfn_credentials
from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser
from moto.stepfunctions.parser.asl.utils import boto_client as sfn_boto_client
from moto.stepfunctions.parser.asl.utils import json_path
from moto.stepfunctions.parser.backend import execution_worker

from onceflow.engine.bookkeeping import baseline, retention
from onceflow.engine.bookkeeping.once_per_key import once_per_key
from onceflow.engine.speedups import (
    direct_transport,
    execution_index,
    idle_gates,
    index_query,
    json_lane,
    request_headers,
    serializer_fast_paths,
)

Patch = tuple[Any, str, Any]
OFF_VARIABLE = "ONCEFLOW_SPEEDUPS_OFF"

PARSE_CACHE = "parse_cache"
CLIENT_CACHE = "client_cache"
IN_PROCESS_INTEGRATIONS = "in_process_integrations"
JSONPATH_CACHE = "jsonpath_cache"
SQS_FAST_PATHS = "sqs_fast_paths"
DISPATCH_CACHE = "dispatch_cache"
ITEM_ROLLBACK = "item_rollback"
DIRECT_TRANSPORT = "direct_transport"
EXECUTION_INDEX = "execution_index"
INDEX_QUERY = "index_query"
SERIALIZER_FAST_PATHS = "serializer_fast_paths"
IDLE_GATES = "idle_gates"
REQUEST_HEADERS = "request_headers"
BACKEND_LOOKUP = "backend_lookup"
JSON_LANE = "json_lane"
NAMES = (
    PARSE_CACHE,
    CLIENT_CACHE,
    IN_PROCESS_INTEGRATIONS,
    JSONPATH_CACHE,
    SQS_FAST_PATHS,
    DISPATCH_CACHE,
    ITEM_ROLLBACK,
    DIRECT_TRANSPORT,
    EXECUTION_INDEX,
    INDEX_QUERY,
    SERIALIZER_FAST_PATHS,
    IDLE_GATES,
    REQUEST_HEADERS,
    BACKEND_LOOKUP,
    JSON_LANE,
)

INTEGRATION_MODULES = [
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_aws_sdk",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_dynamodb",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sns",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sqs",
]


class SpeedupError(ValueError):
    pass


def resolve(speedups: bool | str | Iterable[str] = True) -> frozenset[str]:
    """The set of speed-ups to apply: True (all, less ONCEFLOW_SPEEDUPS_OFF), False, 'all', 'none',
    'a,b', or names."""
    if speedups is True:
        off = os.environ.get(OFF_VARIABLE, "")
        return frozenset(NAMES) - (frozenset(NAMES) if off.strip() == "all" else _names(off))
    if speedups is False:
        return frozenset()
    if isinstance(speedups, str):
        if speedups.strip() == "all":
            return frozenset(NAMES)
        if speedups.strip() == "none":
            return frozenset()
        return _names(speedups)
    return _names(",".join(speedups))


def _names(text: str) -> frozenset[str]:
    names = frozenset(name.strip() for name in text.split(",") if name.strip())
    unknown = names - set(NAMES)
    if unknown:
        raise SpeedupError(f"unknown speed-up(s) {sorted(unknown)}; known: {', '.join(NAMES)}")
    return names


def moto_needs() -> list[Any]:
    """What the speed-ups patch or build on in the pinned moto (checked by engine/moto_shape.py)."""
    from onceflow.engine.moto_shape import need

    return [
        need(execution_worker, "AmazonStateLanguageParser"),
        need(sfn_parser_models, "AmazonStateLanguageParser"),
        need(AmazonStateLanguageParser, "parse"),
        need(sfn_boto_client, "boto_client_for", "region", "service", "state_credentials"),
        need(sfn_credentials, "StateCredentials"),
        need(BotocoreStubber, "__call__", "event_name", "request"),
        need(BotocoreStubber, "process_request", "request"),
        need(json_path, "parse"),
        need(result_path, "parse"),
        need(sqs_models.SQSBackend, "is_message_valid_based_on_retention_period", "queue_name", "message"),
        need(sqs_models.SQSBackend, "get_queue", "queue_name"),
        need(sqs_models.SQSBackend, "get_queue_attributes", "queue_name", "attribute_names"),
        need(sqs_models.Queue, "attributes"),
        need(sqs_models.Queue, "messages"),
        need(sqs_models.Queue, "FIFO_ATTRIBUTES"),
        need(sqs_models.Queue, "KMS_ATTRIBUTES"),
        need(sqs_models.Message, "visible"),  # visible_at, delayed_until: what it and `delayed` compare
        need(sqs_models.Message, "delayed"),
        need(sqs_models, "unix_time_millis"),
        need(sqs_models.Queue, "BASE_ATTRIBUTES"),  # MessageRetentionPeriod: an int attribute of the queue
        need(sqs_models, "unix_time"),
        need(moto_backends, "list_of_moto_modules"),
        need(DomainDispatcherApplication, "get_backend_for_host", "host"),
        need(DomainDispatcherApplication, "__init__", "create_app"),  # sets backend_url_patterns
        need(moto_core_responses, "method_names_from_class"),
        need(moto_core_utils, "method_names_from_class", "clazz"),
        need(BackendDict, "_create_account_specific_backend", "account_id"),
        need(BackendDict, "_instances"),  # the registered dicts (BackendDict.reset resets those)
        need(dynamodb_models, "copy"),
        need(dynamodb_models.DynamoDBBackend, "transact_write_items", "transact_items"),
        *(need(importlib.import_module(name), "boto_client_for") for name in INTEGRATION_MODULES),
        *retention.moto_needs(),  # the modules beside this one, checked with it
        *execution_index.moto_needs(),
        *index_query.moto_needs(),
        *baseline.moto_needs(),
    ]


def patches(selected: frozenset[str], request_lock: threading.RLock | None) -> list[Patch]:
    if IN_PROCESS_INTEGRATIONS in selected and request_lock is None:
        raise SpeedupError(f"{IN_PROCESS_INTEGRATIONS} needs the embedded server's request lock")
    chosen: list[Patch] = []
    if PARSE_CACHE in selected:
        chosen += parse_cache()
    if CLIENT_CACHE in selected or IN_PROCESS_INTEGRATIONS in selected:
        chosen += integration_clients(
            cached=CLIENT_CACHE in selected,
            request_lock=request_lock if IN_PROCESS_INTEGRATIONS in selected else None,
        )
    if JSONPATH_CACHE in selected:
        chosen += jsonpath_cache()
    if SQS_FAST_PATHS in selected:
        chosen += sqs_fast_paths()
    if DISPATCH_CACHE in selected:
        chosen += dispatch_cache()
    if ITEM_ROLLBACK in selected:
        chosen += item_level_rollback()
    if DIRECT_TRANSPORT in selected:
        chosen += direct_transport.patches()
    if EXECUTION_INDEX in selected:
        chosen += execution_index.patches()
    if INDEX_QUERY in selected:
        chosen += index_query.patches()
    if SERIALIZER_FAST_PATHS in selected:
        chosen += serializer_fast_paths.patches()
    if IDLE_GATES in selected:
        chosen += idle_gates.patches()
    if REQUEST_HEADERS in selected:
        chosen += request_headers.patches()
    if BACKEND_LOOKUP in selected:
        chosen += backend_lookup()
    if JSON_LANE in selected:
        chosen += json_lane.patches()
    return chosen


# --- parse_cache ----------------------------------------------------------------------------------
_PARSE_LOCK = threading.Lock()


@functools.lru_cache(maxsize=64)
def _parse_once(definition: str) -> Any:
    return AmazonStateLanguageParser.parse(definition)


class _CachedParser(AmazonStateLanguageParser):
    @staticmethod
    def parse(definition: str) -> Any:
        # One parse per definition: the first executions of a batch start together, and each would
        # parse (about 25 ms) before the first one is cached.
        with _PARSE_LOCK:
            return _parse_once(definition)


def parse_cache() -> list[Patch]:
    # Executions parse their definition, and so does CreateStateMachine to validate it (a definition
    # that does not parse raises, and is not cached).
    return [
        (execution_worker, "AmazonStateLanguageParser", _CachedParser),
        (sfn_parser_models, "AmazonStateLanguageParser", _CachedParser),
    ]


# --- client_cache, in_process_integrations --------------------------------------------------------
class _LockedStubber(BotocoreStubber):
    """moto's BotocoreStubber (what mock_aws registers on botocore), taking the server's request lock."""

    def __init__(self, request_lock: threading.RLock):
        super().__init__()
        self.enabled = True
        self._request_lock = request_lock

    def __call__(self, event_name: str, request: Any, **kwargs: Any) -> Any:
        with self._request_lock:
            return super().__call__(event_name, request, **kwargs)


def _in_process_client(region: str, service: str, stubber: _LockedStubber) -> Any:
    """A client as moto's boto_client_for makes it under mock_aws: AWS's own endpoint, answered by the stubber."""
    client = _CLIENT_SESSION.client(
        service,
        region_name=region,
        aws_access_key_id="ak",
        aws_secret_access_key="sk",
        config=Config(
            parameter_validation=False,
            retries={"max_attempts": 0, "total_max_attempts": 1},
            # AWS_ENDPOINT_URL (set for the in-process starter) must not send these to the server.
            ignore_configured_endpoint_urls=True,
        ),
    )
    client.meta.events.register_first("before-send", stubber)
    return client


_CLIENT_SESSION = boto3.session.Session()
_CLIENT_SESSION_LOCK = threading.Lock()  # botocore sessions are not safe to build clients on concurrently


def integration_clients(cached: bool, request_lock: threading.RLock | None) -> list[Patch]:
    original = sfn_boto_client.boto_client_for
    stubber = _LockedStubber(request_lock) if request_lock is not None else None

    def build(region: str, service: str, state_credentials: Any) -> Any:
        if stubber is None:
            return original(region, service, state_credentials)
        with _CLIENT_SESSION_LOCK:
            return _in_process_client(region, service, stubber)

    @once_per_key
    def build_cached(region: str, service: str, port: str, role_arn: str | None) -> Any:
        # moto gives every task the same fixed credentials; the role is in the key all the same,
        # so a future moto that assumes the task's role cannot be handed another role's client.
        return build(region, service, sfn_credentials.StateCredentials(role_arn=role_arn) if role_arn else None)

    def boto_client_for(region: str, service: str, state_credentials: Any = None) -> Any:
        if not cached:
            return build(region, service, state_credentials)
        role_arn = getattr(state_credentials, "role_arn", None)
        return build_cached(region, service, os.environ.get("MOTO_PORT", "5000"), role_arn)

    return [(importlib.import_module(name), "boto_client_for", boto_client_for) for name in INTEGRATION_MODULES]


# --- jsonpath_cache -------------------------------------------------------------------------------
def jsonpath_cache() -> list[Patch]:
    return [
        (json_path, "parse", functools.lru_cache(maxsize=4096)(json_path.parse)),
        (result_path, "parse", functools.lru_cache(maxsize=4096)(result_path.parse)),
    ]


# --- sqs_fast_paths -------------------------------------------------------------------------------
def _retention_check(self: Any, queue_name: str, message: Any) -> bool:
    """moto's check, reading MessageRetentionPeriod (an int, see Queue._set_attributes) directly."""
    retention_period = self.get_queue(queue_name).message_retention_period
    return bool(retention_period + message.sent_timestamp / 1000 > sqs_models.unix_time())


class _VisibleMessages:
    """moto's Queue.messages (visible and not delayed), read lazily with one clock reading for the
    whole queue instead of two per message (moto's clock is a datetime subtraction). ReceiveMessage
    iterates it and stops at its batch: with a backlog it no longer lists every queued message to
    take ten (a backlog of 20,000 made each receive a walk of 20,000). Truth and length are moto's."""

    def __init__(self, messages: list[Any], now: int):
        self._messages, self._now = messages, now

    def __iter__(self) -> Iterator[Any]:
        now = self._now
        return (m for m in self._messages if now > m.visible_at and not now < m.delayed_until)

    def __bool__(self) -> bool:
        return next(iter(self), None) is not None

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _visible_messages(self: Any) -> _VisibleMessages:
    return _VisibleMessages(self._messages, sqs_models.unix_time_millis())


def _get_queue_attributes(original: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    def get_queue_attributes(self: Any, queue_name: str, attribute_names: list[str]) -> dict[str, Any]:
        """moto's answer, computing the queue's attributes once instead of up to twice per name
        (an empty list, "All" and invalid names are left to moto itself)."""
        queue = self.get_queue(queue_name)
        valid = ("All", *queue.BASE_ATTRIBUTES, *queue.FIFO_ATTRIBUTES, *queue.KMS_ATTRIBUTES)
        if not attribute_names or "All" in attribute_names or any(name not in valid for name in attribute_names):
            return original(self, queue_name, attribute_names)
        attributes = queue.attributes
        return {name: attributes[name] for name in attribute_names if attributes.get(name) is not None}

    return get_queue_attributes


def sqs_fast_paths() -> list[Patch]:
    return [
        (sqs_models.SQSBackend, "is_message_valid_based_on_retention_period", _retention_check),
        (
            sqs_models.SQSBackend,
            "get_queue_attributes",
            _get_queue_attributes(sqs_models.SQSBackend.get_queue_attributes),
        ),
        (sqs_models.Queue, "messages", property(_visible_messages)),
    ]


# --- dispatch_cache ------------------------------------------------------------------------------
def dispatch_cache() -> list[Patch]:
    modules = tuple(moto_backends.list_of_moto_modules())
    # Asked once per response class after start: EmbeddedAws applies every patch (the actions this
    # engine adds among them) before it serves a request, and a new start makes a new cache.
    method_names = functools.lru_cache(maxsize=None)(moto_core_utils.method_names_from_class)
    return [
        (moto_backends, "list_of_moto_modules", lambda: modules),
        (moto_core_responses, "method_names_from_class", method_names),
        (DomainDispatcherApplication, "get_backend_for_host", _backend_for_host()),
    ]


def _backend_for_host() -> Callable[[Any, str | None], Any]:
    """moto's server finds a request's backend (twice per request) by matching its Host against
    every backend's URL patterns in turn, several hundred regular expressions: a host's backend,
    once found, is kept (per list of patterns: the app's, which moto builds once from its index).
    A host with no backend is asked again each time, as moto does (it may print a warning)."""
    original = DomainDispatcherApplication.get_backend_for_host
    found: dict[tuple[int, str], Any] = {}

    def get_backend_for_host(self: Any, host: str | None) -> Any:
        if host is None:
            return None
        key = (id(self.backend_url_patterns), host)
        backend = found.get(key)
        if backend is None:
            backend = original(self, host)
            if backend is not None:
                found[key] = backend
        return backend

    return get_backend_for_host


# --- backend_lookup -------------------------------------------------------------------------------
def backend_lookup() -> list[Patch]:
    original = BackendDict._create_account_specific_backend

    def _create_account_specific_backend(self: Any, account_id: str) -> None:
        # moto's: under its lock, add the account if absent, register the dict if not registered.
        if dict.__contains__(self, account_id):
            for registered in BackendDict._instances:
                if registered is self:
                    return
        original(self, account_id)

    return [(BackendDict, "_create_account_specific_backend", _create_account_specific_backend)]


# --- item_rollback --------------------------------------------------------------------------------
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
