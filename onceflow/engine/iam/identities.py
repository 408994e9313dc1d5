"""Who a request comes from, by the access key it is signed with.

A key issued by STS AssumeRole (the embedded STS: functions' and the state machine's role
sessions, as Lambda and Step Functions assume their roles) is that role's session
(`arn:aws:sts::<account>:assumed-role/<role>/<session>`), whose identity policies are the role's. Any other key
(`testing`, the CLI's, the tests') is the account's own administrator: the user's client, allowed
everything. A session key the embedded STS no longer knows (it forgot everything on a reset) is
refused as AWS refuses an unknown token.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from moto.iam.models import iam_backends
from moto.sts.models import sts_backends

from onceflow.engine.iam.policy import Principal, Statement, all_statements

_CREDENTIAL = re.compile(r"Credential=([A-Z0-9]+)/")
SESSION_KEY_PREFIX = "ASIA"  # what STS's temporary keys begin with (moto's too)


class UnknownSession(Exception):
    """A session key nobody issued (or that a reset forgot)."""


def access_key_of(headers: Mapping[str, Any]) -> str | None:
    authorization = str(headers.get("Authorization") or headers.get("authorization") or "")
    match = _CREDENTIAL.search(authorization)
    return match.group(1) if match else None


def principal_of(headers: Mapping[str, Any], account: str) -> Principal | None:
    """The caller's principal; None for the account's administrator (not checked)."""
    key = access_key_of(headers)
    if key is None or not key.startswith(SESSION_KEY_PREFIX):
        return None
    session = sts_backends[account]["aws"].get_assumed_role_from_access_key(key)
    if session is None:
        raise UnknownSession(key)
    return Principal(arn=session.arn, account=account, role_arn=session.role_arn)


def identity_statements(principal: Principal) -> list[Statement]:
    """The role's inline and attached managed policies' statements."""
    if principal.role_arn is None:
        return []
    backend = iam_backends[principal.account]["aws"]
    role_name = principal.role_arn.rsplit("/", 1)[-1]
    try:
        role = backend.get_role(role_name)
    except Exception:  # the role is gone: nothing allows
        return []
    documents: list[tuple[str, Any]] = [(f"{role_name}/{name}", doc) for name, doc in role.policies.items()]
    for policy in role.managed_policies.values():
        default = next((v for v in policy.versions if v.is_default), None)
        documents.append((policy.arn, default.document if default is not None else None))
    return all_statements(documents)


def assume(account: str, role_arn: str, session_name: str, region: str = "us-east-1") -> dict[str, str]:
    """Credentials of a session of `role_arn`, issued by the embedded STS (as a service assumes a role)."""
    session = sts_backends[account]["aws"].assume_role(
        region_name=region,
        role_session_name=session_name,
        role_arn=role_arn,
        policy="",
        duration=43200,
        external_id="",
    )
    return {
        "aws_access_key_id": session.access_key_id,
        "aws_secret_access_key": session.secret_access_key,
        "aws_session_token": session.session_token,
    }
