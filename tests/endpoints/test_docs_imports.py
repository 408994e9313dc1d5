"""What docs/TESTING.md tells a reader to import exists: its code and command lines name real
modules and names (its `deploy_external` example imported from a module that no longer had it)."""

from __future__ import annotations

import importlib
import re

from onceflow.local.template import PROJECT_ROOT

IMPORT = re.compile(r"from (onceflow(?:\.\w+)+) import (\w+(?:, \w+)*)")


def test_every_import_the_testing_guide_shows_resolves():
    text = (PROJECT_ROOT / "docs" / "TESTING.md").read_text()
    shown = [(module, name) for module, names in IMPORT.findall(text) for name in names.split(", ")]

    assert ("onceflow.devtools.external_stack", "deploy_external") in shown
    missing = [f"{module}.{name}" for module, name in shown if not hasattr(importlib.import_module(module), name)]
    assert missing == []
