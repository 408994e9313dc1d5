"""The subscriber is self-contained: what `sam build` packages (its folder, its requirements, the
Onceflow layer) is all it imports."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.starter.test_packaging import top_level_imports

ROOT = Path(__file__).resolve().parents[2]
SUBSCRIBER = ROOT / "functions" / "subscriber"
# The Lambda Python runtime (boto3, botocore), requirements.txt (Powertools) and the layer (onceflow_common).
PACKAGED = {"boto3", "botocore", "aws_lambda_powertools", "onceflow_common", "onceflow_subscriber", "app"}


def test_subscriber_imports_only_the_runtime_its_requirements_and_the_layer():
    for path in SUBSCRIBER.rglob("*.py"):
        foreign = top_level_imports(path) - PACKAGED - set(sys.stdlib_module_names)
        assert not foreign, f"{path.relative_to(ROOT)} imports {sorted(foreign)}: not packaged with the function"


def test_requirements_pin_the_powertools_the_tests_run():
    pinned = [line for line in (SUBSCRIBER / "requirements.txt").read_text().splitlines() if line and line[0] != "#"]
    assert pinned == ["aws-lambda-powertools==3.37.0"]
    assert "aws-lambda-powertools[parser,validation]==3.37.0" in (ROOT / "pyproject.toml").read_text()
