"""The capacity model: the sustained events/s each mode takes in a region, from the template's
parameters and AWS's published quotas (one dated data file), and what binds first (`onceflow capacity`)."""

from onceflow.devtools.capacity.model import (
    PATHS,
    DefinitionMismatch,
    Limit,
    ModeCapacity,
    model_capacity,
    sized_maximum_concurrency,
)
from onceflow.devtools.capacity.quotas import Quota, Quotas, load_quotas
from onceflow.devtools.capacity.run import RegionError, capacity_for, modes_of
from onceflow.devtools.capacity.settings import CapacitySettings, read_capacity_settings
from onceflow.devtools.capacity.tables import print_capacity

__all__ = [
    "PATHS",
    "CapacitySettings",
    "DefinitionMismatch",
    "Limit",
    "ModeCapacity",
    "Quota",
    "Quotas",
    "RegionError",
    "capacity_for",
    "load_quotas",
    "model_capacity",
    "modes_of",
    "print_capacity",
    "read_capacity_settings",
    "sized_maximum_concurrency",
]
