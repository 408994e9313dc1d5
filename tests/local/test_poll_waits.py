"""A poll shortened in a test still lets the work it polls for happen (issue 37).

The starter's FIFO STANDARD wait polls DescribeExecution (starter/executions.py `wait_for_execution`,
`poll_sleep` between polls). Tests used to replace that sleep with one that returned at once: the
polls then ran back to back and took the interpreter lock and the request lock from the
execution's own thread, which on a fresh stack (a file run alone, the execution's thread still
building its first clients) made a file of 18 tests take 879 s and fail twice. The fixture
`starter_polls_wait_on_the_engine` (tests/conftest.py) waits on the embedded engine instead:
`DelayClock.poll_sleep` returns when an execution ended, or after the poll's own delay.
"""

from __future__ import annotations

import threading
from typing import Any

from onceflow.engine import EmbeddedAws
from onceflow.local.faults import sns_publish_failures
from onceflow.local.stack import LocalStack
from starter import executions
from tests.support import RetryHold, execution_input, order

POLLS_WHILE_HELD = 3


class CountedPolls:
    """A Step Functions client whose DescribeExecution calls are counted; `polled` is set once the
    POLLS_WHILE_HELD-th has answered (set before it answered, the release it triggers could let the
    execution end before that poll read it, and the wait would need no further poll)."""

    def __init__(self, sfn: Any):
        self._sfn = sfn
        self.calls = 0
        self.polled = threading.Event()

    def describe_execution(self, **kwargs: Any) -> dict[str, Any]:
        self.calls += 1
        answer = self._sfn.describe_execution(**kwargs)
        if self.calls == POLLS_WHILE_HELD:
            self.polled.set()
        return answer


def test_the_starters_wait_polls_a_held_execution_at_its_pace_and_is_woken_by_its_end(
    stack: LocalStack, embedded_aws: EmbeddedAws, starter_polls_wait_on_the_engine: None, monkeypatch
):
    """Fails with the polls unpaced (a `poll_sleep` that returns at once): they then run back to
    back the whole time the execution is held and finishing, dozens to thousands of them."""
    hold = RetryHold()
    monkeypatch.setattr(embedded_aws.clock, "sleep", hold.sleep)  # the execution waits at Publish's retry
    sfn = stack.client("stepfunctions")
    with sns_publish_failures(times=1):
        arn = sfn.start_execution(
            stateMachineArn=stack.state_machine_arn, name="held", input=execution_input(order("order-held"))
        )["executionArn"]
        hold.wait_until_reached()
        polls = CountedPolls(sfn)
        waited: list[executions.Handover] = []
        waiting = threading.Thread(
            target=lambda: waited.append(
                executions.wait_for_execution(
                    polls, executions.Handover("held", "started", arn), stack.state_machine_arn, 60, lambda: 300.0
                )
            )
        )
        waiting.start()
        try:
            assert polls.polled.wait(timeout=10), "the wait polls a held execution now and then"
        finally:
            hold.released.set()
        waiting.join(timeout=30)

    assert [handover.outcome for handover in waited] == ["finished"]
    # POLLS_WHILE_HELD polls, at 0, 0.1 and 0.25 s of the hold (the poll's delays, since no execution
    # ended), then the one the execution's end woke; one more if the end came after the next delay.
    assert POLLS_WHILE_HELD < polls.calls <= POLLS_WHILE_HELD + 2, polls.calls
