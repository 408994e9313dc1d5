"""`onceflow init`'s work: check what a new app is made from, then render the app template into an
empty folder through the cookiecutter library (the same rendering `sam init --location` does).

Every mistake is an InitError with one line naming the value and what is allowed, raised before
anything is written.
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from onceflow.app_template import location
from onceflow.app_template.hooks.post_gen_project import InitError, Inputs, check_inputs, parse_sample

__all__ = ["Example", "InitError", "Rendered", "examples", "render", "template_context"]


@dataclass(frozen=True)
class Example:
    """A shipped domain: its sample body and where its event_id is (examples/index.json)."""

    name: str
    description: str
    sample_text: str
    event_id_path: str
    group_by: str


def examples() -> dict[str, Example]:
    folder = files("onceflow.app_template").joinpath("examples")
    index: dict[str, Any] = json.loads(folder.joinpath("index.json").read_text(encoding="utf-8"))
    return {
        name: Example(
            name,
            entry["description"],
            folder.joinpath(entry["sample"]).read_text(encoding="utf-8"),
            entry["event_id_path"],
            entry.get("group_by", ""),
        )
        for name, entry in index.items()
    }


@dataclass(frozen=True)
class Rendered:
    path: Path
    inputs: Inputs


def _jinja_safe(sample_text: str) -> str:
    """The sample as compact JSON in which no `{{`, `{%` or `{#` opens a Jinja tag: cookiecutter renders
    every variable's value. Outside strings JSON never has those pairs (`{` is followed by `"` or `}`),
    so each one is in a string, where `\\u007b` is the same character."""
    compact = json.dumps(parse_sample(sample_text), ensure_ascii=False, separators=(", ", ": "))
    return re.sub(r"\{(?=[{%#])", r"\\u007b", compact)


def template_context(path: Path, values: dict[str, str]) -> dict[str, str]:
    """cookiecutter's extra context for an app in `path` (the project's folder is `path`'s name)."""
    from importlib.metadata import version

    return {
        # Every variable given: cookiecutter.json's defaults are the payments example's (what `sam init
        # --location` makes with --no-input); an empty one is worked out by the hook from the sample.
        "business_key": "",
        "group_by": "",
        "noun": "",
        "stack_name": "",
        **values,
        "project_name": values.get("project_name") or path.name,
        "project_slug": path.name,
        "sample_body": _jinja_safe(values["sample_body"]),
        "onceflow_version": version("onceflow"),
    }


def _check_target(path: Path) -> None:
    if path.is_file():
        raise InitError(f"{path}: a file; give a new or empty folder for the app")
    if path.is_dir() and any(path.iterdir()):
        count = sum(1 for _ in path.iterdir())
        raise InitError(
            f"{path}: not empty ({count} entries); onceflow init writes a new app into a new or empty folder"
        )
    if not path.name or path.name in (".", ".."):
        raise InitError(f"{path}: name the app's folder (its name is the project's)")


def render(path: Path, values: dict[str, str]) -> Rendered:
    """Write a new app into `path` (new or empty) from `values`: sample_body (JSON text), event_id_path,
    and optionally business_key, group_by, noun, project_name, stack_name."""
    path = path.expanduser().absolute()
    _check_target(path)
    context = template_context(path, values)
    inputs = check_inputs(context)
    import logging

    from cookiecutter.exceptions import CookiecutterException
    from cookiecutter.main import cookiecutter

    # cookiecutter logs a failed hook with its traceback; the InitError below is the one line to show.
    logging.getLogger("cookiecutter").setLevel(logging.CRITICAL)

    with tempfile.TemporaryDirectory(prefix="onceflow-init-") as scratch:
        # Its own replay and clone folders: nothing written to the user's home.
        config = {"cookiecutters_dir": f"{scratch}/templates", "replay_dir": f"{scratch}/replay"}
        try:
            made = cookiecutter(
                str(location()),
                no_input=True,
                extra_context=context,
                output_dir=str(path.parent),
                overwrite_if_exists=path.is_dir(),
                default_config=config,
            )
        except CookiecutterException as error:
            raise InitError(f"the app template could not be rendered: {error}") from None
    return Rendered(Path(made), inputs)
