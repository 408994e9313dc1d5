"""Checks of the values the `onceflow` commands take, each refusal one line naming the value.

Paths are checked when the command line is read, before anything slow starts: a file to read
(it exists, is a file, can be read), a file to write (not a folder, its folder can be made and
written in: tried, since permission bits do not tell root or /proc apart), a folder to write in.
A git revision is asked of git itself. Each check is a typer callback (`callback=...`) whose
`kind` attribute says what it checks; the bad-values test walks every option by that kind
(tests/local/test_bad_values.py).
"""

from __future__ import annotations

import errno
import math
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

Check = Callable[[typer.Context, typer.CallbackParam, Any], Any]

# CloudFormation's stack name: a letter, then letters, digits and hyphens, at most 128 characters
# (https://docs.aws.amazon.com/AWSCloudFormation/latest/APIReference/API_CreateStack.html).
STACK_NAME = re.compile(r"[A-Za-z][-A-Za-z0-9]{0,127}")
PACKAGE_ROOT = Path(__file__).resolve().parents[1]  # the checkout `--revision` reads from, when it is one


def _given(ctx: typer.Context, param: typer.CallbackParam) -> bool:
    """Whether the user gave the value (option or environment), not the default."""
    source = ctx.get_parameter_source(param.name) if param.name else None
    return source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT")


def _why(error: OSError) -> str:
    return (error.strerror or str(error)).lower() if error.errno != errno.EACCES else "permission denied"


def _a_file_above(path: Path) -> Path | None:
    """The first part of `path` that exists as a file although a folder is needed below it."""
    for parent in reversed(path.parents):
        if parent.exists() and not parent.is_dir():
            return parent
    return None


def _nearest_existing(path: Path) -> Path:
    for parent in path.parents:
        if parent.exists():
            return parent
    return Path(path.anchor or ".")


def _try_writing_in(folder: Path) -> str | None:
    """Why a file cannot be created in `folder`, or None: a probe file made and removed at once."""
    probe = folder / f".onceflow-probe-{os.getpid()}"
    try:
        os.close(os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except OSError as error:  # /proc and the like answer "no such file" to a new name
        return "files cannot be created there" if error.errno == errno.ENOENT else _why(error)
    probe.unlink(missing_ok=True)
    return None


def read_problem(path: Path, what: str = "file") -> str | None:
    """Why `path` cannot be read as a file, or None."""
    file_above = _a_file_above(path)
    if file_above is not None:
        return f"{file_above} is a file, not a folder"
    if path.is_dir():
        inside = path / "template.yaml"
        hint = f" (did you mean {inside}?)" if what == "template" and inside.is_file() else ""
        return f"a folder, not a {what}{hint}"
    if not path.exists():
        return f"no such {what}"
    try:
        with path.open("rb") as opened:
            data = opened.read() if what == "template" else opened.read(1)
    except OSError as error:
        return f"cannot be read ({_why(error)})"
    return _template_problem(path, data) if what == "template" else None


def _template_problem(path: Path, data: bytes) -> str | None:
    """Why the text is no SAM or CloudFormation template, in one line, or None."""
    from onceflow.domain.template_yaml import read_template

    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "not UTF-8 text (a template is YAML)"
    try:
        template = read_template(path)
    except ValueError as error:
        said = " ".join(str(error).removeprefix(f"{path}: ").split())
        said = re.sub(r' in "<unicode string>", (line \d+, column \d+).*', r" at \1", said)
        return said if said.startswith("not a") else f"not a template: {said}"
    except OSError as error:
        return f"cannot be read ({_why(error)})"
    if not isinstance(template.get("Resources"), dict):
        return "not a SAM or CloudFormation template (it has no Resources)"
    return None


def write_problem(path: Path, example: str) -> str | None:
    """Why a file cannot be written at `path` (made with its folders), or None."""
    file_above = _a_file_above(path)
    if file_above is not None:
        return f"{file_above} is a file, not a folder"
    if path.is_dir():
        return f"a folder: give a file name, e.g. {path / example}"
    if path.exists():
        try:
            with path.open("ab"):
                pass
        except OSError as error:
            return f"cannot be written ({_why(error)})"
        return None
    folder = _nearest_existing(path)
    why = _try_writing_in(folder)
    return None if why is None else f"cannot write in {folder} ({why})"


def folder_problem(path: Path) -> str | None:
    """Why `path` cannot be (made and) written in as a folder, or None."""
    file_above = _a_file_above(path)
    if file_above is not None:
        return f"{file_above} is a file, not a folder"
    if path.exists() and not path.is_dir():
        return "a file, not a folder (give a folder: it is made if missing)"
    folder = path if path.is_dir() else _nearest_existing(path)
    why = _try_writing_in(folder)
    return None if why is None else f"cannot write in {folder} ({why})"


def refusing(kind: str, problem_of: Callable[[str], str | None], given_only: bool = False) -> Check:
    """A typer callback refusing a value `problem_of` finds a problem with, in one line naming it;
    `kind` is what the bad-values test walks it as. `given_only`: a default is left to the command."""

    def check(ctx: typer.Context, param: typer.CallbackParam, value: Any) -> Any:
        if value is None or (given_only and not _given(ctx, param)):
            return value
        problem = problem_of(str(value))
        if problem:
            raise typer.BadParameter(f"{str(value)!r}: {problem}")
        return value

    check.kind = kind  # type: ignore[attr-defined]
    return check


def input_file(what: str = "file") -> Check:
    """A file to read; checked only when given (a command tells a missing default its own way)."""
    kind = "template" if what == "template" else "input-file"
    return refusing(kind, lambda value: read_problem(Path(value).expanduser(), what), given_only=True)


def output_file(example: str) -> Check:
    """A file to write (its folders are made): refused when it is a folder or cannot be written."""
    return refusing("output-file", lambda value: write_problem(Path(value).expanduser(), example))


def output_folder(command_tells_a_file: bool = False) -> Check:
    """A folder to make and write in. `command_tells_a_file`: the command refuses an existing file
    in its own words (init); this refuses only a folder that cannot be made or written in."""

    def problem(value: str) -> str | None:
        path = Path(value).expanduser()
        if command_tells_a_file and path.is_file():
            return None
        return folder_problem(path)

    return refusing("output-folder", problem)


def revision_problem(revision: str, root: Path = PACKAGE_ROOT) -> str | None:
    """Why git cannot give `revision` of the checkout at `root`, or None."""
    if not revision or revision.startswith("-"):
        return "a git revision: a branch, a tag or a commit (e.g. HEAD~1, main)"
    try:
        found = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except OSError:
        return "reading a revision needs git, which is not installed here"
    if found.returncode == 0:
        return None
    inside = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--is-inside-work-tree"], capture_output=True, check=False
    )
    if inside.returncode != 0:
        return f"--revision reads a git checkout of Onceflow, and {root} is not one"
    return f"no such revision in the git repository at {root} (a branch, a tag or a commit, e.g. HEAD~1, main)"


