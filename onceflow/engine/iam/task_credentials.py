"""The state machine's Task states call their services with a session of the state machine's role,
as Step Functions does (https://docs.aws.amazon.com/step-functions/latest/dg/procedure-create-iam-role.html):
moto hands every Task its execution's role ARN (`StateCredentials`) and then signs with fixed keys.

`client_for` builds the integration client as moto does, signed with a session of that role issued
by the embedded STS (one per role, named with 32 letters, as Step Functions names its sessions).
A role the embedded IAM does not have (a test's state machine made with a made-up role ARN) calls
as the account's admin: unchecked, the one place a call here is not made as on AWS, where such a
machine could not have been created. speedups/integration_clients.py builds its clients with the
same credentials; this module's patch is what runs when that speed-up is switched off.
"""

from __future__ import annotations

import importlib
import random
import string
import threading
from typing import Any

import boto3
from botocore.config import Config
from moto.iam.models import iam_backends
from moto.settings import moto_server_port
from moto.stepfunctions.parser.asl.utils import boto_client as sfn_boto_client

from onceflow.engine.iam import identities
from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import Patch

INTEGRATION_MODULES = [
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_aws_sdk",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_dynamodb",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sns",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sqs",
]
ADMIN = {"aws_access_key_id": "ak", "aws_secret_access_key": "sk"}  # moto's own keys: the account's admin
_sessions: dict[tuple[str, str], dict[str, str]] = {}  # (role ARN, role id) -> session credentials
_lock = threading.Lock()


def moto_needs() -> list[Need]:
    return [
        need(sfn_boto_client, "boto_client_for", "region", "service", "state_credentials"),
        *(need(importlib.import_module(name), "boto_client_for") for name in INTEGRATION_MODULES),
    ]


def for_role(role_arn: str | None) -> dict[str, str]:
    """Credentials of a session of `role_arn` (ADMIN when the embedded IAM has no such role)."""
    if not role_arn or role_arn.count(":") < 5:
        return ADMIN
    account = role_arn.split(":")[4]
    try:
        role = iam_backends[account]["aws"].get_role_by_arn(role_arn)
    except Exception:
        return ADMIN
    key = (role_arn, role.id)
    with _lock:
        if key not in _sessions:
            session_name = "".join(random.choices(string.ascii_letters, k=32))
            _sessions[key] = identities.assume(account, role_arn, session_name)
        return _sessions[key]


def role_of(state_credentials: Any) -> str | None:
    return getattr(state_credentials, "role_arn", None)


def client_for(region: str, service: str, state_credentials: Any = None) -> Any:
    """moto's boto_client_for (its endpoint and settings), signed as the Task's role."""
    return boto3.client(
        service,
        region_name=region,
        endpoint_url=f"http://localhost:{moto_server_port()}",
        config=Config(parameter_validation=False, retries={"max_attempts": 0, "total_max_attempts": 1}),
        **for_role(role_of(state_credentials)),
    )


def patches() -> list[Patch]:
    return [
        (sfn_boto_client, "boto_client_for", client_for),
        *((importlib.import_module(name), "boto_client_for", client_for) for name in INTEGRATION_MODULES),
    ]
