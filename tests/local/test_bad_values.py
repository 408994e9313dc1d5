"""Every option of every `onceflow` command given bad values: one line naming the value, never a traceback.

The options are found in the command tree itself (a new command or option is walked without being
listed here), each by what it takes: a file to read, a template, a file or a folder to write, a git
revision, a region, a stack name, KEY=VALUE, a mix, a whole number, a number, a choice, an
endpoint, or free text. Each bad value runs through the console script's entry point in a process
of its own (tests/local/console_forks.py: a fork per command line, so a few hundred cost seconds,
not minutes), with nothing listening at the endpoint: a value the command failed to refuse goes on
to "nothing answers", which names no value, and fails the test; a heavy command that failed to
refuse one runs into the time limit. `test_the_issues_cases_through_the_installed_console_script`
runs the cases issue 30 listed through the installed script itself.

Free text (an event id, an execution name) may be anything: there only the traceback and the one
line are asserted.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer.main

from onceflow.cli import app
from onceflow.engine.server import free_port
from tests.local.console_forks import ConsoleForks, Ran

ROOT = Path(__file__).resolve().parents[2]
CONSOLE_SCRIPT = Path(sys.executable).with_name("onceflow")
COMMANDS = typer.main.get_command(app).commands  # type: ignore[attr-defined]
HEAVY = {"start", "demo", "cost", "capacity"}  # they run the engine when a value passes: a time limit tells


@dataclass(frozen=True)
class Bad:
    value: str  # `{name}` placeholders are the files of the `files` fixture
    why: str
    names_it: bool = True  # the refusal names the value (False: free text, which may be valid)
    drop_dac: bool = False  # run without root's way past file permissions


PATHS_TO_READ = [
    Bad("{missing}/template.yaml", "missing"),
    Bad("{folder}", "a folder"),
    Bad("{plain}/template.yaml", "under a file"),
    Bad("{unreadable}", "unreadable", drop_dac=True),
]
BAD_VALUES: dict[str, list[Bad]] = {
    "input-file": PATHS_TO_READ,
    "template": [*PATHS_TO_READ, Bad("{plain}", "not a template"), Bad("{broken}", "broken YAML")],
    "output-file": [
        Bad("{folder}", "a folder"),
        Bad("{plain}/page.html", "under a file"),
        Bad("/proc/onceflow-page.html", "a folder no file can be made in"),
        Bad("{read_only}", "a read-only file", drop_dac=True),
    ],
    "output-folder": [
        Bad("{plain}", "an existing file"),
        Bad("{plain}/reports", "under a file"),
        Bad("/proc/onceflow-reports", "a folder no file can be made in"),
        Bad("{read_only_folder}/reports", "inside a read-only folder", drop_dac=True),
    ],
    "revision": [Bad("nosuchrev", "no such revision"), Bad("", "empty"), Bad("-p", "an option, not a revision")],
    "region": [Bad("xx-nowhere-1", "no such region"), Bad("", "empty")],
    "stack-name": [Bad("", "empty"), Bad("9lives", "begins with a digit"), Bad("my_stack", "an underscore")],
    "key-value": [
        Bad("BatchSize", "no ="),
        Bad("=10", "no key"),
        Bad("NoSuchParameter=1", "unknown key"),
        Bad("StateMachineType=express", "lower case"),
        Bad("BatchSize=ten", "not a number"),
        Bad("BatchSize=100000", "above the maximum"),
    ],
    "mix": [Bad("new", "no ="), Bad("new=abc", "not a number"), Bad("new=nan", "nan"), Bad("bogus=1", "no such path")],
    "integer": [Bad("abc", "not a number"), Bad("1.5", "not whole"), Bad("", "empty")],
    "number": [Bad("abc", "not a number"), Bad("nan", "nan"), Bad("inf", "infinite"), Bad("", "empty")],
    "choice": [Bad("bogus", "not a choice"), Bad("", "empty")],
    "endpoint": [Bad("localhost:4747", "no scheme"), Bad("ftp://x", "another scheme"), Bad("", "empty")],
    "text": [Bad("", "empty", names_it=False)],
}
# Options taking a file or a folder under these names (or typed Path) would be walked as text and prove little.
PATH_NAMES = {"file", "body_file", "out", "template", "dir", "folder"}


def kind_of(param: Any) -> str | None:
    """What an option takes, or None for a flag (it takes no value)."""
    if getattr(param, "is_flag", False):
        return None
    declared = getattr(param.callback, "kind", None)
    if declared is not None:
        return "number" if declared == "number" else declared
    annotation = param.type_descriptor.annotation
    name = param.name or ""
    if name == "endpoint":
        return "endpoint"
    if name == "parameter":
        return "key-value"
    if name == "mix":
        return "mix"
    if annotation is Path:
        return "input-file"
    if isinstance(annotation, type) and issubclass(annotation, bool):
        return None
    if annotation is int:
        return "integer"
    if annotation is float:
        return "number"
    if isinstance(annotation, type) and hasattr(annotation, "__members__"):
        return "choice"
    return "text"


def _minimum(param: Any) -> float | None:
    declared = getattr(param.callback, "minimum", None)
    info = param.type_descriptor.parameter_info
    return declared if declared is not None else info.min


def bad_values(param: Any) -> list[Bad]:
    kind = kind_of(param)
    if kind is None:
        return []
    values = list(BAD_VALUES[kind])
    minimum = _minimum(param)
    if kind in ("integer", "number") and minimum is not None:
        below = minimum - 1 if kind == "integer" else minimum - 0.5
        values.append(Bad(f"{below:g}", f"below {minimum:g}"))
    return values


# A command's positional arguments, each a value it takes (a path with `{name}` of the `files` fixture),
# given while its options are walked; walked themselves with bad values of their kind.
ARGUMENT_PLACEHOLDERS = {"output-folder": "{home}/a-new-app"}


# What else a command needs for a bad value to be the one thing wrong with its command line.
COMPANIONS = {
    ("init", "path"): ["--example", "payments"],
    ("init", "--sample-event"): ["--event-id-path", "order_id"],
}


def _arguments(command: Any) -> list[Any]:
    return [p for p in command.params if p.param_type_name == "argument"]


def _cases() -> Iterator[Any]:
    for command_name, command in sorted(COMMANDS.items()):
        arguments = [ARGUMENT_PLACEHOLDERS[kind_of(p) or ""] for p in _arguments(command)]
        for param in command.params:
            positional = param.param_type_name == "argument"
            option = param.name if positional else param.opts[0]
            for bad in bad_values(param):
                args = [bad.value] if positional else [*arguments, option, bad.value]
                args += COMPANIONS.get((command_name, option), [])
                yield pytest.param(command_name, option, args, bad, id=f"{command_name} {option} {bad.why}")


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Iterator[dict[str, str]]:
    where = tmp_path_factory.mktemp("bad-values")
    (where / "folder").mkdir()
    (where / "plain.txt").write_text("hello\n")
    (where / "broken.yaml").write_text("Resources: [\n")
    unreadable = where / "unreadable.yaml"
    unreadable.write_text((ROOT / "template.yaml").read_text())
    unreadable.chmod(0)
    read_only = where / "read-only.html"
    read_only.write_text("<p>kept</p>")
    read_only.chmod(stat.S_IRUSR)
    read_only_folder = where / "read-only-folder"
    read_only_folder.mkdir()
    read_only_folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    yield {
        "missing": str(where / "missing"),
        "folder": str(where / "folder"),
        "plain": str(where / "plain.txt"),
        "broken": str(where / "broken.yaml"),
        "unreadable": str(unreadable),
        "read_only": str(read_only),
        "read_only_folder": str(read_only_folder),
        "home": str(where),
    }
    read_only_folder.chmod(stat.S_IRWXU)  # so that pytest can remove them
    unreadable.chmod(stat.S_IRWXU)


@pytest.fixture(scope="module")
def forks() -> Iterator[ConsoleForks]:
    helper = ConsoleForks()
    yield helper
    helper.close()


@pytest.fixture(scope="module")
def environment(files: dict[str, str]) -> dict[str, str]:
    """A user's shell with nothing at the endpoint and no AWS configuration to find."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": files["home"],
        "LANG": "C.UTF-8",
        "COLUMNS": "200",
        "ONCEFLOW_ENDPOINT": f"http://127.0.0.1:{free_port()}",
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "AWS_EC2_METADATA_DISABLED": "true",
    }


