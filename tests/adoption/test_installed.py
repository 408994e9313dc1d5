"""What a command reads at run time is package data (found with importlib.resources, carried by the
wheel) or the app's own files, never something beside the package's source: an installed onceflow
works in any folder. The wheel itself is built and used by CI's `adoption` section (.ci/run)."""

from __future__ import annotations

import ast
import glob
import shutil
import subprocess
import tomllib
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

import pytest

from onceflow.app_template import location
from onceflow.app_template.render import Rendered
from onceflow.devtools.capacity.quotas import QUOTAS_PATH, load_quotas
from onceflow.devtools.cost.prices import PRICES_PATH, load_prices
from onceflow.devtools.cost.run import template_at_revision

ROOT = Path(__file__).resolve().parents[2]


def _package_data() -> dict[str, list[str]]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]


def _packaged(package: str) -> set[Path]:
    """The files setuptools puts in the wheel as the package's data: its patterns globbed as setuptools
    globs them (glob.glob, recursive, following links), Python caches left out."""
    folder = Path(str(files(package)))
    found = {
        Path(path)
        for pattern in _package_data().get(package, [])
        for path in glob.glob(str(folder / pattern), recursive=True)
        if Path(path).is_file()
    }
    return {path for path in found if "__pycache__" not in path.parts}


@pytest.mark.parametrize(
    ("table", "package", "load"),
    [(PRICES_PATH, "onceflow.devtools.cost", load_prices), (QUOTAS_PATH, "onceflow.devtools.capacity", load_quotas)],
    ids=["prices", "quotas"],
)
def test_the_price_and_quota_tables_are_package_data(table: Traversable, package: str, load) -> None:
    assert Path(str(table)) in _packaged(package)
    assert load()  # read through importlib.resources


def test_every_file_of_the_app_template_is_package_data() -> None:
    """A file added to the template (its skeleton is the repository's app, through links) reaches the
    wheel: everything below the template's folder, but its Python modules (packaged as modules)."""
    template = location()
    every = {
        Path(path)
        for path in glob.glob(str(template / "**" / "*"), recursive=True, include_hidden=True)
        if Path(path).is_file() and "__pycache__" not in Path(path).parts
    }
    modules = {template / "__init__.py", template / "render.py", template / "hooks/__init__.py"}
    modules.add(template / "hooks/post_gen_project.py")
    missing = sorted(str(p.relative_to(template)) for p in every - modules - _packaged("onceflow.app_template"))
    assert not missing
    assert (template / "{{cookiecutter.project_slug}}/functions/starter/starter/messages.py") in every


def _commit_all(repo: Path, message: str) -> None:
    for command in (["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message]):
        subprocess.run(["git", *command], cwd=repo, check=True, capture_output=True)


def test_cost_at_a_revision_reads_the_git_repository_the_template_is_in(payments_app: Rendered, tmp_path: Path) -> None:
    repo = tmp_path / "team-repo"
    app = repo / "apps/payments"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    shutil.copytree(payments_app.path, app)
    _commit_all(repo, "the app")
    committed = (app / "template.yaml").read_text()
    (app / "template.yaml").write_text(committed.replace("Default: 35", "Default: 40"))
    with template_at_revision("HEAD", app / "template.yaml") as exported:
        assert exported.read_text() == committed
        assert (exported.parent / "statemachine/pipeline.asl.json").is_file()
        assert (exported.parent / "functions/starter/domain/payment.schema.json").is_file()


def test_cost_at_a_revision_outside_git_says_so(payments_app: Rendered) -> None:
    with (
        pytest.raises(ValueError, match="is not in a git repository"),
        template_at_revision("HEAD", payments_app.path / "template.yaml"),
    ):
        pass


def _names_in(path: Path) -> set[str]:
    return {node.id for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.Name)}


def test_no_command_falls_back_on_the_packages_own_template() -> None:
    """start and demo take `--template` (./template.yaml by default); every command must."""
    assert not {"TEMPLATE_PATH", "PROJECT_ROOT"} & _names_in(ROOT / "onceflow/cli.py")


@pytest.mark.parametrize("command", ["cost", "capacity"])
def test_cost_and_capacity_outside_an_app_say_where_the_template_is_looked_for(command: str, tmp_path: Path) -> None:
    import sys

    console_script = Path(sys.executable).with_name("onceflow")
    done = subprocess.run([str(console_script), command], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line == (
        f"onceflow {command}: Invalid value for '--template': template.yaml: no template.yaml there; "
        "run in your app's folder or pass --template PATH"
    )
