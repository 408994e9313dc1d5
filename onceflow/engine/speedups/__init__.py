"""Speed-ups for moto's Step Functions, DynamoDB and SQS, safe because the embedded AWS handles one
request at a time (see server.py). Each is switchable on its own (`EmbeddedAws(speedups=...)`) and is
a module of this package named after it (client_cache and in_process_integrations share
integration_clients.py; sqs_fast_paths is sqs_fast_paths.py and sqs_counts.py), whose `SPEEDUPS`
names the switches that turn it on. keep_alive.py and batch_requests.py (many JSON-protocol
requests in one HTTP request, for `trace`) are the server's, always on. Where each applies
among the engine's patches: engine/registry.py.

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
  A path jsonpath_ng parses as plain field names only (`$.event_id`) is read from the dicts that
  hold them directly; anything else goes to moto's extract_json (jsonpath_cache.py).
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
  without a TCP connection and a server thread per call; the WSGI environ of a plain POST to `/`
  (every JSON- and query-protocol call) built directly, not by werkzeug's EnvironBuilder
  (wsgi_environ.py, which direct_integrations' requests use too).
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
- inline_tasks: a request-response service Task (no `.sync`, no `.waitForTaskToken`) with neither
  TimeoutSeconds nor HeartbeatSeconds runs on its execution's thread, not on a thread of its own that
  the execution's thread waits for with no timeout to enforce (inline_tasks.py): a thread start, an
  Event and a thread switch less per task.
- update_expressions: an UpdateExpression is parsed once per text (moto parses it twice per
  UpdateItem) and its tree copied node by node where moto's validator deep-copies it
  (update_expressions.py): about a third of an UpdateItem.
- name_cases: the integrations' conversions of member names between CamelCase and snake_case (a
  regular expression per name per task) computed once per name (name_cases.py).
- sns_signing: a subscription's notifications signed with one certificate made on its first, as
  SNS signs with a regional certificate; moto made and kept a new one per notification (an RSA
  signature, about 0.45 ms, and 1 KB kept for ever per notification delivered to SQS or HTTP)
  (sns_signing.py).
- update_validation: the three of moto's ten validation passes over an UpdateExpression that read only
  the expression, its attribute names and the table's key attributes (one clause of each kind,
  no overlapping paths, no key attribute updated; the first two re-walk the subtree at every node)
  run once per combination of the three that passed them, not per UpdateItem: about 0.9 ms of an
  UpdateItem such as the pipeline's "Mark as sent" (update_validation.py). A failure is never
  remembered: it raises on every request, as in moto.
- direct_integrations (with in_process_integrations): a Task's JSON- or query-protocol call is
  answered from botocore's `before-call` event by the moto method that serves its URL, as botocore's
  Stubber answers there, instead of being signed, sent through `before-send` to moto's
  BotocoreStubber (which matches the URL against hundreds of patterns per call) and read back
  (direct_integrations.py): the same request body, moto handler, parser and exceptions.

- unsigned_local_calls (with direct_transport): a boto3 call from this process to its embedded AWS
  carries SigV4's headers and credential scope but no computed signature, which nothing here
  verifies (unsigned_local_calls.py); calls to anything else, S3's and presigned ones are signed.
- collector_thresholds: while the embedded AWS runs, Python's garbage collector walks the whole heap
  (moto's models and all they keep) after 100 collections of its middle generation instead of 10,
  and never walks what the process held when the engine started (`gc.freeze()`); put back on stop
  (collector_thresholds.py).
- condition_expressions: a DynamoDB ConditionExpression lexed and parsed once per text, names and
  value placeholders (moto parses each twice per write, 40–90 µs each), its syntax tree and the
  placeholders it found remembered; each request's condition made from that tree with its own values
  by moto's last step (condition_expressions.py).
- request_plans: a JSON-protocol request body read into moto's parameters by a plan made once per
  input shape, not by moto's walk of the shape value by value (request_plans.py).
- json_copies: the Step Functions interpreter's copies of state data (about 70 per pipeline execution,
  most of them of the input) made by a walk of its dicts and lists, not by `copy.deepcopy`'s dispatch
  and memo; anything not JSON still goes to `copy.deepcopy` (json_copies.py).
- request_reads: a request's access key id (moto searches the Authorization header for it twice per
  request), Step Functions' backend (looked up up to six times per DescribeExecution) and the JSON
  body moto's `_get_param` parses for every parameter read once per request (request_reads.py).
- plain_updates: an UpdateItem that only sets top-level attributes to `:placeholder` values and
  removes top-level attributes (the pipeline's "Mark as sent"), on an existing item, with nothing in
  it moto's validator could refuse, is applied to the item directly: moto's condition parser, the
  item's size-limited dict, its stream; anything else goes to moto's expression machinery
  (plain_updates.py): about a third of such an UpdateItem.
- item_sizes: DynamoDB's item-size check, which moto makes on every attribute it sets by summing the
  size of every attribute already there through DynamoType.size()'s chain of type tests, measures a
  name and an S or N value directly (item_sizes.py); anything else, the limit and the error are moto's.
- handed_params (with direct_integrations): a Task's call to a JSON- or query-protocol service whose
  moto response class parses its parameters itself (DynamoDB, SQS, SNS) hands it the parameters moto
  would read from botocore's body (JSON: a plan per input shape; a query: the form werkzeug would
  read, parsed by moto), without writing and reading the body; the response object set up as moto's
  setup_class sets it up, less the request object (and a JSON body, which its handlers do not read)
  (handed_params.py): 0.93x the instructions of a pipeline execution, whose three Task calls it hands
  over.
`ONCEFLOW_SPEEDUPS_OFF=name,name` (or `all`) switches speed-ups off wherever the default set is
asked for (`EmbeddedAws()`, `speedups=True`): a way to run any test or tool with one switched off.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

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
INLINE_TASKS = "inline_tasks"
UPDATE_EXPRESSIONS = "update_expressions"
NAME_CASES = "name_cases"
SNS_SIGNING = "sns_signing"
UPDATE_VALIDATION = "update_validation"
DIRECT_INTEGRATIONS = "direct_integrations"
UNSIGNED_LOCAL_CALLS = "unsigned_local_calls"
COLLECTOR_THRESHOLDS = "collector_thresholds"
CONDITION_EXPRESSIONS = "condition_expressions"
REQUEST_PLANS = "request_plans"
JSON_COPIES = "json_copies"
REQUEST_READS = "request_reads"
PLAIN_UPDATES = "plain_updates"
ITEM_SIZES = "item_sizes"
HANDED_PARAMS = "handed_params"
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
    INLINE_TASKS,
    UPDATE_EXPRESSIONS,
    NAME_CASES,
    SNS_SIGNING,
    UPDATE_VALIDATION,
    DIRECT_INTEGRATIONS,
    UNSIGNED_LOCAL_CALLS,
    COLLECTOR_THRESHOLDS,
    CONDITION_EXPRESSIONS,
    REQUEST_PLANS,
    JSON_COPIES,
    REQUEST_READS,
    PLAIN_UPDATES,
    ITEM_SIZES,
    HANDED_PARAMS,
)


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
