"""Necessary, not only sufficient: every grant the template's roles and resource policies make is
removed, one at a time, from the deployed stack (as a deploy of the template without it would
leave it), the path that needs it runs again, and the denial it causes is shown. A grant no path
here needs is reported, with why. The table (grant -> the path that needs it) is printed per mode
(the default stack; DeploySubscriber=true for the subscriber's grants; the FIFO source with either
workflow type for the grants whose paths FIFO changes) and kept in docs/IAM.md.

How it stays cheap: one deployment per mode, restored to just-deployed between runs
(tests/conftest.py's baseline); each path is one or two messages through the real pipeline; the
paths run once with every allowing statement recorded (IamSwitch.record_use), then each grant is
removed for the one path that used it first.
"""

from __future__ import annotations

import copy
import hashlib
import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from moto.iam.models import iam_backends
from moto.sqs.models import sqs_backends

from onceflow.engine import ACCOUNT_ID, REGION, EmbeddedAws
from onceflow.engine.iam.conditions import wildcard
from onceflow.engine.iam.policy import _parsed
from onceflow.local.pipeline import LocalPipeline
from onceflow.local.stack import LocalStack
from tests.conftest import FIFO_MODES, fresh_stack

pytestmark = pytest.mark.embedded_only(reason="removes grants from the embedded IAM and queue policies")


def _body(order_id: str, amount: float = 10.0) -> dict[str, Any]:
    return {"order_id": order_id, "customer_id": "customer-1", "amount": amount, "currency": "EUR"}


def new_event(pipeline: LocalPipeline) -> None:
    pipeline.send([_body("order-new")])
    pipeline.process(timeout=60)


def poison_message(pipeline: LocalPipeline) -> None:
    pipeline.send(["not json"])
    pipeline.process(timeout=60)


def conflicting_payload(pipeline: LocalPipeline) -> None:
    pipeline.send([_body("order-twice")])
    pipeline.process(timeout=60)
    pipeline.send([_body("order-twice", amount=99.0)])
    pipeline.process(timeout=60)


def reconciler_sweep(pipeline: LocalPipeline) -> None:
    pipeline.schedule.run()


def _publish(pipeline: LocalPipeline, payload: dict[str, Any], event_id: str) -> None:
    """A notification as Publish notification sends it (payload, event_id, payload_hash), published as the
    account's admin: only the subscriber's side of it is authorized as the template says."""
    message = json.dumps(payload)
    attributes = {
        "event_id": {"DataType": "String", "StringValue": event_id},
        "payload_hash": {"DataType": "String", "StringValue": hashlib.sha256(message.encode()).hexdigest()},
    }
    if pipeline.stack.notification_topic_arn.endswith(".fifo"):
        fifo = {"MessageGroupId": event_id, "MessageDeduplicationId": uuid.uuid4().hex}
    else:
        fifo = {}
    pipeline.stack.client("sns").publish(
        TopicArn=pipeline.stack.notification_topic_arn, Message=message, MessageAttributes=attributes, **fifo
    )


def duplicate_notification(pipeline: LocalPipeline) -> None:
    """The same notification delivered twice (SNS and SQS are at-least-once): the second finds the marker."""
    for _ in range(2):
        _publish(pipeline, _body("order-notified"), "order-notified")
        pipeline.process(timeout=60)


def unappliable_notification(pipeline: LocalPipeline) -> None:
    """A notification without the tally key: the subscriber dead-letters it with the reason."""
    _publish(pipeline, {"order_id": "order-no-customer", "amount": 1.0}, "order-no-customer")
    pipeline.process(timeout=60)


PATHS: dict[str, Callable[[LocalPipeline], None]] = {
    "new event": new_event,
    "poison message": poison_message,
    "conflicting payload (look-up, dead letter)": conflicting_payload,
    "reconciler sweep": reconciler_sweep,
    "duplicate notification": duplicate_notification,
    "unappliable notification": unappliable_notification,
}


@dataclass(frozen=True)
class Mode:
    """A deployment of the template, the paths run on it, and whose grants its table shows (the
    default stack's table shows every grant; another mode's only those the mode adds or routes
    differently, the rest being the default's)."""

    name: str
    parameters: dict[str, str]
    paths: tuple[str, ...]
    owners: tuple[str, ...] = ()  # logical ids of the roles and queues whose grants are shown; () all

    def shows(self, grant: Grant) -> bool:
        return not self.owners or any(f"-{owner}-" in f"{grant.owner}-" for owner in self.owners)


