"""Template parameter overrides (`--parameter KEY=VALUE`) checked against the template's own
Parameters as CloudFormation checks them, one rule for start, demo, cost, capacity and the pytest
plugin; through the console script, a mistake is one line and exit 2 before anything deploys.

CloudFormation's rules: https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/parameters-section-structure.html
(AllowedValues, AllowedPattern, MinLength/MaxLength, Number with MinValue/MaxValue)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from onceflow.domain.parameters import ParameterError, parse_parameters
from onceflow.local.template import TEMPLATE_PATH

CONSOLE_SCRIPT = Path(sys.executable).with_name("onceflow")


def test_values_the_template_allows_are_taken_as_text() -> None:
    chosen = parse_parameters(
        ["StateMachineType=EXPRESS", "SourceQueueType=FIFO", "BatchSize=5", "DeploySubscriber=true"], TEMPLATE_PATH
    )
    assert chosen == {
        "StateMachineType": "EXPRESS",
        "SourceQueueType": "FIFO",
        "BatchSize": "5",
        "DeploySubscriber": "true",
    }
    assert parse_parameters(None, TEMPLATE_PATH) == {}


@pytest.mark.parametrize(
    ("item", "says"),
    [
        pytest.param(
            "StateMachineType=express",
            "StateMachineType takes one of STANDARD, EXPRESS (did you mean EXPRESS? values are case-sensitive)",
            id="allowed-values-case",
        ),
        pytest.param("SourceQueueType=fifo", "did you mean FIFO?", id="source-case"),
        pytest.param("StateMachineType=EXPRESSS", "StateMachineType takes one of STANDARD, EXPRESS", id="typo"),
        pytest.param("Foo=bar", "template.yaml has no parameter Foo; it has AlarmEmail, BatchSize", id="unknown"),
        pytest.param("BatchSze=5", "has no parameter BatchSze (did you mean BatchSize?)", id="close-name"),
        pytest.param("BatchSize", "give KEY=VALUE, e.g. BatchSize=10", id="no-equals"),
        pytest.param("BatchSize=ten", "BatchSize is a Number", id="not-a-number"),
        pytest.param("BatchSize=0", "BatchSize is at least 1", id="below-min"),
        pytest.param("RecordRetentionDays=5000", "RecordRetentionDays is at most 3650", id="above-max"),
    ],
)
def test_a_value_the_template_refuses_is_named_with_what_it_allows(item: str, says: str) -> None:
    with pytest.raises(ParameterError) as refused:
        parse_parameters([item], TEMPLATE_PATH)
    assert says in str(refused.value)
    assert str(refused.value).startswith(repr(item))


def test_the_same_parameter_twice_with_two_values_is_refused() -> None:
    with pytest.raises(ParameterError, match="BatchSize is given twice"):
        parse_parameters(["BatchSize=5", "BatchSize=6"], TEMPLATE_PATH)


def test_a_pattern_and_lengths_are_checked(tmp_path: Path) -> None:
    template = tmp_path / "template.yaml"
    template.write_text(
        "Parameters:\n  Stage: {Type: String, AllowedPattern: '[a-z]+', MinLength: 2, MaxLength: 5}\nResources: {}\n"
    )
    assert parse_parameters(["Stage=dev"], template) == {"Stage": "dev"}
    for item, says in [("Stage=Dev", "must match [a-z]+"), ("Stage=d", "at least 2"), ("Stage=develop", "at most 5")]:
        with pytest.raises(ParameterError) as refused:
            parse_parameters([item], template)
        assert says in str(refused.value)


@pytest.mark.parametrize("command", ["start", "demo", "cost", "capacity"])
def test_every_command_that_takes_parameters_refuses_a_bad_one_in_one_line(command: str) -> None:
    args = [command, "--parameter", "StateMachineType=express"] + (["--port", "1"] if command == "start" else [])
    done = subprocess.run(
        [str(CONSOLE_SCRIPT), *args], capture_output=True, text=True, timeout=60, cwd=TEMPLATE_PATH.parent
    )
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line == (
        f"onceflow {command}: Invalid value for '--parameter': 'StateMachineType=express': StateMachineType "
        "takes one of STANDARD, EXPRESS (did you mean EXPRESS? values are case-sensitive)"
    )
