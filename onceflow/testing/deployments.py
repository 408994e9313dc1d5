"""An app's stack on the embedded AWS, deployed once per set of template parameters and brought back
to just-deployed before every test (onceflow/engine/bookkeeping/baseline.py: executions forgotten, tables
and queues emptied, what a test created dropped), as this repository's own suite does: a deploy costs
about a second, a restore a few milliseconds.

One deployment is live at a time; the others are kept beside it (onceflow/engine/bookkeeping/worlds.py),
so a test with other parameters, or after a reset, brings its deployment back instead of deploying again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from onceflow.engine import ACCOUNT_ID, REGION, EmbeddedAws
from onceflow.engine.bookkeeping.worlds import Deployed
from onceflow.local.stack import LocalStack, deploy

STACK_NAME = "onceflow-test"


class Deployments:
    def __init__(self, aws: EmbeddedAws, template: Path):
        self.aws = aws
        self.template = template
        self._kept: dict[str, tuple[LocalStack, Deployed]] = {}
        self.deploys = 0  # how many times a stack was really deployed (the rest were restores)

    def fresh(self, parameters: dict[str, str]) -> LocalStack:
        """The stack with these parameters, as just deployed."""
        key = json.dumps(parameters, sort_keys=True)
        kept = self._kept.get(key)
        if kept is not None:
            stack, deployed = kept
            deployed.restore(self.aws.lock)
            self.aws.clock.reset()
            return stack
        self.aws.reset()
        stack = deploy(
            self.aws.endpoint_url, stack_name=STACK_NAME, parameter_overrides=parameters, template_path=self.template
        )
        self._kept[key] = (stack, Deployed.capture(self.aws.lock, ACCOUNT_ID, REGION))
        self.deploys += 1
        return stack


def plain_parameters(given: dict[str, Any]) -> list[str]:
    """KEY=VALUE items as the template takes them (True -> "true": CloudFormation's values are text)."""
    return [f"{key}={str(value).lower() if isinstance(value, bool) else value}" for key, value in given.items()]
