"""A payments app rendered once per session from the app template (what `onceflow init --example
payments` writes), for the tests that read it, check it with the tools and run its own tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from onceflow.app_template.render import Rendered, examples, render
from tests.static.conftest import sam_cli  # noqa: F401 (a fixture: sam from .venv-sam, or skipped/failed as there)


def payments_values(**changes: str) -> dict[str, str]:
    example = examples()["payments"]
    values = {
        "sample_body": example.sample_text,
        "event_id_path": example.event_id_path,
        "group_by": example.group_by,
        "project_name": "payments",
    }
    return {**values, **changes}


@pytest.fixture(scope="session")
def payments_app(tmp_path_factory: pytest.TempPathFactory) -> Rendered:
    return render(tmp_path_factory.mktemp("adoption") / "payments-app", payments_values())


@pytest.fixture(scope="session")
def payments_root(payments_app: Rendered) -> Path:
    return payments_app.path
