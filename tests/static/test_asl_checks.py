"""The ASL checks fail on a broken state machine, naming the problem."""

from __future__ import annotations

from onceflow.devtools.static_checks import run_check
from tests.static.conftest import Document, ProjectCopy, resources_of_type, states


def test_dangling_next_fails_statelint(project_copy: ProjectCopy) -> None:
    def dangle(definition: Document) -> None:
        _, state = next((name, state) for name, state in states(definition) if "Next" in state)
        state["Next"] = "No such state"

    project_copy.edit_asl(dangle)
    result = run_check("statelint", project_copy)
    assert not result.passed
    assert 'No state found named "No such state"' in result.output


def test_bad_jitter_strategy_fails_statelint(project_copy: ProjectCopy) -> None:
    def bad_jitter(definition: Document) -> None:
        retrier = next(retry[0] for _, state in states(definition) if (retry := state.get("Retry")))
        retrier["JitterStrategy"] = "SOMETIMES"

    project_copy.edit_asl(bad_jitter)
    result = run_check("statelint", project_copy)
    assert not result.passed
    assert "JitterStrategy" in result.output
    assert "SOMETIMES" in result.output


def test_placeholder_without_substitution_fails_statelint(project_copy: ProjectCopy) -> None:
    removed: list[str] = []

    def drop_substitution(template: Document) -> None:
        _, machine = next(resources_of_type(template, "AWS::Serverless::StateMachine"))
        substitutions = machine["Properties"]["DefinitionSubstitutions"]
        name = next(iter(substitutions))
        del substitutions[name]
        removed.append(name)

    project_copy.edit_template(drop_substitution)
    result = run_check("statelint", project_copy)
    assert not result.passed
    assert f"${{{removed[0]}}} has no DefinitionSubstitutions entry" in result.output


def test_unknown_state_field_fails_cfn_lint_on_the_translated_template(project_copy: ProjectCopy) -> None:
    """E3601 only sees the ASL because the check turns the translator's DefinitionString into Definition."""

    def typo(definition: Document) -> None:
        _, state = next((name, state) for name, state in states(definition) if state["Type"] == "Task")
        state["ResultPth"] = "$.typo"

    project_copy.edit_asl(typo)
    result = run_check("cfn-lint", project_copy)
    assert not result.passed
    assert "E3601" in result.output
    assert "'ResultPth' was unexpected" in result.output
