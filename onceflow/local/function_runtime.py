"""Run the real starter handler (functions/starter) in this process, as Lambda would."""

from __future__ import annotations

import functools
import importlib
import os
import sys
import uuid
from dataclasses import dataclass, field
from typing import IO, Any

from onceflow.local.stack import LocalStack


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


class StarterRuntime:
    """Loads the handler named in template.yaml with the environment the template gives it.

    The environment is process-wide (as in a Lambda sandbox): one local stack per process.
    """

    def __init__(
        self, stack: LocalStack, extra_environment: dict[str, str] | None = None, log_stream: IO[str] | None = None
    ):
        self.stack = stack
        environment = {
            **stack.starter_environment,
            "AWS_ENDPOINT_URL": stack.endpoint_url,
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_LAMBDA_FUNCTION_NAME": stack.outputs.get("StarterFunctionName", "starter"),
            # No X-Ray daemon locally: tracing off. Metrics (EMF) go to the log stream, if one is given.
            "POWERTOOLS_TRACE_DISABLED": "true",
            **(extra_environment or {}),
        }
        os.environ.update(environment)
        code_dir = str(stack.starter_code_dir)
        if code_dir not in sys.path:
            sys.path.insert(0, code_dir)
        module_name, _, function_name = stack.starter_handler.rpartition(".")
        self.module = importlib.import_module(module_name)
        if hasattr(self.module, "reset_clients"):
            self.module.reset_clients()
        self.handler = getattr(self.module, function_name)
        if log_stream is not None:
            self._redirect_logs(log_stream)
        self.invocations = 0

    def _redirect_logs(self, stream: IO[str]) -> None:
        """Logs and EMF metrics to `stream`, as Lambda sends both to CloudWatch Logs."""
        logger = getattr(self.module, "logger", None)
        if logger is not None:
            # Not setStream(): it flushes the previous stream, which an earlier run may have closed.
            logger.registered_handler.stream = stream
        # Powertools prints EMF with the builtin print(); give its module a print bound to the stream.
        from aws_lambda_powertools.metrics.provider.cloudwatch_emf import cloudwatch

        cloudwatch.print = functools.partial(print, file=stream)  # type: ignore[attr-defined]

    def invoke(self, event: dict[str, Any]) -> dict[str, Any]:
        self.invocations += 1
        context = LambdaContext(
            function_name=os.environ["AWS_LAMBDA_FUNCTION_NAME"], timeout_seconds=self.stack.starter_timeout
        )
        return self.handler(event, context)
