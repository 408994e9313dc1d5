"""One authorization decided, and a denial worded and recorded as AWS words it.

Denial messages follow the IAM User Guide's "Troubleshoot access denied error messages"
(https://docs.aws.amazon.com/IAM/latest/UserGuide/troubleshoot_access-denied.html):
`User: <principal> is not authorized to perform: <action> on resource: <resource> because no
identity-based policy allows the <action> action` (or `... because no resource-based policy allows
...`, `... with an explicit deny in an identity-based policy`, `... in a resource-based policy`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass

from moto.logs.models import logs_backends

from onceflow.engine.iam import identities, resource_policies
from onceflow.engine.iam.actions import Asked
from onceflow.engine.iam.conditions import ContextValue
from onceflow.engine.iam.denials import DENIAL_LOG_GROUP, Denial, DenialLog
from onceflow.engine.iam.policy import Decision, Principal, Request, Statement, evaluate


@dataclass
class IamSwitch:
    """Whether IAM is enforced (EmbeddedAws(iam=...), ONCEFLOW_IAM=off), the denials so far, and
    every statement that allowed a request (`used`: what the grant -> path table is made from)."""

    on: bool = True
    denials: DenialLog = None  # type: ignore[assignment]
    record_use: bool = False

    def __post_init__(self) -> None:
        if self.denials is None:
            self.denials = DenialLog()
        self.used: list[tuple[Principal, Asked, tuple[Statement, ...]]] = []
        self._lock = threading.Lock()

    def note_use(self, principal: Principal, asked: Asked, decision: Decision) -> None:
        if self.record_use:
            with self._lock:
                self.used.append((principal, asked, decision.statements))


def reason(decision: Decision, action: str) -> str:
    if decision.explicit_deny:
        kind = "a resource-based" if decision.missing == "resource" else "an identity-based"
        return f"with an explicit deny in {kind} policy"
    kind = "resource-based" if decision.missing in ("resource", "key") else "identity-based"
    return f"because no {kind} policy allows the {action} action"


def message(principal: Principal, asked: Asked, because: str) -> str:
    return f"User: {principal.arn} is not authorized to perform: {asked.action} on resource: {asked.resource} {because}"


def decide(
    principal: Principal,
    asked: Asked,
    context: Mapping[str, ContextValue] | None = None,
) -> Decision:
    """AWS's decision for `principal` asking `asked`, with the resource's own policy if it has one."""
    resource, key_policy = resource_policies.policy_of(asked.resource)
    identity = [] if principal.is_service else identities.identity_statements(principal)
    full_context: dict[str, ContextValue] = {
        "aws:SecureTransport": "true",  # the embedded endpoint stands for AWS's HTTPS endpoints
        "aws:PrincipalAccount": principal.account,
        **({"aws:PrincipalArn": principal.role_arn or principal.arn} if not principal.is_service else {}),
        **(context or {}),
    }
    return evaluate(Request(principal, asked.action, asked.resource, full_context), identity, resource, key_policy)


def record(switch: IamSwitch, principal: Principal, asked: Asked, decision: Decision, region: str) -> Denial:
    """The denial in the switch's log and in the embedded CloudWatch Logs group DENIAL_LOG_GROUP."""
    denial = Denial(principal.arn, asked.action, asked.resource, reason(decision, asked.action))
    switch.denials.add(denial)
    try:
        backend = logs_backends[principal.account][region]
        if DENIAL_LOG_GROUP not in backend.groups:
            backend.create_log_group(DENIAL_LOG_GROUP, {})
        group = backend.groups[DENIAL_LOG_GROUP]
        if "denials" not in group.streams:
            backend.create_log_stream(DENIAL_LOG_GROUP, "denials")
        backend.put_log_events(
            DENIAL_LOG_GROUP, "denials", [{"timestamp": int(time.time() * 1000), "message": denial.line}]
        )
    except Exception:  # the log is a convenience: the denial itself stands
        pass
    return denial


def forget_denials(switch: IamSwitch, account: str, region: str) -> None:
    """No denial so far, in the switch's log nor in DENIAL_LOG_GROUP (a stack brought back to just-deployed)."""
    switch.denials.clear()
    backend = logs_backends[account][region]
    if DENIAL_LOG_GROUP in backend.groups:
        backend.delete_log_group(DENIAL_LOG_GROUP)
