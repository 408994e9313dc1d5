"""No state holds a third copy of the payload (issue 8 §3).

Step Functions fails an execution with States.DataLimitExceeded, which no Catch handles, when a
state's input or output or a task's parameters exceed 256 KiB
(https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html, "Input or output size").
The execution input carries the payload twice (`payload`, `message.body`); every state must stay
within that plus a small, fixed overhead, on every path, so that an input the starter admits fits.
"""

from __future__ import annotations

from onceflow.local.faults import sns_publish_failures
from onceflow.ops.executions import ExecutionResult
from tests.statemachine.pipeline import ALREADY_SENT_PATH, CONFLICT, NEW_EVENT_PATH, PENDING_PATH
from tests.support import order, run_execution

OVERHEAD_BYTES = 2048  # cancellation cause, projected look-up, retry counter, error, notification id
BODY_FILLER = "x" * 60_000


def _largest(result: ExecutionResult) -> tuple[int, str]:
    sizes = []
    for event in result.history:
        for key, field in (
            ("stateEnteredEventDetails", "input"),
            ("stateExitedEventDetails", "output"),
            ("taskScheduledEventDetails", "parameters"),
        ):
            if key in event and event[key].get(field) is not None:
                sizes.append((len(event[key][field].encode()), f"{event['type']} {event[key].get('name', '')}"))
    return max(sizes)


def _input_size(result: ExecutionResult) -> int:
    [started] = [e for e in result.history if e["type"] == "ExecutionStarted"]
    return len(started["executionStartedEventDetails"]["input"].encode())


def test_no_state_is_larger_than_the_input_plus_a_fixed_overhead(stack, inbox):
    body = order("order-26", note=BODY_FILLER)
    with sns_publish_failures():
        pending = run_execution(stack, body, name="order-26-first")  # record, publish fails, dead-letter
    resumed = run_execution(stack, body, name="order-26-resumed")
    again = run_execution(stack, body, name="order-26-again")
    conflict = run_execution(stack, order("order-26", note=BODY_FILLER + "y"), name="order-26-conflict")
    fresh = run_execution(stack, order("order-27", note=BODY_FILLER), name="order-27-first")

    assert (resumed.path, again.path, fresh.path) == (PENDING_PATH, ALREADY_SENT_PATH, NEW_EVENT_PATH)
    assert CONFLICT in conflict.path
    for result in (pending, resumed, again, conflict, fresh):
        input_size = _input_size(result)
        assert input_size > 2 * len(BODY_FILLER), "the payload is in the input twice"
        size, where = _largest(result)
        assert size <= input_size + OVERHEAD_BYTES, (result.name, where, size, input_size)
