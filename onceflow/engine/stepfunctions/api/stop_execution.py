"""StopExecution's effect is in the history when the status says ABORTED, however early it comes.

On AWS, StopExecution of a running execution ends it with an `ExecutionAborted` event carrying the
error and cause, and DescribeExecution reports ABORTED only with that event in the history
(https://docs.aws.amazon.com/step-functions/latest/apireference/API_StopExecution.html; LocalStack's
AWS-validated recording `tests/aws/services/stepfunctions/v2/test_sfn_api.snapshot.json`,
`test_stop_execution`: ExecutionStarted, WaitStateEntered, ExecutionAborted). moto runs an execution on a thread
of its own, and a stop that came before that thread had begun the program went wrong in three
ways:

- before the thread made its environment: StopExecution failed (`None.set_stop`, an internal
  error the SDK retries until the thread has gone further);
- after it, but before the program set its first state: the environment was not "running" yet, so
  the stop was ignored and the execution ran on to SUCCEEDED;
- after that, but before the program's own thread checked that it was running: the program skipped
  its body ("Pruning"), and with it the `ExecutionAborted` event, so the execution ended ABORTED
  with no such event (issue 21: one run in seven of a conformance test on a busy machine).

Here an environment is running from the moment it is made, a stop that comes before it is kept
and applied as it is made (the stop and the making share a lock), and the program always runs its
body, which runs no state once stopped and records the end (ExecutionAborted) itself.
"""

from __future__ import annotations

import threading
from contextlib import suppress
from typing import Any

from moto.stepfunctions.parser import utils as parser_utils
from moto.stepfunctions.parser.asl.component.program import program as program_module
from moto.stepfunctions.parser.asl.eval.environment import Environment
from moto.stepfunctions.parser.asl.eval.program_state import ProgramRunning
from moto.stepfunctions.parser.backend import execution_worker

Patch = tuple[Any, str, Any]
_PENDING_STOP = "_onceflow_pending_stop"
# One lock for every worker: held only to make an environment or to stop one, both short.
# Reentrant: a second embedded AWS in the process (the demo beside the test session's) wraps the
# already-patched environment maker again, which then takes the lock inside itself.
_LOCK = threading.RLock()


def moto_needs() -> list[Any]:
    from onceflow.engine.moto_shape import need

    return [
        need(program_module.Program, "eval", "env"),
        need(program_module.Program, "_eval_body", "env"),
        need(program_module.Program, "__init__", "start_at", "timeout_seconds"),
        need(parser_utils, "TMP_THREADS"),
        need(Environment, "next_state_name"),
        need(Environment, "set_stop", "stop_date", "cause", "error"),
        need(Environment, "set_timed_out"),
        need(Environment, "is_frame"),
        need(execution_worker.ExecutionWorker, "_get_evaluation_environment"),
        need(execution_worker.ExecutionWorker, "stop", "stop_date", "error", "cause"),
        need(execution_worker.ExecutionWorker, "_execution_logic"),
    ]


def patches() -> list[Patch]:
    original_eval = program_module.Program.eval
    original_environment = execution_worker.ExecutionWorker._get_evaluation_environment

    def eval(self: Any, env: Any) -> None:
        """moto's Program.eval (StartAt, then the body on a thread joined for TimeoutSeconds), with
        the body run even when a stop came first."""
        if env.is_frame():
            original_eval(self, env)
            return
        timeout = self.timeout_seconds.timeout_seconds if self.timeout_seconds else None
        with suppress(RuntimeError):  # stopped already: no state runs, the body records ExecutionAborted
            env.next_state_name = self.start_at.start_at_name
        body = threading.Thread(target=self._eval_body, args=(env,), daemon=True)
        parser_utils.TMP_THREADS.append(body)
        body.start()
        body.join(timeout=timeout)
        if body.is_alive():
            env.set_timed_out()

    def get_evaluation_environment(self: Any) -> Any:
        with _LOCK:
            env = original_environment(self)
            env._program_state = ProgramRunning()  # as the first state will set it: a stop now stops it
            self.env = env  # moto sets it again on return; a stop from now on reaches it
            pending = self.__dict__.pop(_PENDING_STOP, None)
            if pending is not None:
                env.set_stop(**pending)
        return env

    def stop(self: Any, stop_date: Any, error: str | None, cause: str | None) -> None:
        with _LOCK:
            if self.env is None:
                self.__dict__[_PENDING_STOP] = {"stop_date": stop_date, "error": error, "cause": cause}
                return
            self.env.set_stop(stop_date=stop_date, cause=cause, error=error)

    return [
        (program_module.Program, "eval", eval),
        (execution_worker.ExecutionWorker, "_get_evaluation_environment", get_evaluation_environment),
        (execution_worker.ExecutionWorker, "stop", stop),
    ]
