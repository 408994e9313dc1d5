"""The `client_cache` and `in_process_integrations` speed-ups: the clients a Task's service integration
calls through.

- client_cache: one client per region, service, port and role; moto builds a new boto3 client (about
  9 ms of CPU) for every task it runs.
- in_process_integrations: the requests are handed to moto's backends in this process through moto's
  own BotocoreStubber (the request parsing, dispatch and error mapping `mock_aws` uses) instead of an
  HTTP round trip back into the embedded server; still one request at a time, under the server's
  request lock.
"""

from __future__ import annotations

import importlib
import os
import threading
from typing import Any

import boto3
from botocore.config import Config
from moto.core.botocore_stubber import BotocoreStubber
from moto.stepfunctions.parser.asl.component.state.exec.state_task import credentials as sfn_credentials
from moto.stepfunctions.parser.asl.utils import boto_client as sfn_boto_client

from onceflow.engine.bookkeeping.once_per_key import once_per_key
from onceflow.engine.iam import task_credentials
from onceflow.engine.moto_shape import Need, need
from onceflow.engine.speedups import (
    CLIENT_CACHE,
    DIRECT_INTEGRATIONS,
    HANDED_PARAMS,
    IN_PROCESS_INTEGRATIONS,
    SpeedupError,
    direct_integrations,
)

Patch = tuple[Any, str, Any]
# direct: with in-process only; handed: with direct only
SPEEDUPS = (CLIENT_CACHE, IN_PROCESS_INTEGRATIONS, DIRECT_INTEGRATIONS, HANDED_PARAMS)

INTEGRATION_MODULES = [
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_aws_sdk",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_dynamodb",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sns",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sqs",
]


def moto_needs() -> list[Need]:
    return [
        need(sfn_boto_client, "boto_client_for", "region", "service", "state_credentials"),
        need(sfn_credentials, "StateCredentials"),
        need(BotocoreStubber, "__call__", "event_name", "request"),
        need(BotocoreStubber, "process_request", "request"),
        *(need(importlib.import_module(name), "boto_client_for") for name in INTEGRATION_MODULES),
    ]


def patches(speedups: frozenset[str], request_lock: threading.RLock | None) -> list[Patch]:
    in_process = IN_PROCESS_INTEGRATIONS in speedups
    if in_process and request_lock is None:
        raise SpeedupError(f"{IN_PROCESS_INTEGRATIONS} needs the embedded server's request lock")
    return integration_clients(
        cached=CLIENT_CACHE in speedups,
        request_lock=request_lock if in_process else None,
        direct=DIRECT_INTEGRATIONS in speedups,
        handed=HANDED_PARAMS in speedups,
    )


class _LockedStubber(BotocoreStubber):
    """moto's BotocoreStubber (what mock_aws registers on botocore), taking the server's request lock."""

    def __init__(self, request_lock: threading.RLock):
        super().__init__()
        self.enabled = True
        self.request_lock = request_lock

    def __call__(self, event_name: str, request: Any, **kwargs: Any) -> Any:
        with self.request_lock:
            return super().__call__(event_name, request, **kwargs)


def _in_process_client(
    region: str, service: str, stubber: _LockedStubber, role_arn: str | None, direct: bool, handed: bool = False
) -> Any:
    """A client as moto's boto_client_for makes it under mock_aws: AWS's own endpoint, answered by the
    stubber; signed as the state machine's role (engine/iam/task_credentials.py). `direct`: its JSON
    and query calls answered before that (direct_integrations.py); `handed`: its JSON calls' parameters
    handed to moto without a body (handed_params.py)."""
    client = _CLIENT_SESSION.client(
        service,
        region_name=region,
        **task_credentials.for_role(role_arn),
        config=Config(
            parameter_validation=False,
            retries={"max_attempts": 0, "total_max_attempts": 1},
            # AWS_ENDPOINT_URL (set for the in-process starter) must not send these to the server.
            ignore_configured_endpoint_urls=True,
        ),
    )
    client.meta.events.register_first("before-send", stubber)
    if direct:
        direct_integrations.register(client, stubber.request_lock, handed)
    return client


_CLIENT_SESSION = boto3.session.Session()
_CLIENT_SESSION_LOCK = threading.Lock()  # botocore sessions are not safe to build clients on concurrently


def integration_clients(
    cached: bool, request_lock: threading.RLock | None, direct: bool = False, handed: bool = False
) -> list[Patch]:
    stubber = _LockedStubber(request_lock) if request_lock is not None else None

    def build(region: str, service: str, state_credentials: Any) -> Any:
        if stubber is None:
            return task_credentials.client_for(region, service, state_credentials)
        with _CLIENT_SESSION_LOCK:
            role_arn = task_credentials.role_of(state_credentials)
            return _in_process_client(region, service, stubber, role_arn, direct, handed and direct)

    @once_per_key
    def build_cached(region: str, service: str, port: str, role_arn: str | None) -> Any:
        # Signed as the task's role: one client per role.
        return build(region, service, sfn_credentials.StateCredentials(role_arn=role_arn) if role_arn else None)

    def boto_client_for(region: str, service: str, state_credentials: Any = None) -> Any:
        if not cached:
            return build(region, service, state_credentials)
        role_arn = getattr(state_credentials, "role_arn", None)
        return build_cached(region, service, os.environ.get("MOTO_PORT", "5000"), role_arn)

    return [(importlib.import_module(name), "boto_client_for", boto_client_for) for name in INTEGRATION_MODULES]
