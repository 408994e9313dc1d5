"""Policy documents and AWS's evaluation logic for one account.

https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html and
https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic_policies_resource.html:
1. an explicit Deny in any applicable policy (identity or resource) decides: denied;
2. otherwise, within one account, an Allow in the principal's identity policies OR in the
   resource's policy (naming that principal) allows; a service principal (`sns.amazonaws.com`)
   has no identity policies, so only a resource policy can admit it;
3. a KMS key is the exception: its key policy must allow, itself or by naming the account
   (`arn:aws:iam::<account>:root`), which is what lets the account's IAM policies allow
   (https://docs.aws.amazon.com/kms/latest/developerguide/key-policy-overview.html);
4. otherwise implicitly denied.

Statement elements: Effect, Action/NotAction (case-insensitive wildcards), Resource/NotResource
(case-sensitive wildcards), Principal/NotPrincipal (`*`, AWS account, role or session ARNs,
Service), Condition (conditions.py). Not covered: permissions boundaries, session policies, SCPs
and RCPs (the template has none), policy variables in Resource, cross-account access.
"""

from __future__ import annotations

import ast
import functools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from onceflow.engine.iam.conditions import ContextValue, holds, wildcard


@dataclass(frozen=True)
class Principal:
    """Who calls. `arn` as AWS names the caller in a denial (an assumed-role session ARN, a
    service's name); `role_arn` the role whose identity policies apply; `service` a service
    principal's name; `account` the caller's account."""

    arn: str
    account: str
    role_arn: str | None = None
    service: str | None = None

    @property
    def is_service(self) -> bool:
        return self.service is not None


@dataclass(frozen=True)
class Request:
    principal: Principal
    action: str  # service:Action
    resource: str  # the resource's ARN, or "*"
    context: Mapping[str, ContextValue] = field(default_factory=dict)


@dataclass(frozen=True)
class Statement:
    """One statement of a policy, with where it came from (the policy's name or resource)."""

    raw: Mapping[str, Any]
    source: str
    index: int

    @property
    def sid(self) -> str:
        return str(self.raw.get("Sid") or f"#{self.index}")

    @property
    def effect(self) -> str:
        return str(self.raw.get("Effect", ""))

    def applies(self, request: Request, resource_policy: bool = False) -> bool:
        raw = self.raw
        if not _listed(raw, "Action", "NotAction", request.action, _action_matches):
            return False
        if ("Resource" in raw or "NotResource" in raw) and not _listed(
            raw, "Resource", "NotResource", request.resource, _resource_matches
        ):
            return False
        if resource_policy and not _principal_matches(raw, request.principal):
            return False
        return holds(raw.get("Condition"), request.context)


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _listed(raw: Mapping[str, Any], name: str, negated: str, value: str, match: Any) -> bool:
    if name in raw:
        return any(match(str(pattern), value) for pattern in _as_list(raw[name]))
    if negated in raw:
        return not any(match(str(pattern), value) for pattern in _as_list(raw[negated]))
    return False


def _action_matches(pattern: str, action: str) -> bool:
    return wildcard(pattern, ignore_case=True).match(action) is not None


def _resource_matches(pattern: str, resource: str) -> bool:
    return wildcard(pattern).match(resource) is not None


def _names(principal: Principal) -> set[str]:
    """What a policy's Principal may say to name this caller."""
    if principal.service is not None:
        return {principal.service}
    names = {principal.arn, principal.account, f"arn:aws:iam::{principal.account}:root"}
    if principal.role_arn:
        names.add(principal.role_arn)
    return names


def _principal_matches(raw: Mapping[str, Any], principal: Principal) -> bool:
    if "Principal" in raw:
        return _principal_named(raw["Principal"], principal)
    if "NotPrincipal" in raw:
        return not _principal_named(raw["NotPrincipal"], principal)
    return False


def _principal_named(block: Any, principal: Principal) -> bool:
    if block == "*":
        return True
    if not isinstance(block, Mapping):
        return False
    names = _names(principal)
    for kind, values in block.items():
        for value in _as_list(values):
            if value == "*" and (kind == "AWS" or principal.is_service):
                return True
            if kind == "Service" and principal.is_service and value == principal.service:
                return True
            if kind == "AWS" and not principal.is_service and str(value) in names:
                return True
    return False


def _parsed(text: str) -> Any:
    """A policy document's text; moto's CloudFormation keeps some as Python's repr of the object."""
    try:
        return json.loads(text)
    except ValueError:
        return ast.literal_eval(text)


def statements(document: Any, source: str) -> list[Statement]:
    """The statements of a policy document (JSON text or an object)."""
    if document is None or document == "":
        return []
    if isinstance(document, str):
        return list(_statements_of_text(document, source))
    return _statements_of(document, source)


@functools.lru_cache(maxsize=1024)
def _statements_of_text(text: str, source: str) -> tuple[Statement, ...]:
    """A policy text's statements, parsed once: every request a role makes is decided on its
    policies' texts, which change only when a policy is put (a new text). Statements are frozen and
    nothing writes to their `raw`."""
    return tuple(_statements_of(_parsed(text), source))


