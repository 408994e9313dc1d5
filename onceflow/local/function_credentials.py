"""The credentials a function runs with, as Lambda gives them: a session of its execution role.

Lambda assumes the function's role and hands the session to the function in AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN
(https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime),
the session named after the function (`arn:aws:sts::<account>:assumed-role/<role>/<function>`).
Here the embedded STS issues that session (AssumeRole, as the account's admin), and:

- during an invocation the three variables hold the function's session, and the user's own values
  come back when no invocation runs (the tests, the CLI and the pipeline stay the account's admin);
- every function of a local stack runs in this one process, so boto3's default session (which
  keeps the first credentials it read) is replaced by `InvocationSession`: a client made by
  `boto3.client()` during an invocation carries the invoking function's session (a context
  variable, which the starter's record threads copy; a thread that does not copy it reads the
  variables above), any other the default session's own credentials.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from collections.abc import Iterator
from typing import Any

import boto3

from onceflow.local import process_environment

Credentials = dict[str, str]  # boto3's aws_access_key_id, aws_secret_access_key, aws_session_token
ENVIRONMENT = {
    "aws_access_key_id": "AWS_ACCESS_KEY_ID",
    "aws_secret_access_key": "AWS_SECRET_ACCESS_KEY",
    "aws_session_token": "AWS_SESSION_TOKEN",
}

_invoking: contextvars.ContextVar[Credentials | None] = contextvars.ContextVar(
    "onceflow_function_credentials", default=None
)
_lock = threading.Lock()
_running = 0
_saved: dict[str, str | None] = {}
_issued: dict[tuple[str, str, str], Credentials] = {}  # (endpoint, role, session) -> credentials


def role_session(stack: Any, role_arn: str, session_name: str) -> Credentials:
    """A session of `role_arn` from the stack's STS (the account's admin assumes it, as Lambda does)."""
    key = (stack.endpoint_url, role_arn, session_name)
    if key not in _issued:
        issued = stack.client("sts").assume_role(RoleArn=role_arn, RoleSessionName=session_name[:64])["Credentials"]
        _issued[key] = {
            "aws_access_key_id": issued["AccessKeyId"],
            "aws_secret_access_key": issued["SecretAccessKey"],
            "aws_session_token": issued["SessionToken"],
        }
    return _issued[key]


def forget(endpoint_url: str) -> None:
    """Sessions of an endpoint that was reset (its STS forgot them)."""
    for key in [k for k in _issued if k[0] == endpoint_url]:
        del _issued[key]


def as_environment(credentials: Credentials) -> dict[str, str]:
    return {ENVIRONMENT[name]: value for name, value in credentials.items()}


class InvocationSession:
    """boto3's default session, giving a client made during an invocation that function's session."""

    def __init__(self, base: Any):
        self.base = base

    def _with_credentials(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        if kwargs.get("aws_access_key_id"):
            return kwargs
        credentials = _invoking.get()
        if credentials is None and _running:
            variables = {name: os.environ.get(variable) for name, variable in ENVIRONMENT.items()}
            if all(variables.values()):
                credentials = {name: str(value) for name, value in variables.items()}
        return {**kwargs, **credentials} if credentials else kwargs

    def client(self, *args: Any, **kwargs: Any) -> Any:
        return self.base.client(*args, **self._with_credentials(kwargs))

    def resource(self, *args: Any, **kwargs: Any) -> Any:
        return self.base.resource(*args, **self._with_credentials(kwargs))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.base, name)


def install() -> None:
    """Put InvocationSession in front of boto3's default session (once; again if someone replaced it),
    and make os.environ's whole reads survive the variables set and unset here (process_environment.py)."""
    process_environment.install()
    with _lock:
        current = boto3.DEFAULT_SESSION
        if not isinstance(current, InvocationSession):
            boto3.DEFAULT_SESSION = InvocationSession(current or boto3.session.Session())  # type: ignore[assignment]


@contextlib.contextmanager
def invoking(credentials: Credentials | None) -> Iterator[None]:
    """While a function runs: its session in the context and in the three variables."""
    global _running
    if credentials is None:
        yield
        return
    install()
    with _lock:
        if _running == 0:
            _saved.clear()
            _saved.update({variable: os.environ.get(variable) for variable in ENVIRONMENT.values()})
        _running += 1
        os.environ.update(as_environment(credentials))
    token = _invoking.set(credentials)
    try:
        yield
    finally:
        _invoking.reset(token)
        with _lock:
            _running -= 1
            if _running == 0:
                for variable, value in _saved.items():
                    if value is None:
                        os.environ.pop(variable, None)
                    else:
                        os.environ[variable] = value
