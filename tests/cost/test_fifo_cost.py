"""A FIFO source in `onceflow cost`: SQS requests at the FIFO price (dated, sourced in the prices
file), and a STANDARD workflow's starter paying for its wait on the starter's own poll schedule."""

from __future__ import annotations

import dataclasses

from onceflow.devtools.cost.model import Usage, cost, fifo_wait_ms
from onceflow.devtools.cost.prices import load_prices
from onceflow.devtools.cost.settings import CostSettings

PRICES = load_prices()
STANDARD_SOURCE = CostSettings(256, "arm64", 10, "STANDARD", "ERROR", False)
FIFO_SOURCE = dataclasses.replace(STANDARD_SOURCE, source_queue_type="FIFO")
USAGE = Usage(3, 1, 100, 3.0, 1.0, 1, 1.2, 0.1, 40.0, 0, 100.0)


def test_fifo_requests_are_priced_as_fifo_requests_with_their_source():
    """https://aws.amazon.com/sqs/pricing/: FIFO requests $0.50 per million, standard $0.40."""
    assert PRICES["sqs_fifo_per_request"] == 0.0000005 and PRICES["sqs_per_request"] == 0.0000004
    standard, fifo = cost(USAGE, STANDARD_SOURCE, PRICES, "STANDARD"), cost(USAGE, FIFO_SOURCE, PRICES, "STANDARD")
    assert fifo.parts["SQS"] == USAGE.sqs_requests * 0.0000005
    assert fifo.parts["SQS"] > standard.parts["SQS"]
    assert {k: v for k, v in fifo.parts.items() if k != "SQS"} == {
        k: v for k, v in standard.parts.items() if k != "SQS"
    }


def test_the_wait_follows_the_starters_poll_schedule():
    latency = PRICES.assumptions.aws_call_ms["stepfunctions"]
    waited, polls = fifo_wait_ms(0, PRICES)
    assert (waited, polls) == (100 + latency, 1)  # the first poll after 0.1 s already sees it ended
    waited, polls = fifo_wait_ms(500, PRICES)
    assert waited >= 500 and polls == 3  # 100, +150, +225 ms (and each call's latency)
    waited, polls = fifo_wait_ms(10_000, PRICES)
    assert waited >= 10_000 and polls <= 14  # at most 1 s apart once grown
