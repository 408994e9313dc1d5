"""The execution APIs answered as AWS answers them where moto 5.2.5 differs in ways a caller sees.

- unnamed_executions: StartExecution without `name` names the execution with a UUID (moto names it
  `None`: a second unnamed start fails with ExecutionAlreadyExists and `$$.Execution.Name` is null).
  https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html
  ("If you don't provide a name for the execution, Step Functions automatically generates a UUID").

Each has a conformance test in tests/engine/test_conformance.py citing the page (or the AWS
recording) it follows.
"""

from __future__ import annotations

import uuid
from typing import Any

from moto.stepfunctions.parser.models import StepFunctionsParserBackend

from onceflow.local.engine.shape import Need, need

Patch = tuple[Any, str, Any]


def moto_needs() -> list[Need]:
    return [
        need(
            StepFunctionsParserBackend,
            "start_execution",
            "state_machine_arn",
            "name",
            "execution_input",
            "trace_header",
        )
    ]


def patches() -> list[Patch]:
    return [*unnamed_executions()]


def unnamed_executions() -> list[Patch]:
    original = StepFunctionsParserBackend.start_execution

    def start_execution(
        self: StepFunctionsParserBackend,
        state_machine_arn: str,
        name: str | None = None,
        execution_input: str | None = None,
        trace_header: str | None = None,
    ) -> Any:
        return original(self, state_machine_arn, name or str(uuid.uuid4()), execution_input, trace_header)

    return [(StepFunctionsParserBackend, "start_execution", start_execution)]
