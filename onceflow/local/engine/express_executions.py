"""An Express execution started with StartExecution has AWS's Express execution ARN:
`arn:<partition>:states:<region>:<account>:express:<state machine>:<name>:<id>` (moto 5.2.5 gave it a
Standard one, `...:execution:<state machine>:<name>`), in StartExecution's answer, in the context
object (`$$.Execution.Id`) and in the execution's logs.
https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html

AWS's recording: LocalStack's express/test_express_async.snapshot.json (test_base,
test_query_runtime_memory: `execution_arn` and `$$.Execution.Id` are `...:express:<machine>:<name>:<id>`).
Conformance test: tests/engine/test_conformance_api.py::test_a_logged_express_execution_writes_its_events_to_the_log_group.
StartSyncExecution's executions already have it (sync_execution.py). The execution APIs find an
execution by either form (moto's check of an execution ARN took `:execution:` only).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from moto.stepfunctions.models import StepFunctionBackend
from moto.stepfunctions.parser.backend.execution import Execution
from moto.utilities.utils import ARN_PARTITION_REGEX

from onceflow.local.engine import current
from onceflow.local.engine.shape import Need, need
from onceflow.local.engine.sync_execution import express_execution_arn

Patch = tuple[Any, str, Any]


def moto_needs() -> list[Need]:
    return [need(Execution, "start"), need(StepFunctionBackend, "accepted_exec_arn_format")]


# moto's accepted_exec_arn_format, with the Express form.
EXECUTION_ARN = re.compile(
    ARN_PARTITION_REGEX + r":states:[-0-9a-zA-Z]+:(?P<account_id>[0-9]{12}):(execution|express):.+"
)


def patches(before: Sequence[Patch]) -> list[Patch]:
    start = current(before, Execution, "start")

    def started(self: Execution) -> None:
        # moto sets the Execution's sm_type from an attribute its StateMachine leaves STANDARD; `type` is
        # the machine's own. Before the worker starts (it reads the ARN into the context object and the logs), and
        # before any look-up indexes the execution by its ARN (execution_index.py reads the list lazily).
        machine = getattr(self, "state_machine", None)
        if getattr(machine, "type", None) == "EXPRESS" and ":execution:" in (self.exec_arn or "") and machine:
            self.exec_arn = self.execution_arn = express_execution_arn(machine.arn, self.name)
        start(self)

    return [(Execution, "start", started), (StepFunctionBackend, "accepted_exec_arn_format", EXECUTION_ARN)]
