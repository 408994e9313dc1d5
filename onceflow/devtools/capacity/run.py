"""The modes a template can run in, each modelled with its own parameters."""

from __future__ import annotations

import re
from pathlib import Path

from onceflow.devtools.capacity.model import ModeCapacity, model_capacity
from onceflow.devtools.capacity.quotas import load_quotas
from onceflow.devtools.capacity.settings import read_capacity_settings
from onceflow.devtools.cost.prices import load_prices

MODES = ("STANDARD", "EXPRESS")
REGION_NAME = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d$")


class RegionError(ValueError):
    pass


def modes_of(template_path: Path) -> list[dict[str, str]]:
    """The parameter overrides of each mode the template supports (and each with a FIFO source,
    where the template has SourceQueueType)."""
    modes = [{"StateMachineType": mode} for mode in MODES]
    if "SourceQueueType:" in template_path.read_text():
        modes += [{"StateMachineType": mode, "SourceQueueType": "FIFO"} for mode in MODES]
    return modes


def capacity_for(
    template_path: Path,
    region: str = "us-east-1",
    parameters: dict[str, str] | None = None,
    active_groups: int | None = None,
) -> list[ModeCapacity]:
    if not REGION_NAME.match(region):
        raise RegionError(f"{region!r} is not an AWS region name (e.g. us-east-1)")
    quotas = load_quotas(region)
    assumed = load_prices().assumptions
    capacities = []
    modes = modes_of(template_path)
    for name in ("StateMachineType", "SourceQueueType"):
        if parameters and name in parameters:
            modes = [mode for mode in modes if mode.get(name, "STANDARD") == parameters[name]]
    for mode in modes:
        settings = read_capacity_settings(template_path, {**mode, **(parameters or {})})
        capacities.append(model_capacity(settings, quotas, assumed, active_groups))
    return capacities
