"""An Express execution started with StartExecution has AWS's Express execution ARN:
`arn:<partition>:states:<region>:<account>:express:<state machine>:<name>:<id>` (moto 5.2.5 gave it a
Standard one, `...:execution:<state machine>:<name>`), in StartExecution's answer, in the context
object (`$$.Execution.Id`) and in the execution's logs.
https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html

AWS's recording: LocalStack's express/test_express_async.snapshot.json (test_base,
test_query_runtime_memory: `execution_arn` and `$$.Execution.Id` are `...:express:<machine>:<name>:<id>`).
Conformance test: tests/engine/test_conformance_api.py::test_a_logged_express_execution_writes_its_events_to_the_log_group.
StartSyncExecution's executions already have it (sync_execution.py).

An Express execution has no history on AWS: "This API action is not supported by EXPRESS state
machines" (API_ListExecutions, API_GetExecutionHistory, API_StopExecution; API_DescribeExecution:
"unless a Map Run dispatched them"). moto listed and described them as Standard ones. As AWS recorded
it (LocalStack's test_sfn_api_express.snapshot.json, test_start_async_describe_history_execution):
ListExecutions of an Express machine is `StateMachineTypeNotSupported`, "This operation is not
supported by this type of state machine"; DescribeExecution, StopExecution and GetExecutionHistory
of an Express execution ARN are `InvalidArn`, "Invalid Arn: 'Resource type not valid in this
context: express'". ListExecutions with a `mapRunArn` (a Map Run's children) stays allowed.
Conformance test: tests/engine/test_conformance_api.py::test_express_executions_are_not_listed_described_stopped_or_read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from moto.stepfunctions.exceptions import InvalidArn
from moto.stepfunctions.models import StepFunctionBackend
from moto.stepfunctions.parser.backend.execution import Execution
from moto.stepfunctions.responses import StepFunctionResponse
from moto.utilities.utils import ARN_PARTITION_REGEX

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import current
from onceflow.engine.stepfunctions.api import qualified_arns
from onceflow.engine.stepfunctions.api.sync_execution import StateMachineTypeNotSupported, express_execution_arn

Patch = tuple[Any, str, Any]


def moto_needs() -> list[Need]:
    return [
        need(Execution, "start"),
        need(StepFunctionBackend, "accepted_exec_arn_format"),
        need(StepFunctionResponse, "_get_param"),
        *(need(StepFunctionResponse, action) for action in (*_BY_EXECUTION_ARN, "list_executions")),
    ]


# The execution APIs AWS refuses for an Express execution ARN.
_BY_EXECUTION_ARN = ("describe_execution", "stop_execution", "get_execution_history")
_EXPRESS_ARN = re.compile(r"arn:[^:]+:states:[^:]*:[^:]*:express:")


# moto's accepted_exec_arn_format, with the Express form.
EXECUTION_ARN = re.compile(
    ARN_PARTITION_REGEX + r":states:[-0-9a-zA-Z]+:(?P<account_id>[0-9]{12}):(execution|express):.+"
)


def patches(before: Sequence[Patch]) -> list[Patch]:
    start = current(before, Execution, "start")

    def started(self: Execution) -> None:
        # moto sets the Execution's sm_type from an attribute its StateMachine leaves STANDARD; `type` is
        # the machine's own. Before the worker starts (it reads the ARN into the context object and the logs), and
        # before any look-up indexes the execution by its ARN (speedups/execution_index.py reads the list lazily).
        machine = getattr(self, "state_machine", None)
        if getattr(machine, "type", None) == "EXPRESS" and ":execution:" in (self.exec_arn or "") and machine:
            self.exec_arn = self.execution_arn = express_execution_arn(machine.arn, self.name)
        start(self)

    return [
        (Execution, "start", started),
        (StepFunctionBackend, "accepted_exec_arn_format", EXECUTION_ARN),
        *((StepFunctionResponse, action, _refusing_express_arn(before, action)) for action in _BY_EXECUTION_ARN),
        (StepFunctionResponse, "list_executions", _refusing_express_machine(before)),
    ]


def _refusing_express_arn(before: Sequence[Patch], action: str) -> Any:
    original = current(before, StepFunctionResponse, action)

    def refusing(self: StepFunctionResponse) -> Any:
        if _EXPRESS_ARN.match(self._get_param("executionArn") or ""):
            raise InvalidArn("Invalid Arn: 'Resource type not valid in this context: express'")
        return original(self)

    return refusing


def _refusing_express_machine(before: Sequence[Patch]) -> Any:
    original = current(before, StepFunctionResponse, "list_executions")

    def list_executions(self: StepFunctionResponse) -> Any:
        arn = self._get_param("stateMachineArn")
        if arn and not self._get_param("mapRunArn"):
            found = qualified_arns.resolve(self.stepfunction_backend, arn)
            machine = found[0] if found is not None else qualified_arns.machine(self.stepfunction_backend, arn)
            if getattr(machine, "type", None) == "EXPRESS":
                raise StateMachineTypeNotSupported("This operation is not supported by this type of state machine")
        return original(self)

    return list_executions