PIPELINE_PATHS = ("new event", "poison message", "conflicting payload (look-up, dead letter)", "reconciler sweep")
FIFO_OWNERS = ("StarterRole", "PipelineStateMachineRole", "SourceQueue", "DeadLetterQueue")
SUBSCRIBER_OWNERS = ("SubscriberRole", "SubscriberQueue", "SubscriberDeadLetterQueue")
MODES = [
    Mode("default", {}, PIPELINE_PATHS),
    # The example subscriber: its role, and the queue policy that admits the notification topic.
    Mode(
        "DeploySubscriber",
        {"DeploySubscriber": "true"},
        ("new event", "duplicate notification", "unappliable notification"),
        SUBSCRIBER_OWNERS,
    ),
    # A FIFO source: the starter waits for each execution (STANDARD: DescribeExecution; EXPRESS:
    # StartSyncExecution), writes FIFO dead letters, and so does the state machine.
    Mode("FIFO", dict(FIFO_MODES["FIFO"]), PIPELINE_PATHS[:3], FIFO_OWNERS),
    Mode("FIFO_EXPRESS", dict(FIFO_MODES["FIFO_EXPRESS"]), PIPELINE_PATHS[:3], FIFO_OWNERS),
]

# Why a grant has no path here: by its Sid, else by the action it grants.
NO_PATH_BY_SID = {
    "RequeueThrottledRecords": "throttling (tests/starter: the throttled-record paths)",
    "HoldThrottledRecordsInFlight": "throttling on a FIFO source (tests/starter/test_fifo.py)",
    "RecheckPendingRecord": "an event stuck pending (tests/reconciler)",
    "NotificationTopicDelivers": "SNS redriving to the subscription's dead-letter queue, only when the "
    "subscriber queue refuses a delivery (tests/iam/test_wrong_templates.py, the KMS key case)",
}
NO_LOCAL_PATH = {
    "xray:": "X-Ray is not emulated (tracing is off locally)",
    "logs:": "function logs are shipped by the local runtime, state machine log delivery by the engine: not authorized as the role",
    "kms:": "no local path uses the key for this principal (CloudWatch Logs encryption and alarms are not emulated)",
}


@dataclass(frozen=True)
class Grant:
    """One action on one resource, as one statement of one policy grants it."""

    kind: str  # "role" or "queue"
    owner: str  # role name or queue name
    policy: str  # the inline policy's name ("" for a queue)
    sid: str
    action: str
    resource: str

    @property
    def label(self) -> str:
        where = self.owner.split("-")[-2]
        return f"{where}/{self.sid}: {self.action} on {self.resource.rsplit(':', 1)[-1]}"

    def matches(self, action: str, resource: str) -> bool:
        return wildcard(self.action, ignore_case=True).match(action) is not None and (
            wildcard(self.resource).match(resource) is not None
        )


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _document(raw: Any) -> dict[str, Any]:
    return copy.deepcopy(_parsed(raw) if isinstance(raw, str) else raw)


def _statements(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in _as_list(document.get("Statement", [])) if isinstance(s, dict)]


def grants_of(stack: LocalStack) -> list[Grant]:
    found: list[Grant] = []
    prefix = stack.stack_name + "-"
    for role in iam_backends[ACCOUNT_ID]["aws"].roles.values():
        if not role.name.startswith(prefix):
            continue
        for name, raw in role.policies.items():
            for index, statement in enumerate(_statements(_document(raw))):
                if statement.get("Effect") != "Allow":
                    continue
                for action in _as_list(statement.get("Action", [])):
                    for resource in _as_list(statement.get("Resource", [])):
                        found.append(
                            Grant("role", role.name, name, statement.get("Sid", f"#{index}"), action, resource)
                        )
    for queue in sqs_backends[ACCOUNT_ID][REGION].queues.values():
        if not queue.name.startswith(prefix) or not queue.policy:
            continue
        for index, statement in enumerate(_statements(_document(queue.policy))):
            if statement.get("Effect") != "Allow":
                continue
            for action in _as_list(statement.get("Action", [])):
                for resource in _as_list(statement.get("Resource", [])):
                    found.append(Grant("queue", queue.name, "", statement.get("Sid", f"#{index}"), action, resource))
    return found


def _other_queue(grant: Grant) -> str | None:
    """A queue policy's grant on another queue than its own: never asked (AWS reads a queue's policy for
    requests on that queue only; the template attaches one document to both subscriber queues)."""
    if grant.kind == "queue" and not grant.resource.endswith(":" + grant.owner):
        return "a queue's policy is read for that queue only: this resource is another queue's"
    return None


