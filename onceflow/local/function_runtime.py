"""Run a function of template.yaml (functions/<name>) in this process, as Lambda would.

The handler's code directory and its layers' directories go on sys.path (Lambda puts a Python
layer's content on the path too), the environment is the one the template gives the function,
and the handler module is loaded under a name of its own per function, since every function's
handler file is called `app.py`.

A module is loaded once per process, while every deploy reads template.yaml and the state machine
from disk again: if the function's code changed on disk since it was loaded (a merge or checkout
during a long test run), the process would run the old code against the new template and
definition, and its failures would look like the pipeline's. Loading it again then refuses, saying so.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
import uuid
from dataclasses import dataclass, field
from types import ModuleType
from typing import IO, Any

from onceflow.engine import REGION
from onceflow.local import function_credentials, process_environment
from onceflow.local.stack import LocalFunction, LocalStack


@dataclass
class LambdaContext:
    """The parts of the Lambda context object that Powertools reads."""

    function_name: str
    timeout_seconds: int
    memory_limit_in_mb: int = 256
    function_version: str = "$LATEST"
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    invoked_function_arn: str = ""
    log_group_name: str = ""
    log_stream_name: str = "local"

    def get_remaining_time_in_millis(self) -> int:
        return self.timeout_seconds * 1000


class FunctionLoadError(RuntimeError):
    pass


# The code each loaded handler module was loaded from: (path, size, mtime) of every Python file.
Stamp = tuple[tuple[str, int, int], ...]
_loaded_from: dict[str, Stamp] = {}


def source_stamp(function: LocalFunction) -> Stamp:
    """The function's code as it is on disk now (its code directory and its layers)."""
    files = sorted(path for directory in (function.code_dir, *function.layer_dirs) for path in directory.rglob("*.py"))
    return tuple((str(path), (stat := path.stat()).st_size, stat.st_mtime_ns) for path in files)


def put_code_on_path(function: LocalFunction) -> None:
    """The function's code directory and its layers' on sys.path, as Lambda puts them."""
    for directory in (function.code_dir, *function.layer_dirs):
        if str(directory) not in sys.path:
            sys.path.insert(0, str(directory))


