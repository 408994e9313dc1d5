"""Run every path on the embedded engine, in each mode the template can run, and price it."""

from __future__ import annotations

import logging
import subprocess
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

from onceflow.devtools.cost.measure import Bench, Measurement
from onceflow.devtools.cost.model import MODES, Cost, floor_cost, mix_cost, mode_cost
from onceflow.devtools.cost.paths import PATHS, PathSpec
from onceflow.devtools.cost.prices import Prices, load_prices
from onceflow.devtools.cost.recorder import STARTER
from onceflow.devtools.cost.settings import CostSettings, read_settings
from onceflow.engine import EmbeddedAws
from onceflow.local.template import TEMPLATE_PATH

# What a template needs next to it: its ASL files and the functions' code (CodeUri, DefinitionUri).
_TEMPLATE_TREE = ("template.yaml", "statemachine", "functions")


@dataclass(frozen=True)
class ModeRun:
    mode: str
    settings: CostSettings
    measurements: dict[str, Measurement]
    # Why the mode's figures are modelled from the STANDARD run instead of measured, if they are.
    modelled_because: str | None = None


@dataclass(frozen=True)
class CostRun:
    template: str
    prices: Prices
    runs: dict[str, ModeRun]

    def path_cost(self, mode: str, path: str) -> Cost:
        run = self.runs[mode]
        return mode_cost(run.measurements[path], run.settings, self.prices, mode)

    def floor(self, path: str) -> Cost:
        run = self.runs["STANDARD"]
        return floor_cost(run.measurements[path], run.settings, self.prices)

    def mix(self, mode: str | None, mix: dict[str, float]) -> Cost:
        paths = self.runs["STANDARD"].measurements
        costs = {path: self.floor(path) if mode is None else self.path_cost(mode, path) for path in paths}
        return mix_cost(costs, mix)


@contextmanager
def template_at_revision(revision: str, template: Path = Path("template.yaml")) -> Iterator[Path]:
    """The app of `template` (its template.yaml, ASL and functions' code) as it was at a git revision of
    the repository the template is in, in a temporary directory. ValueError when git cannot say."""
    folder = template.absolute().parent
    prefix = _git(folder, "rev-parse", "--show-prefix").strip()  # the app's folder inside its repository
    top = Path(_git(folder, "rev-parse", "--show-toplevel").strip())
    names = [f"{prefix}{name}" for name in _TEMPLATE_TREE]
    archive = subprocess.run(
        ["git", "archive", "--format=tar", revision, *names], cwd=top, capture_output=True, check=False
    )
    if archive.returncode != 0:
        raise ValueError(f"cannot read {revision!r} from git in {folder}: {archive.stderr.decode().strip()}")
    with tempfile.TemporaryDirectory(prefix="onceflow-cost-") as directory:
        with tarfile.open(fileobj=BytesIO(archive.stdout)) as tar:
            tar.extractall(directory, filter="data")
        yield Path(directory) / prefix / "template.yaml"


def _git(folder: Path, *arguments: str) -> str:
    try:
        done = subprocess.run(["git", *arguments], cwd=folder, capture_output=True, text=True, check=False)
    except OSError as error:  # no git, or the folder is gone
        raise ValueError(f"git cannot run in {folder}: {error.strerror or error}") from None
    if done.returncode != 0:
        raise ValueError(f"{folder} is not in a git repository: {done.stderr.strip()}")
    return done.stdout


def _measure_all(
    aws: EmbeddedAws, template_path: Path, parameters: dict[str, str], paths: tuple[PathSpec, ...]
) -> dict[str, Measurement]:
    bench = Bench(aws, template_path, parameters)
    measurements: dict[str, Measurement] = {}
    for spec in paths:
        bench.fresh()
        measurements[spec.key] = spec.run(bench)
    return measurements


def _express_runs_synchronously(measurements: dict[str, Measurement]) -> str | None:
    """None if the EXPRESS run went as designed (StartSyncExecution, executions seen), else why not."""
    new = measurements["new"]
    actions = {call.action for call in new.calls_by(STARTER)}
    if "StartSyncExecution" not in actions:
        return f"the starter called {sorted(actions)} on EXPRESS, not StartSyncExecution"
    if not new.executions or new.executions[0].status != "SUCCEEDED":
        return "the engine showed no succeeded synchronous execution for a new event"
    return None


def run_cost_model(
    template_path: Path = TEMPLATE_PATH,
    parameters: dict[str, str] | None = None,
    paths: tuple[PathSpec, ...] = PATHS,
    progress: Callable[[str], None] = lambda _: None,
) -> CostRun:
    logging.getLogger("moto").setLevel(logging.CRITICAL)
    logging.getLogger("samtranslator").setLevel(logging.ERROR)
    parameters = dict(parameters or {})
    prices = load_prices()
    runs: dict[str, ModeRun] = {}
    with EmbeddedAws(time_scale=0.0) as aws:
        for mode in MODES:
            mode_parameters = {**parameters, "StateMachineType": mode}
            settings = read_settings(template_path, mode_parameters)
            progress(f"{mode}: running {len(paths)} paths")
            try:
                measurements = _measure_all(aws, template_path, mode_parameters, paths)
                reason = None if mode == "STANDARD" else _express_runs_synchronously(measurements)
            except Exception as error:
                if mode == "STANDARD":
                    raise
                reason = f"the EXPRESS run failed: {type(error).__name__}: {str(error).splitlines()[0][:160]}"
            if reason is not None:
                runs[mode] = ModeRun(mode, settings, runs["STANDARD"].measurements, modelled_because=reason)
            else:
                runs[mode] = ModeRun(mode, settings, measurements)
    return CostRun(str(template_path), prices, runs)


def per_million(costs: dict[str, Cost]) -> dict[str, float]:
    return {name: cost.per_million() for name, cost in costs.items()}


__all__ = ["MODES", "CostRun", "ModeRun", "run_cost_model", "template_at_revision"]
