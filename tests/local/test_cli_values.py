"""The commands' option values without pydantic (onceflow/cli_values.py): the same values and the
same refusals as typer's own coercion, and a client command's start imports no pydantic (issue 21:
`status` under 1 s; pydantic's import is about 0.15 s of CPU)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
import typer.main
from typer._click import Context
from typer._click.exceptions import BadParameter
from typer.core import build_runtime_param

from onceflow.cli import app
from onceflow.cli_values import PlainValues, install

GROUP = typer.main.get_command(app)
PARAMETERS = [(name, param) for name, command in GROUP.commands.items() for param in command.params]
VALUES: list[Any] = [
    None, 0, 20, -3, 0.25, True, "20", "-3", "0", "007", "+5", " 5", "1_000", "1e3", "9" * 30, "abc", "",
    "0.25", "-0.5", ".5", "5.", "nan", "inf", "http://127.0.0.1:4747", "127.0.0.1:4747", "\udcff", "é", ("a", "b"),
]  # fmt: skip


def _coerced(coercion: Any, param: Any, value: Any) -> tuple[str, Any]:
    try:
        result = coercion.coerce(value, param=param, ctx=Context(GROUP))
    except BadParameter as refused:
        return "refused", refused.format_message()
    return type(result).__name__, repr(result)  # repr: nan is not equal to itself


@pytest.mark.parametrize(("command", "param"), PARAMETERS, ids=[f"{c}-{p.name}" for c, p in PARAMETERS])
def test_every_option_takes_and_refuses_what_typer_does(command: str, param: Any) -> None:
    for value in VALUES:
        expected = _coerced(build_runtime_param(param.type_descriptor), param, value)
        param._runtime_param = None
        assert _coerced(PlainValues(build_runtime_param), param, value) == expected, (command, param.name, value)


def test_a_value_to_convert_or_refuse_goes_to_typer() -> None:
    """The plain path is not all: a bounded integer (start's port) is still checked by typer."""
    port = next(p for c, p in PARAMETERS if c == "start" and p.name == "port")
    kind, message = _coerced(PlainValues(build_runtime_param), port, "70000")
    assert kind == "refused"
    assert "65535" in message


@pytest.mark.parametrize(
    "argv",
    [
        ["status", "--endpoint", "http://127.0.0.1:1", "--last", "5"],
        ["trace", "--endpoint", "http://127.0.0.1:1", "--execution", "x"],
        ["logs", "--endpoint", "http://127.0.0.1:1", "--event-id", "e"],
        ["send", "--endpoint", "http://127.0.0.1:1", "--count", "3", "--duplicates", "0.5"],
        ["status", "--help"],
        ["dead-letters", "--endpoint", "http://127.0.0.1:1", "--queue", "subscriber"],
    ],
)
def test_a_client_command_starts_without_pydantic(argv: list[str]) -> None:
    code = (
        "import sys, onceflow.cli\n"
        f"sys.argv = ['onceflow', *{argv!r}]\n"
        "try:\n    onceflow.cli.main()\nexcept SystemExit:\n    pass\n"
        "print('pydantic' in sys.modules, file=sys.stderr)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stderr.strip().splitlines()[-1] == "False", result.stderr[-2000:]


def test_installing_twice_is_once() -> None:
    assert install() and install()
