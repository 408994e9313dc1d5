"""The one data file of prices and stated assumptions (prices_us_east_1.json), read into typed values."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

# Package data (pyproject.toml), read through importlib.resources: found in a wheel install too.
PRICES_PATH: Traversable = files(__package__).joinpath("prices_us_east_1.json")


@dataclass(frozen=True)
class Assumptions:
    """What the model states instead of measuring (see the data file's note)."""

    aws_call_ms: dict[str, float]
    lambda_per_record_ms: float
    lambda_invocation_overhead_ms: float
    lambda_platform_log_bytes_per_invocation: int
    express_state_overhead_ms: float
    express_memory_mb: int
    sqs_messages_per_request: int

    def call_ms(self, service: str) -> float:
        return self.aws_call_ms.get(service, max(self.aws_call_ms.values()))


@dataclass(frozen=True)
class Prices:
    region: str
    as_of: str
    usd: dict[str, float]
    sources: dict[str, str]
    assumptions: Assumptions

    def __getitem__(self, name: str) -> float:
        return self.usd[name]

    def lambda_per_gb_second(self, architecture: str) -> float:
        return self.usd[f"lambda_{architecture.replace('-', '_')}_per_gb_second"]


def load_prices(path: Path | Traversable = PRICES_PATH) -> Prices:
    data: dict[str, Any] = json.loads(path.read_text())
    assumed = {key: value for key, value in data["assumptions"].items() if key != "note"}
    return Prices(
        region=data["region"],
        as_of=data["as_of"],
        usd={name: float(entry["usd"]) for name, entry in data["prices"].items()},
        sources={name: entry["source"] for name, entry in data["prices"].items()},
        assumptions=Assumptions(**assumed),
    )