def _statements_of(parsed: Any, source: str) -> list[Statement]:
    # A statement CloudFormation resolved to AWS::NoValue (an !If's empty side) is no statement.
    kept = [raw for raw in _as_list(parsed.get("Statement", [])) if isinstance(raw, Mapping)]
    return [Statement(raw, source, index) for index, raw in enumerate(kept)]


@dataclass(frozen=True)
class Decision:
    allowed: bool
    # The statements that allowed it, or the explicit Deny that refused it (none: implicit deny).
    statements: tuple[Statement, ...] = ()
    explicit_deny: bool = False
    # Where the denial was decided: "identity" (no identity policy allows), "resource" (the resource
    # policy does not), "key" (the key policy does not) — AWS words a denial after this.
    missing: str = "identity"


MEMO_SIZE = 4096  # decisions kept; the memo starts again empty when full
_MEMO: dict[tuple[Any, ...], tuple[Decision, Sequence[Statement], Sequence[Statement]]] = {}


def evaluate(
    request: Request,
    identity: Sequence[Statement] = (),
    resource: Sequence[Statement] = (),
    key_policy: bool = False,
) -> Decision:
    """AWS's decision for one request within one account (module docstring).

    `identity`: the principal's identity policies' statements; `resource`: the resource policy's
    (a key policy when `key_policy`).

    A decision depends on nothing else, so it is remembered: every request a role makes to the same
    resource with the same context is decided on the same statements (the same objects while their
    policies' texts are unchanged: `_statements_of_text`; a policy put anew is new statements, and a
    new key). The memo keeps the statements it was decided on, so that their ids stay theirs."""
    key = _memo_key(request, identity, resource, key_policy)
    if key is None:
        return _evaluate(request, identity, resource, key_policy)
    kept = _MEMO.get(key)
    if kept is not None:
        return kept[0]
    decision = _evaluate(request, identity, resource, key_policy)
    if len(_MEMO) >= MEMO_SIZE:
        _MEMO.clear()
    _MEMO[key] = (decision, identity, resource)
    return decision


def _memo_key(
    request: Request, identity: Sequence[Statement], resource: Sequence[Statement], key_policy: bool
) -> tuple[Any, ...] | None:
    """What a decision depends on, hashable; None when a context value is neither text nor a list of texts."""
    context: list[tuple[str, Any]] = []
    for name, value in request.context.items():
        if isinstance(value, str):
            context.append((name, value))
        elif isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
            context.append((name, tuple(value)))
        else:
            return None
    return (
        request.principal,
        request.action,
        request.resource,
        tuple(context),
        tuple(map(id, identity)),
        tuple(map(id, resource)),
        key_policy,
    )


def _evaluate(
    request: Request, identity: Sequence[Statement], resource: Sequence[Statement], key_policy: bool
) -> Decision:
    applicable_identity = [s for s in identity if s.applies(request)] if not request.principal.is_service else []
    applicable_resource = [s for s in resource if s.applies(request, resource_policy=True)]
    denies = [s for s in (*applicable_identity, *applicable_resource) if s.effect == "Deny"]
    if denies:
        return Decision(
            False, (denies[0],), explicit_deny=True, missing="resource" if denies[0] in resource else "identity"
        )
    identity_allows = tuple(s for s in applicable_identity if s.effect == "Allow")
    resource_allows = tuple(s for s in applicable_resource if s.effect == "Allow")
    if key_policy:
        direct = tuple(s for s in resource_allows if _names_directly(s, request.principal))
        if direct:
            return Decision(True, direct)
        delegated = any(_names_account(s, request.principal) for s in resource_allows)
        if delegated and identity_allows:
            return Decision(
                True, identity_allows + tuple(s for s in resource_allows if _names_account(s, request.principal))
            )
        return Decision(False, missing="key" if not delegated else "identity")
    if identity_allows or resource_allows:
        return Decision(True, identity_allows + resource_allows)
    return Decision(False, missing="resource" if request.principal.is_service else "identity")


def _names_account(statement: Statement, principal: Principal) -> bool:
    block = statement.raw.get("Principal")
    if not isinstance(block, Mapping) or principal.is_service:
        return False
    return any(
        str(value) in (principal.account, f"arn:aws:iam::{principal.account}:root")
        for value in _as_list(block.get("AWS", []))
    )


def _names_directly(statement: Statement, principal: Principal) -> bool:
    """A key policy statement that admits the caller itself (not the account's IAM policies)."""
    block = statement.raw.get("Principal")
    if block == "*":
        return True
    if not isinstance(block, Mapping):
        return False
    if principal.is_service:
        return principal.service in [str(v) for v in _as_list(block.get("Service", []))]
    own = {principal.arn, *([principal.role_arn] if principal.role_arn else [])}
    return any(str(value) in own or value == "*" for value in _as_list(block.get("AWS", [])))


def all_statements(documents: Iterable[tuple[str, Any]]) -> list[Statement]:
    """The statements of several named documents."""
    return [s for source, document in documents for s in statements(document, source)]