def assert_one_line_naming(ran: Ran, command: str, option: str, value: str | None) -> str:
    """Non-zero exit, no traceback, one line on stderr from the command, naming the option and the value."""
    said = ran.stdout + ran.stderr
    assert "Traceback" not in said, said
    assert not ran.timed_out, f"still running after the time limit: the value was taken\n{said}"
    assert ran.code != 0, f"exit 0: the value was taken\n{said}"
    lines = ran.stderr.strip().splitlines()
    assert len(lines) == 1, said
    [line] = lines
    assert line.startswith(f"onceflow {command}: "), line
    if value is not None:
        assert option in line or option.isidentifier(), f"the option is not named: {line}"  # an argument: its value
        assert repr(value) in line or (value and value in line), f"the value is not named: {line}"
    return line


@pytest.mark.parametrize(("command", "option", "args", "bad"), list(_cases()))
def test_a_bad_value_gets_one_line_naming_it_never_a_traceback(
    forks: ConsoleForks,
    files: dict[str, str],
    environment: dict[str, str],
    command: str,
    option: str,
    args: list[str],
    bad: Bad,
) -> None:
    value = bad.value.format(**files)
    argv = [command, *(arg.format(**files) for arg in args)]
    ran = forks.run(argv, environment, ROOT, drop_dac=bad.drop_dac, timeout=60 if command in HEAVY else 30)
    if bad.names_it:
        assert_one_line_naming(ran, command, option, value)
    else:  # free text may be valid: then it reaches the endpoint, where nothing answers (one line too)
        said = ran.stdout + ran.stderr
        assert "Traceback" not in said and not ran.timed_out, said
        assert ran.code != 0 and len(ran.stderr.strip().splitlines()) == 1, said


