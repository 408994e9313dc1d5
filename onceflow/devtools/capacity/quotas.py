"""The one data file of AWS's published quotas (quotas.json), dated, each with its source page."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

# Package data (pyproject.toml), read through importlib.resources: found in a wheel install too.
QUOTAS_PATH: Traversable = files(__package__).joinpath("quotas.json")


@dataclass(frozen=True)
class Quota:
    key: str
    title: str
    figures: dict[str, Any]  # this region's figures (bucket, refill_per_second, limit, ...)
    source: str
    throttled_as: str
    note: str = ""
    assumed: str = ""

    def __getitem__(self, name: str) -> Any:
        return self.figures[name]


@dataclass(frozen=True)
class Quotas:
    region: str
    large_region: bool
    as_of: str
    by_key: dict[str, Quota]

    def __getitem__(self, key: str) -> Quota:
        return self.by_key[key]


def load_quotas(region: str = "us-east-1", path: Path | Traversable = QUOTAS_PATH) -> Quotas:
    data: dict[str, Any] = json.loads(path.read_text())
    large = region in data["large_regions"]
    quotas = {}
    for key, entry in data["quotas"].items():
        if "by_region" in entry:
            figures = {"limit": entry["by_region"][region]} if region in entry["by_region"] else entry["other"]
        else:
            figures = entry["large" if large else "other"]
        quotas[key] = Quota(
            key=key,
            title=entry["title"],
            figures=dict(figures),
            source=entry["source"],
            throttled_as=entry["throttled_as"],
            note=entry.get("note", ""),
            assumed=entry.get("assumed", ""),
        )
    return Quotas(region=region, large_region=large, as_of=data["as_of"], by_key=quotas)
