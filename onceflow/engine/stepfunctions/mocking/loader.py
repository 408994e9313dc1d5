"""Read and validate a Step Functions Local mock configuration (MockConfigFile.json).

The format (AWS Step Functions Local, "Configuration file for mocked service integrations"):

    {"StateMachines": {<state machine name>: {"TestCases": {<test case>: {<Task state>: <mocked response>}}}},
     "MockedResponses": {<mocked response>: {"0": {"Return": <any JSON>},
                                             "1-2": {"Throw": {"Error": "...", "Cause": "..."}}}}}

A mistake in such a file easily goes unnoticed: the test case then runs with fewer mocks than meant. Here
every mistake is an error that names the file, the place and the rule: unknown fields (a misspelt `MockedResponse` would mock
nothing), duplicate keys (JSON keeps the last silently), state names that are not in the definition or are
not Task states, mocked response names that are not defined, attempt keys that are not `N` or `N-M`, ranges
that end before they start, overlap, leave a gap or do not start at 0, attempts with both or neither of
`Return` and `Throw`, and `Throw` without a string `Error` and `Cause`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from onceflow.engine.stepfunctions.mocking.definition import state_types
from onceflow.engine.stepfunctions.mocking.errors import MockConfigError, Problem
from onceflow.engine.stepfunctions.mocking.model import MockConfig, MockedResponse, MockTestCase
from onceflow.engine.stepfunctions.mocking.reporting import Reporter, object_pairs, suggest, trail
from onceflow.engine.stepfunctions.mocking.responses import check_responses

_TOP_LEVEL = ("StateMachines", "MockedResponses")


class _Checker(Reporter):
    def __init__(self, source: str, states: Mapping[str, str] | None, state_machine: str | None):
        super().__init__(source)
        self.states = states
        self.state_machine = state_machine

    # -- StateMachines --------------------------------------------------------------------------------------

    def state_machines(
        self, raw: Any, responses: Mapping[str, Any], defined: set[str]
    ) -> dict[str, dict[str, MockTestCase]]:
        machines = self.object(raw, "StateMachines", "StateMachines")
        if machines is None:
            return {}
        if self.state_machine is not None and self.state_machine not in machines:
            self.problem(
                "StateMachines",
                "state-machine-exists",
                f"no entry for the state machine {self.state_machine!r} (the key must be the name the state machine "
                f"was created with){suggest(self.state_machine, list(machines))}",
            )
        result: dict[str, dict[str, MockTestCase]] = {}
        for machine_name, raw_machine in machines.items():
            where = trail("StateMachines", machine_name)
            machine = self.object(raw_machine, where, f"state machine {machine_name!r}")
            if machine is None:
                continue
            self.known_fields(machine, where, ("TestCases",))
            if "TestCases" not in machine:
                self.problem(where, "required-field", "has no TestCases")
                continue
            cases = self.object(machine["TestCases"], trail(where, "TestCases"), "TestCases")
            if cases is None:
                continue
            check_states = self.states is not None and self.state_machine in (None, machine_name)
            result[machine_name] = {
                case_name: self.test_case(machine_name, case_name, raw_case, responses, defined, check_states)
                for case_name, raw_case in cases.items()
            }
        return result

    def test_case(
        self,
        machine_name: str,
        case_name: str,
        raw: Any,
        responses: Mapping[str, MockedResponse],
        defined: set[str],
        check_states: bool,
    ) -> MockTestCase:
        where = trail("StateMachines", machine_name, "TestCases", case_name)
        case = self.object(raw, where, f"test case {case_name!r}") or {}
        states: dict[str, MockedResponse] = {}
        for state_name, response_name in case.items():
            at = trail(where, f"state {state_name!r}")
            if check_states:
                self.state_name(state_name, at)
            if not isinstance(response_name, str):
                self.problem(at, "response-name-string", "must name a mocked response (a string)")
                continue
            if response_name not in defined:
                self.problem(
                    at,
                    "response-exists",
                    f"mocked response {response_name!r} is not defined in MockedResponses"
                    f"{suggest(response_name, sorted(defined))}",
                )
                continue
            if response_name in responses:
                states[state_name] = responses[response_name]
        return MockTestCase(machine_name, case_name, states)

    def state_name(self, state_name: str, where: str) -> None:
        assert self.states is not None
        state_type = self.states.get(state_name)
        if state_type is None:
            self.problem(
                where,
                "state-exists",
                f"no state named {state_name!r} in the state machine definition{suggest(state_name, list(self.states))}",
            )
        elif state_type != "Task":
            self.problem(
                where,
                "task-state-only",
                f"{state_name!r} is a {state_type} state; only Task states call services and can be mocked",
            )

    # -- the whole file -------------------------------------------------------------------------------------

    def collect(self, raw: Any) -> MockConfig | None:
        """Everything usable in the file; its problems are in `self.problems` (None: not an object)."""
        top = self.object(raw, "(top level)", "the mock configuration")
        if top is None:
            return None
        self.known_fields(top, "(top level)", _TOP_LEVEL)
        for field in _TOP_LEVEL:
            if field not in top:
                self.problem("(top level)", "required-field", f"{field} is missing")
        raw_responses = top.get("MockedResponses", {})
        defined = set(raw_responses) if isinstance(raw_responses, dict) else set()
        responses = check_responses(self, raw_responses)
        test_cases = self.state_machines(top.get("StateMachines", {}), responses, defined)
        return MockConfig(self.source, test_cases, responses)

    def config(self, raw: Any) -> MockConfig:
        config = self.collect(raw)
        if config is None or self.problems:
            raise MockConfigError(self.problems)
        return config


def parse_mock_config(
    text: str,
    source: str,
    definition: str | Mapping[str, Any] | None,
    state_machine: str | None = None,
) -> MockConfig:
    """Validate mock configuration text. With a `definition`, state names are checked against it: for the entry
    `state_machine` only when given, else for every state machine in the file. Raises MockConfigError."""
    raw = _parse_json(text, source)
    states = state_types(definition) if definition is not None else None
    return _Checker(source, states, state_machine).config(raw)


def _read(path: Path | str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise MockConfigError(
            [Problem(str(path), "(file)", "file-readable", f"cannot read it: {error.strerror}")]
        ) from None


def _parse_json(text: str, source: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=object_pairs)
    except json.JSONDecodeError as error:
        raise MockConfigError(
            [
                Problem(
                    source, f"line {error.lineno} column {error.colno}", "json-syntax", f"not valid JSON: {error.msg}"
                )
            ]
        ) from None


def _concerns(problem: Problem, state_machine: str, test_case: str, responses: set[str]) -> bool:
    """Whether a problem touches what one test case uses: the file's structure, the test case, or a
    mocked response it names."""
    machine = trail("StateMachines", state_machine)
    mine = [trail(machine, "TestCases", test_case), *(trail("MockedResponses", name) for name in responses)]
    structure = {"(top level)", "(file)", "StateMachines", "MockedResponses", machine, trail(machine, "TestCases")}
    return (
        problem.where in structure
        or problem.rule in {"json-syntax", "state-machine-exists"}
        or any(problem.where == place or problem.where.startswith(place + " › ") for place in mine)
    )


def _named_responses(raw: Any, state_machine: str, test_case: str) -> set[str]:
    try:
        case = raw["StateMachines"][state_machine]["TestCases"][test_case]
    except (KeyError, TypeError):
        return set()
    return {name for name in case.values() if isinstance(name, str)} if isinstance(case, dict) else set()


def load_test_case(
    path: Path | str,
    definition: str | Mapping[str, Any] | None,
    state_machine: str,
    test_case: str,
) -> tuple[MockTestCase, list[Problem]]:
    """The test case a `stateMachineArn#TestCase` start selects, and the file's other problems.

    Only what the selected test case uses must be valid (MockConfigError otherwise): problems in
    other test cases, or in mocked responses it does not name, are returned as warnings, so a file
    that runs on Step Functions Local or LocalStack runs here."""
    source = str(path)
    raw = _parse_json(_read(path), source)
    checker = _Checker(source, state_types(definition) if definition is not None else None, state_machine)
    config = checker.collect(raw)
    responses = _named_responses(raw, state_machine, test_case)
    errors = [p for p in checker.problems if _concerns(p, state_machine, test_case, responses)]
    if config is None or errors:
        raise MockConfigError(errors or checker.problems)
    warnings = [p for p in checker.problems if p not in errors]
    return config.test_case(state_machine, test_case), warnings


def load_mock_config(
    path: Path | str,
    definition: str | Mapping[str, Any] | None,
    state_machine: str | None = None,
) -> MockConfig:
    """Read and validate a MockConfigFile.json (see parse_mock_config). Raises MockConfigError."""
    return parse_mock_config(_read(path), str(path), definition, state_machine)


def validate_mock_config_file(
    config_path: Path | str,
    definition_path: Path | str | None = None,
    state_machine: str | None = None,
) -> list[Problem]:
    """For command lines and CI: every problem of the file (empty when it is valid); never raises for content."""
    definition = Path(definition_path).read_text(encoding="utf-8") if definition_path is not None else None
    try:
        load_mock_config(config_path, definition, state_machine)
    except MockConfigError as error:
        return error.problems
    return []