def revision() -> Check:
    """Its form here; that the app's repository has it, in the command (it knows the app's folder)."""
    return refusing("revision", lambda value: revision_problem(value) if not value or value[0] == "-" else None)


def stack_name_problem(value: str) -> str | None:
    if STACK_NAME.fullmatch(value):
        return None
    return "a stack name is a letter, then letters, digits and hyphens (at most 128), e.g. onceflow-local"


def stack_name() -> Check:
    return refusing("stack-name", stack_name_problem)


def known_regions() -> set[str]:
    """Every region of every AWS partition in botocore's endpoint data."""
    from botocore.loaders import create_loader

    endpoints = create_loader().load_data("endpoints")
    return {name for partition in endpoints["partitions"] for name in partition.get("regions", {})}


def region_problem(value: str) -> str | None:
    regions = known_regions()
    if value in regions:
        return None
    import difflib

    import botocore

    close = difflib.get_close_matches(value, sorted(regions), n=1)
    hint = f"did you mean {close[0]}?" if close else "e.g. us-east-1, eu-west-1"
    return f"not an AWS region (botocore {botocore.__version__} knows {len(regions)}; {hint})"


def region() -> Check:
    return refusing("region", region_problem)


def finite(minimum: float = 0.0) -> Check:
    """A float at least `minimum` and finite: click's own range lets nan and inf through."""

    def check(ctx: typer.Context, param: typer.CallbackParam, value: Any) -> Any:
        if value is not None and (not math.isfinite(value) or value < minimum):
            raise typer.BadParameter(f"{value}: a number, {minimum:g} or more (e.g. 0.01)")
        return value

    check.kind = "number"  # type: ignore[attr-defined]
    return check


def mix_problem(value: str) -> str | None:
    """`cost --mix`: shares per path (onceflow/devtools/cost/mix.py), read without the engine."""
    from onceflow.devtools.cost.mix import MixError, parse_mix

    if not value:
        return None  # the default mix
    try:
        parse_mix(value)
    except MixError as error:
        return str(error)
    return None


def mix() -> Check:
    return refusing("mix", mix_problem)


def given_value(args: list[str], param: Any) -> str | None:
    """The text the user gave for `param` (the last `--opt VALUE` or `--opt=VALUE`), or from its
    environment variable: what a refusal from typer's own coercion names."""
    names = [*getattr(param, "opts", []), *getattr(param, "secondary_opts", [])]
    found = None
    for index, word in enumerate(args):
        for name in names:
            if word == name and index + 1 < len(args):
                found = args[index + 1]
            elif word.startswith(name + "="):
                found = word[len(name) + 1 :]
    if found is None and getattr(param, "envvar", None):
        found = os.environ.get(param.envvar)
    return found
