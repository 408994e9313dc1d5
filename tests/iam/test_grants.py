"""Necessary, not only sufficient: every grant the template's roles and resource policies make is
removed, one at a time, from the deployed stack (as a deploy of the template without it would
leave it), the path that needs it runs again, and the denial it causes is shown. A grant no path
here needs is reported, with why. The table (grant -> the path that needs it) is printed and kept
in docs/IAM.md.

How it stays cheap: one deployment of the default stack, restored to just-deployed between runs
(tests/conftest.py's baseline); each path is one or two messages through the real pipeline; the
paths run once with every allowing statement recorded (IamSwitch.record_use), then each grant is
removed for the one path that used it first.
"""

from __future__ import annotations

import copy
import json
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
from tests.conftest import fresh_stack

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


PATHS: dict[str, Callable[[LocalPipeline], None]] = {
    "new event": new_event,
    "poison message": poison_message,
    "conflicting payload (look-up, dead letter)": conflicting_payload,
    "reconciler sweep": reconciler_sweep,
}

# Why a grant has no path here (by the action it grants).
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


@pytest.fixture(scope="module")
def table(embedded_aws: EmbeddedAws, _deployed: dict) -> dict[str, Any]:
    """The grant -> paths table: every path run once, each allowing statement recorded."""
    aws = embedded_aws
    if not aws.iam.on:
        pytest.skip("IAM enforcement is off (ONCEFLOW_IAM=off): no grant is needed, none can be shown")

    def stack() -> LocalStack:
        return fresh_stack(aws, _deployed)

    uses: dict[Grant, list[str]] = {}
    grants = grants_of(stack())
    for path in PATHS:
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
    return {"grants": grants, "uses": uses, "stack": stack}


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
            why = next(
                (text for prefix, text in NO_LOCAL_PATH.items() if grant.action.lower().startswith(prefix)),
                "no generated path takes it (a mode or fault path outside this table)",
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
    print("\n" + "\n".join(lines))
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
