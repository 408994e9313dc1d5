"""The cookiecutter template of a new Onceflow app, and the shipped domains' examples.

`onceflow init` renders it through the cookiecutter library (onceflow.app_template.render), and SAM
users render the same folder with `sam init --location "$(onceflow init --location)" --no-input
--extra-context '{...}'`. Its skeleton (template.yaml, statemachine/, functions/) is this
repository's own app, linked in the repository and carried as files by the wheel; its
`hooks/post_gen_project.py` makes the skeleton the new app's own.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


class TemplateNotOnDisk(RuntimeError):
    """The package is installed where its files are no folder (a zip): cookiecutter needs a folder."""


def location() -> Path:
    """The template's folder: what `sam init --location` takes."""
    folder = files(__name__)
    if not isinstance(folder, Path):
        raise TemplateNotOnDisk(f"the app template is inside {folder}, not a folder: install onceflow unzipped")
    return folder
