"""The cost model: each path an event takes, run on the embedded engine from the real template and
ASL, counted in billed units and priced from one data file (`onceflow cost`).

Names are imported on first use (PEP 562): `onceflow cost --mix` is checked without the engine's
imports (onceflow/devtools/cost/mix.py alone), as the command line is read."""

from __future__ import annotations

from importlib import import_module
from typing import Any

_HOMES = {
    "DEFAULT_MIX": "mix",
    "MixError": "mix",
    "parse_mix": "mix",
    "COMPONENTS": "model",
    "MODES": "model",
    "Cost": "model",
    "floor_cost": "model",
    "mix_cost": "model",
    "mode_cost": "model",
    "Prices": "prices",
    "load_prices": "prices",
    "CostRun": "run",
    "ModeRun": "run",
    "run_cost_model": "run",
    "template_at_revision": "run",
    "print_cost_run": "tables",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{home}"), name)
