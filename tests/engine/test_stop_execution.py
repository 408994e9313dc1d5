"""StopExecution's effect is in the history when the status says ABORTED, whenever the stop comes.

AWS: StopExecution ends a running execution with an `ExecutionAborted` event carrying its error and
cause (https://docs.aws.amazon.com/step-functions/latest/apireference/API_StopExecution.html;
LocalStack's AWS-validated recording `tests/aws/services/stepfunctions/v2/test_sfn_api.snapshot.json`,
`test_stop_execution`: ExecutionStarted, WaitStateEntered, ExecutionAborted). moto's execution
thread had windows in which a stop lost that (onceflow/engine/stepfunctions/api/stop_execution.py); each
test here holds the thread in one of them, so the race happens every time, not one run in seven.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from moto.stepfunctions.parser.asl.component.eval_component import EvalComponent
from moto.stepfunctions.parser.asl.component.program.program import Program
from moto.stepfunctions.parser.backend.execution_worker import ExecutionWorker

from onceflow.ops.executions import ExecutionResult, wait_for
from tests.engine.harness import Account, single_state

pytestmark = pytest.mark.embedded_only(reason="holds the embedded engine's execution thread")

REASON = {"error": "Operator.Stopped", "cause": "stopped at once"}


def _stop_while_held(account: Account, monkeypatch: pytest.MonkeyPatch, *holds: tuple[Any, str]) -> ExecutionResult:
    """Start an execution, hold its thread as it enters the first of `holds` (owner, method) it
    reaches with the Program itself or the execution's worker, stop the execution there, let the
    thread go on, and wait for the execution's end."""
    state_machine = account.state_machine(single_state({"Type": "Pass"}))
    reached, released = threading.Event(), threading.Event()

    def holding(original: Any) -> Any:
        def held(self: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(self, (Program, ExecutionWorker)) and not reached.is_set():
                reached.set()
                assert released.wait(10)
            return original(self, *args, **kwargs)

        return held

    for owner, name in holds:
        monkeypatch.setattr(owner, name, holding(getattr(owner, name)))
    try:
        arn = account.start(state_machine, {})
        assert reached.wait(10)
        account.sfn.stop_execution(executionArn=arn, **REASON)
    finally:
        released.set()
    return wait_for(account.sfn, arn, timeout=10)


def test_a_stop_as_the_program_runs_its_first_state_is_in_the_history(
    account: Account, monkeypatch: pytest.MonkeyPatch
):
    """The program has set its first state, its thread has not begun it: moto's thread saw the
    stop, skipped the program's body and with it ExecutionAborted (ABORTED, no such event: the
    conformance test's failure one run in seven). Held where moto's thread checks (EvalComponent.eval)
    or where the engine's runs the body (Program._eval_body), whichever comes."""
    result = _stop_while_held(account, monkeypatch, (EvalComponent, "eval"), (Program, "_eval_body"))
    assert result.status == "ABORTED"
    assert [e["type"] for e in result.history] == ["ExecutionStarted", "ExecutionAborted"]
    assert result.history[-1]["executionAbortedEventDetails"] == REASON


def test_a_stop_before_the_program_begins_is_in_the_history(account: Account, monkeypatch: pytest.MonkeyPatch):
    """The thread has its environment but has not begun the program: moto's environment was not
    running yet, ignored the stop, and the execution SUCCEEDED."""
    result = _stop_while_held(account, monkeypatch, (Program, "eval"))
    assert result.status == "ABORTED"
    assert [e["type"] for e in result.history] == ["ExecutionStarted", "ExecutionAborted"]
    assert result.history[-1]["executionAbortedEventDetails"] == REASON


def test_a_stop_before_the_execution_thread_has_begun_is_in_the_history(
    account: Account, monkeypatch: pytest.MonkeyPatch
):
    """The thread has not made its environment: moto's StopExecution failed (an internal error the
    SDK retried); here the stop is kept and applied as the environment is made."""
    result = _stop_while_held(account, monkeypatch, (ExecutionWorker, "_get_evaluation_environment"))
    assert result.status == "ABORTED"
    assert [e["type"] for e in result.history] == ["ExecutionStarted", "ExecutionAborted"]
    assert result.history[-1]["executionAbortedEventDetails"] == REASON
    described = account.describe(result.arn)
    assert (described.get("error"), described.get("cause")) == (REASON["error"], REASON["cause"])


def test_a_stop_right_after_a_redrive_is_in_the_history(account: Account, monkeypatch: pytest.MonkeyPatch):
    """RedriveExecution runs the program again from the failed state on a thread of its own
    (engine/stepfunctions/api/redrive_execution.py): a stop before that thread begins the program's body ends the
    redriven execution ABORTED with ExecutionAborted after ExecutionRedriven, as for a first run
    (https://docs.aws.amazon.com/step-functions/latest/dg/redrive-executions.html: a redriven
    execution is stopped as any running one)."""
    state_machine = account.state_machine(single_state({"Type": "Fail", "Error": "Once", "Cause": "fails"}))
    arn = account.start(state_machine, {})
    assert wait_for(account.sfn, arn, timeout=10).status == "FAILED"
    reached, released = threading.Event(), threading.Event()

    def holding(original: Any) -> Any:
        def held(self: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(self, Program) and not reached.is_set():
                reached.set()
                assert released.wait(10)
            return original(self, *args, **kwargs)

        return held

    for owner, name in [(EvalComponent, "eval"), (Program, "_eval_body")]:
        monkeypatch.setattr(owner, name, holding(getattr(owner, name)))
    try:
        account.sfn.redrive_execution(executionArn=arn)
        assert reached.wait(10)
        account.sfn.stop_execution(executionArn=arn, **REASON)
    finally:
        released.set()
    result = wait_for(account.sfn, arn, timeout=10)

    assert result.status == "ABORTED"
    types = [e["type"] for e in result.history]
    assert types[types.index("ExecutionRedriven") :] == ["ExecutionRedriven", "ExecutionAborted"]
    assert result.history[-1]["executionAbortedEventDetails"] == REASON
