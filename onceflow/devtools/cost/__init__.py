"""The cost model: each path an event takes, run on the embedded engine from the real template and
ASL, counted in billed units and priced from one data file (`onceflow cost`)."""

from onceflow.devtools.cost.mix import DEFAULT_MIX, MixError, parse_mix
from onceflow.devtools.cost.model import COMPONENTS, MODES, Cost, floor_cost, mix_cost, mode_cost
from onceflow.devtools.cost.prices import Prices, load_prices
from onceflow.devtools.cost.run import CostRun, ModeRun, run_cost_model, template_at_revision
from onceflow.devtools.cost.tables import print_cost_run

__all__ = [
    "COMPONENTS",
    "DEFAULT_MIX",
    "MODES",
    "Cost",
    "CostRun",
    "MixError",
    "ModeRun",
    "Prices",
    "floor_cost",
    "load_prices",
    "mix_cost",
    "mode_cost",
    "parse_mix",
    "print_cost_run",
    "run_cost_model",
    "template_at_revision",
]
