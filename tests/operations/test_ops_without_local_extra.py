"""onceflow.ops is what a production operator runs against AWS: it installs with the base
dependencies (boto3, rich, typer) and must import without moto or the SAM translator."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import onceflow.ops

BLOCK_LOCAL_EXTRA = """
import importlib.abc, sys
class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"moto", "samtranslator", "aws_lambda_powertools", "pydantic"}:
            raise ImportError(f"{name} is in the local extra, not a dependency of onceflow.ops")
        return None
sys.meta_path.insert(0, Refuse())
import importlib
for module in sys.argv[1:]:
    importlib.import_module(module)
print("imported", len(sys.argv) - 1)
"""


def test_every_ops_module_imports_without_the_local_extra() -> None:
    modules = ["onceflow.ops"] + [f"onceflow.ops.{m.name}" for m in pkgutil.iter_modules(onceflow.ops.__path__)]
    result = subprocess.run(
        [sys.executable, "-c", BLOCK_LOCAL_EXTRA, *modules], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"imported {len(modules)}"


def test_the_blocker_really_blocks() -> None:
    """The check above can fail: a module of the local stack is refused by the same blocker."""
    result = subprocess.run(
        [sys.executable, "-c", BLOCK_LOCAL_EXTRA, "onceflow.engine.server"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode != 0
    assert "is in the local extra" in result.stderr


def test_the_cli_and_status_import_without_boto3() -> None:
    """Every command's start pays its imports (issue 21: `status` under 1 s): boto3's resource layer
    and s3transfer cost about 30 ms, and a client needs botocore alone."""
    code = "import sys, onceflow.cli, onceflow.ops.status; print(sorted(m for m in sys.modules if m.split('.')[0] == 'boto3'))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
