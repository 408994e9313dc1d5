"""The worst case of every retry and backoff on any one path of the workflow fits in its TimeoutSeconds.

An execution that runs out of time ends TIMED_OUT mid-path (the safety net and the reconciler then
dead-letter it): the budgets must be chosen so that retrying alone never gets there. The record loop
re-enters `Record event and business item`, and a Task's retriers start again on each entry
(https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html), so the loop's
rounds are counted in full. The same definition runs as EXPRESS, whose executions last at most five
minutes (https://docs.aws.amazon.com/step-functions/latest/dg/concepts-standard-vs-express.html).
"""

from __future__ import annotations

import re

from tests.static.asl_paths import Document, load, longest, task_worst_attempts, task_worst_delay

RECORD = "Record event and business item"
RECORD_AGAIN = "Record again?"
START_COUNTING = "Start counting record retries"
COUNT_RETRY = "Count record retry"
BACK_OFF = "Back off before recording again"
EXPRESS_MAX_SECONDS = 300
# Time a single service call may take on top of its retry delays (p99 of a DynamoDB, SNS or SQS call
# is tens of milliseconds; one second each is the margin the budget keeps).
SECONDS_PER_CALL = 1.0
LOOP_BACK = frozenset({(BACK_OFF, RECORD)})


def _delay(name: str, state: Document) -> float:
    if state["Type"] == "Wait":
        # The loop's Wait is priced per round below; any other Wait must be a literal.
        return 0 if name == BACK_OFF else state["Seconds"]
    return task_worst_delay(state)


def _attempts(name: str, state: Document) -> float:
    return task_worst_attempts(state)


def _record_loop(definition: Document) -> tuple[int, list[int]]:
    """The loop's bound and its per-round backoff ceilings, as the ASL states them."""
    states = definition["States"]
    [_, bounded] = states[RECORD_AGAIN]["Choices"]
    ceilings = states[START_COUNTING]["Result"]["ceilings_seconds"]
    return int(bounded["NumericLessThan"]), ceilings


def worst_case(definition: Document) -> tuple[float, float]:
    """(total retry and backoff delay, service calls) on the costliest path, the record loop taken to its bound."""
    rounds, ceilings = _record_loop(definition)
    start = definition["StartAt"]
    delay = longest(definition, start, _delay, LOOP_BACK)
    delay += rounds * longest(definition, RECORD, _delay, LOOP_BACK, end=BACK_OFF) + sum(ceilings[:rounds])
    calls = longest(definition, start, _attempts, LOOP_BACK)
    calls += rounds * longest(definition, RECORD, _attempts, LOOP_BACK, end=BACK_OFF)
    return delay, calls


def test_the_loop_waits_at_most_its_ceilings():
    """The budget prices each round at its ceiling; that holds only if the wait is drawn from it."""
    states = load()["States"]
    rounds, ceilings = _record_loop(load())
    assert len(ceilings) >= rounds, "a round without a ceiling would index past the table"
    assert states[BACK_OFF]["SecondsPath"] == "$.record_retries.delay_seconds"
    delay = states[COUNT_RETRY]["Parameters"]["delay_seconds.$"]
    assert re.fullmatch(
        r"States\.MathRandom\(0, States\.ArrayGetItem\(\$\.record_retries\.ceilings_seconds, \$\.record_retries\.count\)\)",
        delay,
    ), "full jitter: a random whole number of seconds from 0 to this round's ceiling"
    assert states[START_COUNTING]["Result"]["count"] == 0
    assert states[COUNT_RETRY]["Parameters"]["count.$"] == "States.MathAdd($.record_retries.count, 1)"
    assert ceilings == sorted(ceilings), "exponential: the ceilings grow"


def test_worst_case_retry_budget_fits_the_execution_timeout_with_margin():
    definition = load()
    delay, calls = worst_case(definition)

    assert definition["TimeoutSeconds"] == 300
    assert definition["TimeoutSeconds"] <= EXPRESS_MAX_SECONDS
    assert (delay, calls) == (192, 65), "the budgets changed: re-check them against TimeoutSeconds, then update"
    assert delay + calls * SECONDS_PER_CALL <= definition["TimeoutSeconds"]


def test_the_budget_sees_a_retrier_grow(tmp_path):
    """The computation must react to the ASL: a Publish retrier allowed 20 attempts breaks the budget."""
    definition = load()
    definition["States"]["Publish notification"]["Retry"][0].update(MaxAttempts=20, MaxDelaySeconds=60)

    delay, calls = worst_case(definition)

    assert delay + calls * SECONDS_PER_CALL > definition["TimeoutSeconds"]


def test_the_budget_counts_every_round_of_the_record_loop():
    definition = load()
    base_delay, _ = worst_case(definition)
    definition["States"][RECORD_AGAIN]["Choices"][1]["NumericLessThan"] = 3

    fewer_rounds, _ = worst_case(definition)

    # Two rounds fewer: two times Record's and the look-up's retries, and the two largest ceilings.
    assert base_delay - fewer_rounds == 2 * (7 + 7) + 8 + 16
