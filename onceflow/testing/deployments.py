"""An app's stack on the embedded AWS, deployed once per set of template parameters and brought back
to just-deployed before every test (onceflow/engine/bookkeeping/baseline.py: executions forgotten, tables
and queues emptied, what a test created dropped), as this repository's own suite does: a deploy costs
about a second, a restore a few milliseconds.

One deployment is live at a time: a test with other parameters resets the engine and deploys again,
so tests that share parameters (a module-level marker) run together cheaply.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from onceflow.engine import ACCOUNT_ID, REGION, EmbeddedAws
from onceflow.engine.bookkeeping.baseline import Baseline
from onceflow.local.stack import LocalStack, deploy

STACK_NAME = "onceflow-test"


@dataclass
class _Deployment:
    key: str
    stack: LocalStack
    baseline: Baseline
    generation: int  # EmbeddedAws.generation it was deployed in (a reset forgets it)


class Deployments:
    def __init__(self, aws: EmbeddedAws, template: Path):
        self.aws = aws
        self.template = template
        self._live: _Deployment | None = None
        self.deploys = 0  # how many times a stack was really deployed (the rest were restores)

    def fresh(self, parameters: dict[str, str]) -> LocalStack:
        """The stack with these parameters, as just deployed."""
        key = json.dumps(parameters, sort_keys=True)
        live = self._live
        if live is not None and live.key == key and live.generation == self.aws.generation:
            live.baseline.restore(self.aws.lock)
            self.aws.clock.reset()
            return live.stack
        self.aws.reset()
        stack = deploy(
            self.aws.endpoint_url, stack_name=STACK_NAME, parameter_overrides=parameters, template_path=self.template
        )
        baseline = Baseline.capture(self.aws.lock, ACCOUNT_ID, REGION)
        self._live = _Deployment(key, stack, baseline, self.aws.generation)
        self.deploys += 1
        return stack


def plain_parameters(given: dict[str, Any]) -> list[str]:
    """KEY=VALUE items as the template takes them (True -> "true": CloudFormation's values are text)."""
    return [f"{key}={str(value).lower() if isinstance(value, bool) else value}" for key, value in given.items()]