def without(document: dict[str, Any], grant: Grant) -> dict[str, Any]:
    """The document with exactly this action on this resource no longer granted by its statement."""
    kept: list[dict[str, Any]] = []
    for statement in _statements(document):
        if statement.get("Sid") != grant.sid or grant.action not in _as_list(statement.get("Action", [])):
            kept.append(statement)
            continue
        others = [a for a in _as_list(statement["Action"]) if a != grant.action]
        if others:
            kept.append({**statement, "Action": others})
        resources = [r for r in _as_list(statement.get("Resource", [])) if r != grant.resource]
        if resources:
            kept.append({**statement, "Action": [grant.action], "Resource": resources})
    return {**document, "Statement": kept}


@pytest.fixture(scope="module")
def deployed(embedded_aws: EmbeddedAws) -> Iterator[tuple[EmbeddedAws, dict[str, Any]]]:
    yield embedded_aws, {}


def _run(aws: EmbeddedAws, stack_getter: Callable[[], LocalStack], path: str, tolerate: bool = False) -> LocalStack:
    """One path on the just-deployed stack. `tolerate`: a denial may stop it (the emulated event source
    raises where Lambda would stop polling): what counts then is the denial recorded."""
    stack = stack_getter()
    aws.iam.denials.clear()
    try:
        PATHS[path](LocalPipeline(aws, stack))
    except Exception:
        if not tolerate:
            raise
    return stack


@pytest.fixture(scope="module", params=MODES, ids=[m.name for m in MODES])
def table(request: pytest.FixtureRequest, embedded_aws: EmbeddedAws, _deployed: dict) -> dict[str, Any]:
    """The grant -> paths table of one mode: every path run once, each allowing statement recorded."""
    aws = embedded_aws
    mode: Mode = request.param
    if not aws.iam.on:
        pytest.skip("IAM enforcement is off (ONCEFLOW_IAM=off): no grant is needed, none can be shown")

    def stack() -> LocalStack:
        key = "default" if not mode.parameters else f"grants:{mode.name}"
        return fresh_stack(aws, _deployed, key=key, parameters=mode.parameters or None)

    uses: dict[Grant, list[str]] = {}
    grants = [grant for grant in grants_of(stack()) if mode.shows(grant)]
    for path in mode.paths:
        aws.iam.record_use, aws.iam.used = True, []
        try:
            _run(aws, stack, path)
        finally:
            aws.iam.record_use = False
        for _principal, asked, allowing in aws.iam.used:
            for statement in allowing:
                for grant in grants:
                    owner_named = grant.owner in statement.source
                    if owner_named and grant.sid == statement.sid and grant.matches(asked.action, asked.resource):
                        uses.setdefault(grant, [])
                        if path not in uses[grant]:
                            uses[grant].append(path)
    return {"grants": grants, "uses": uses, "stack": stack, "mode": mode}


def test_every_grant_a_path_uses_is_necessary_to_it(embedded_aws: EmbeddedAws, table: dict[str, Any]) -> None:
    aws = embedded_aws
    lines = [
        "| grant (role or queue / Sid: action on resource) | the path that needs it | denial when removed |",
        "| --- | --- | --- |",
    ]
    not_shown: list[str] = []
    for grant in table["grants"]:
        paths = table["uses"].get(grant)
        if not paths:
            why = (
                _other_queue(grant)
                or NO_PATH_BY_SID.get(grant.sid)
                or next(
                    (text for prefix, text in NO_LOCAL_PATH.items() if grant.action.lower().startswith(prefix)),
                    "no generated path takes it (a mode or fault path outside this table, or an excess permission)",
                )
            )
            lines.append(f"| {grant.label} | none: {why} | |")
            continue
        stack = table["stack"]()
        restore = _remove(grant)
        try:
            _run(aws, table["stack"], paths[0], tolerate=True)
            shown = [d for d in aws.iam.denials.all() if grant.matches(d.action, d.resource)]
        finally:
            restore()
        if not shown:
            not_shown.append(grant.label)
        lines.append(f"| {grant.label} | {', '.join(paths)} | {shown[0].line if shown else 'NONE'} |")
        del stack
    print(f"\nGrant -> path, {table['mode'].name} stack\n" + "\n".join(lines))
    assert not not_shown, f"grants whose removal no path showed: {not_shown}"


def _remove(grant: Grant) -> Callable[[], None]:
    """Take the grant out of the deployed policy; returns what puts it back."""
    if grant.kind == "role":
        role = iam_backends[ACCOUNT_ID]["aws"].get_role(grant.owner)
        before = role.policies[grant.policy]
        role.policies[grant.policy] = json.dumps(without(_document(before), grant))

        def put_back() -> None:
            role.policies[grant.policy] = before

        return put_back
    queue = sqs_backends[ACCOUNT_ID][REGION].queues[grant.owner]
    saved = queue.policy
    queue.policy = json.dumps(without(_document(saved), grant))

    def put_back_queue() -> None:
        queue.policy = saved

    return put_back_queue
