"""Orders of the worked example with varied customers and amounts, for the tests of its example
subscriber (loyalty per customer). The tooling makes its bodies from the domain's sample
(onceflow.domain); these are the worked example's own."""

from __future__ import annotations

import random
import secrets
from typing import Any


def new_run_id() -> str:
    """A short tag that makes a run's order ids its own (6 hex digits)."""
    return secrets.token_hex(3)


def order_id(index: int, run_id: str | None = None) -> str:
    return f"order-{run_id}-{index:05d}" if run_id else f"order-{index:05d}"


def make_orders(count: int, rng: random.Random, run_id: str | None = None) -> list[dict[str, Any]]:
    """`count` orders drawn from `rng`; ids `order-<run_id>-00000…` (or `order-00000…` without a run id)."""
    return [
        {
            "order_id": order_id(i, run_id),
            "customer_id": f"customer-{rng.randrange(1, 200):03d}",
            "amount": round(rng.uniform(5, 500), 2),
            "currency": rng.choice(["EUR", "USD", "GBP"]),
            "items": [{"sku": f"sku-{rng.randrange(1000)}", "quantity": rng.randrange(1, 4)}],
        }
        for i in range(count)
    ]
