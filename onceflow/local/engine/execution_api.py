"""The execution APIs answered as AWS answers them where moto 5.2.5 differs in ways a caller sees.

- unnamed_executions: StartExecution without `name` names the execution with a UUID (moto names it
  `None`: a second unnamed start fails with ExecutionAlreadyExists and `$$.Execution.Name` is null).
  https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html
  ("If you don't provide a name for the execution, Step Functions automatically generates a UUID").

Each has a conformance test in tests/engine/test_conformance.py citing the page (or the AWS
recording) it follows.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Sequence
from typing import Any

from moto.stepfunctions.parser.models import StepFunctionsParserBackend

from onceflow.local.engine import current
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


def patches(before: Sequence[Patch] = ()) -> list[Patch]:
    """`before`: the patches listed ahead of these (they are applied together, after the list is
    built): a replacement of the same attribute there is the one wrapped."""
    return [*unnamed_executions(before)]


def unnamed_executions(before: Sequence[Patch]) -> list[Patch]:
    # The mocked integrations' `arn#TestCase` wrapper (mocking/moto_engine.py) is the one wrapped.
    original = current(before, StepFunctionsParserBackend, "start_execution")

    def start_execution(
        self: StepFunctionsParserBackend,
        state_machine_arn: str,
        name: str | None = None,
        execution_input: str | None = None,
        trace_header: str | None = None,
    ) -> Any:
        return original(self, state_machine_arn, name or str(uuid.uuid4()), execution_input, trace_header)

    # Keeps what the wrapped function carries (the mocked integrations' mark: mocking.is_enabled()).
    functools.update_wrapper(start_execution, original)

    return [(StepFunctionsParserBackend, "start_execution", start_execution)]
