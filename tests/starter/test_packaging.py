"""The Lambda code is self-contained (what `sam build` packages is all it needs) and its import
stays light."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STARTER = ROOT / "functions" / "starter"
# In the Lambda Python runtime (boto3, botocore and their jmespath), in requirements.txt
# (Powertools with its parser extra, which brings pydantic, and its validation extra, which brings
# fastjsonschema), in the Onceflow layer (onceflow_common), or the function's own packages (the
# domain's payload model in domain/).
PACKAGED = {
    "boto3",
    "botocore",
    "jmespath",
    "aws_lambda_powertools",
    "pydantic",
    "fastjsonschema",
    "onceflow_common",
    "starter",
    "domain",
    "app",
}


def top_level_imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_starter_imports_only_the_runtime_and_its_requirements():
    for path in STARTER.rglob("*.py"):
        foreign = top_level_imports(path) - PACKAGED - set(sys.stdlib_module_names)
        assert not foreign, f"{path.relative_to(ROOT)} imports {sorted(foreign)}: not packaged with the function"


def test_requirements_pin_the_powertools_the_tests_run():
    pinned = [line for line in (STARTER / "requirements.txt").read_text().splitlines() if line and line[0] != "#"]
    assert [line.split("==")[0] for line in pinned] == ["aws-lambda-powertools[parser,validation]"]
    assert f'"{pinned[0]}"' in (ROOT / "pyproject.toml").read_text()  # the version the tests run


def _probe(code: str) -> list[str]:
    """Run `code` in a fresh interpreter in the function's directory, as Lambda imports it."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "POWERTOOLS_"))}
    environment.update({"AWS_DEFAULT_REGION": "us-east-1", "PYTHONPATH": str(ROOT / "functions" / "common")})
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=STARTER, env=environment, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split("\n")


def test_handler_import_leaves_boto3_pydantic_models_and_clients_for_later():
    """What the first record needs is imported by it: the import stays light (benchmarks/starter_cold_start.py)."""
    heavy = (
        "boto3",
        "pydantic",
        "aws_xray_sdk",
        "aws_lambda_powertools.utilities.parser.models",
        "onceflow",
        "moto",
    )
    probe = f"import sys, app; from starter import clients; print(sorted(m for m in {heavy!r} if m in sys.modules)); print(clients.cached())"
    assert _probe(probe)[:2] == ["[]", "0"]


def test_no_tracer_in_the_function():
    """Lambda's active tracing (template: Tracing: Active) records the invocation without the X-Ray SDK."""
    for path in STARTER.rglob("*.py"):
        assert "Tracer" not in path.read_text(), path
