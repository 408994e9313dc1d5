"""The check every conformance module makes of its BEHAVIOURS table (behaviour -> (AWS page, test))."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CHECK = "test_every_behaviour_names_an_aws_page_and_a_test"


def check_behaviours(behaviours: dict[str, tuple[str, str]], module_globals: dict[str, Any]) -> None:
    """Each behaviour names an AWS documentation page and a test that exists (here, or
    `path::name` in another module); each test of the module is one of the behaviours'."""
    here = {name for name in module_globals if name.startswith("test_")}
    for behaviour, (page, test) in behaviours.items():
        assert page.startswith("https://docs.aws.amazon.com/"), behaviour
        if "/" in test:  # another module, or one test of it
            module, _, name = test.partition("::")
            source = (ROOT / module).read_text()
            assert not name or f"def {name}(" in source, f"{behaviour}: no test named {test}"
        else:
            assert test in here, f"{behaviour}: no test named {test}"
    assert here - {CHECK} <= {test for _, test in behaviours.values()}, "a test here that BEHAVIOURS does not list"