def _load_handler_module(function: LocalFunction) -> ModuleType:
    put_code_on_path(function)
    module_file, _, _ = function.handler.rpartition(".")
    unique_name = f"onceflow_function_{function.code_dir.name}_{module_file}"
    stamp = source_stamp(function)
    if unique_name in sys.modules:
        if _loaded_from.get(unique_name, stamp) != stamp:
            raise FunctionLoadError(
                f"{function.logical_id}: the code in {function.code_dir} or its layers changed on disk since this "
                "process loaded it; restart the process (it would run the old code against the template and "
                "state machine deployed from the new files)"
            )
        return sys.modules[unique_name]
    path = function.code_dir / (module_file.replace(".", "/") + ".py")
    spec = importlib.util.spec_from_file_location(unique_name, path)
    if spec is None or spec.loader is None:
        raise FunctionLoadError(f"{function.logical_id}: cannot load handler module {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[unique_name] = module
    _loaded_from[unique_name] = stamp
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[unique_name]
        raise
    return module


# Variables that describe an app rather than a deployment: an earlier app's (in this process, or the
# process that started this one) would be read by the next app's starter as its own.
APP_VARIABLES = frozenset(
    {"PAYLOAD_MODEL", "PAYLOAD_SCHEMA", "PAYLOAD_EVENT_ID_PATH", "EVENT_ID_PATH", "TALLY_KEY_PATH"}
)
_set_by_functions: set[str] = set()


def _forget_other_apps_variables(stack: LocalStack) -> None:
    """Drop the variables an earlier stack's functions set that no function of this stack sets (its
    own stay, so its functions running side by side never lose one another's)."""
    own = {name for function in stack.functions.values() for name in function.environment}
    for name in (_set_by_functions | APP_VARIABLES) - own:
        os.environ.pop(name, None)
    _set_by_functions.update(own)


class FunctionRuntime:
    """Loads the handler named in template.yaml with the environment the template gives it.

    The environment is process-wide (as in a Lambda sandbox): the functions of one local stack
    share it, which works because the template gives the variables they have in common the same
    values; each invocation sets its function's variables again. Its credentials are a session of
    its execution role (function_credentials.py), present during its invocations only.
    """

    def __init__(
        self,
        stack: LocalStack,
        logical_id: str,
        extra_environment: dict[str, str] | None = None,
        log_stream: IO[str] | None = None,
    ):
        self.stack = stack
        self.function = stack.functions[logical_id]
        self.environment = {
            **self.function.environment,
            "AWS_ENDPOINT_URL": stack.endpoint_url,
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_LAMBDA_FUNCTION_NAME": self.function.name,
            # No X-Ray daemon locally: tracing off. Metrics (EMF) go to the log stream, if one is given.
            "POWERTOOLS_TRACE_DISABLED": "true",
            **(extra_environment or {}),
        }
        # Lambda's session of the function's execution role (None: a stack without roles, external endpoints).
        self.credentials = (
            function_credentials.role_session(stack, self.function.role_arn, self.function.name)
            if self.function.role_arn
            else None
        )
        process_environment.install()  # before this process's functions change os.environ
        _forget_other_apps_variables(stack)
        os.environ.update(self.environment)
        self.module = _load_handler_module(self.function)
        # A new runtime starts as a new Lambda sandbox does: without the clients an earlier one
        # cached. A warm client carries state of its own (botocore's retry quota: an earlier run's
        # throttled retries left later calls unretried), besides an endpoint and a role session.
        if hasattr(self.module, "reset_clients"):
            self.module.reset_clients()
        self.handler = getattr(self.module, self.function.handler.rpartition(".")[2])
        self._direct_logs(log_stream)
        self.invocations = 0

    def _direct_logs(self, stream: IO[str] | None) -> None:
        """Logs and EMF metrics to `stream`, as Lambda sends both to CloudWatch Logs; None: to standard
        output. Both are the process's (the handler module's logger, Powertools' metrics module), so
        each runtime sets them: one left pointing at an earlier run's stream, closed since (a demo's
        starter.log), made every metrics flush raise and so crashed every later batch."""
        logger = getattr(self.module, "logger", None)
        if logger is not None:
            # Not setStream(): it flushes the previous stream, which an earlier run may have closed.
            logger.registered_handler.stream = stream if stream is not None else sys.stdout
        # Powertools prints EMF with the builtin print(); give its module a print bound to the stream.
        from aws_lambda_powertools.metrics.provider.cloudwatch_emf import cloudwatch

        if stream is not None:
            cloudwatch.print = functools.partial(print, file=stream)  # type: ignore[attr-defined]
        else:
            vars(cloudwatch).pop("print", None)  # the builtin again: whatever sys.stdout is when it prints

    def invoke(self, event: dict[str, Any]) -> Any:
        self.invocations += 1
        os.environ.update(self.environment)
        context = LambdaContext(function_name=self.function.name, timeout_seconds=self.function.timeout)
        with function_credentials.invoking(self.credentials):
            return self.handler(event, context)

    def client(self, service: str) -> Any:
        """A client with the function's role session: what Lambda calls with on the function's behalf
        (its SQS event source polling, its failed asynchronous invocations' dead letters)."""
        if self.credentials is None:
            return self.stack.client(service)
        return role_client(
            self.stack.service_endpoints.get(service, self.stack.endpoint_url), service, self.credentials
        )


@functools.cache
def _role_client(endpoint_url: str, service: str, key: str, secret: str, token: str) -> Any:
    import boto3

    return boto3.session.Session().client(
        service,
        endpoint_url=endpoint_url,
        region_name=REGION,
        aws_access_key_id=key,
        aws_secret_access_key=secret,
        aws_session_token=token,
    )


def role_client(endpoint_url: str, service: str, credentials: dict[str, str]) -> Any:
    return _role_client(
        endpoint_url,
        service,
        credentials["aws_access_key_id"],
        credentials["aws_secret_access_key"],
        credentials["aws_session_token"],
    )


class StarterRuntime(FunctionRuntime):
    """The function behind the SQS event source."""

    def __init__(
        self, stack: LocalStack, extra_environment: dict[str, str] | None = None, log_stream: IO[str] | None = None
    ):
        starter = next(f for f in stack.functions.values() if f.code_dir == stack.starter_code_dir)
        super().__init__(stack, starter.logical_id, extra_environment, log_stream)