def test_every_option_that_names_a_file_or_folder_says_what_it_checks() -> None:
    """A path option without its check would be walked as free text and prove nothing: give it one of
    onceflow/cli_checks.py's callbacks (input_file, output_file, output_folder)."""
    unchecked = [
        f"{name} {param.opts[0]}"
        for name, command in COMMANDS.items()
        for param in command.params
        if param.name in PATH_NAMES and kind_of(param) == "text"  # a Path is walked as a file to read
    ]
    assert unchecked == []


def test_every_command_is_walked_and_every_kind_is_met() -> None:
    walked = {case.values[0] for case in _cases()}
    assert all(kind_of(p) in ARGUMENT_PLACEHOLDERS for c in COMMANDS.values() for p in _arguments(c))
    assert walked == set(COMMANDS) - {name for name, c in COMMANDS.items() if not c.params}
    kinds = {kind_of(p) for c in COMMANDS.values() for p in c.params} - {None}
    assert kinds == set(BAD_VALUES)


ISSUE_CASES = [
    (["trace", "--out", "/tmp"], "--out", "/tmp", "a folder: give a file name, e.g. /tmp/trace.html"),
    (["trace", "--out", "/proc/x.html"], "--out", "/proc/x.html", "cannot write in /proc"),
    (["demo", "--out", "/etc/hostname"], "--out", "/etc/hostname", "a file, not a folder"),
    (["capacity", "--parameter", "BatchSize"], "--parameter", "BatchSize", "give KEY=VALUE, e.g. BatchSize="),
    (["cost", "--revision", "nosuchrev"], "--revision", "nosuchrev", "no such revision in the git repository"),
    (["capacity", "--template", "/tmp/nope.yaml"], "--template", "/tmp/nope.yaml", "no such template"),
]


@pytest.mark.parametrize(("args", "option", "value", "says"), ISSUE_CASES, ids=[" ".join(c[0]) for c in ISSUE_CASES])
def test_the_issues_cases_through_the_installed_console_script(
    environment: dict[str, str], args: list[str], option: str, value: str, says: str
) -> None:
    """Issue 30's list, typed as a user types it: the installed `onceflow` script in a new process."""
    if not Path("/etc/hostname").is_file() or Path("/tmp/nope.yaml").exists():
        pytest.skip("needs /etc/hostname and no /tmp/nope.yaml, as the issue had")
    result = subprocess.run(
        [str(CONSOLE_SCRIPT), *args], capture_output=True, text=True, timeout=120, cwd=ROOT, env=environment
    )
    line = assert_one_line_naming(Ran(result.returncode, result.stdout, result.stderr), args[0], option, value)
    assert says in line
    assert result.returncode == 2
