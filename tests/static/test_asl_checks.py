"""The ASL checks fail on a broken state machine, naming the problem."""

from __future__ import annotations

from onceflow.local.template import PROJECT_ROOT, load_sam_template
from tests.static.conftest import Document, StaticRuns, broken_asl, broken_template, resources_of_type, states


def _dangling_next(definition: Document) -> None:
    _, state = next((name, state) for name, state in states(definition) if "Next" in state)
    state["Next"] = "No such state"


def _bad_jitter_strategy(definition: Document) -> None:
    retrier = next(retry[0] for _, state in states(definition) if (retry := state.get("Retry")))
    retrier["JitterStrategy"] = "SOMETIMES"


def _first_substitutions(template: Document) -> dict[str, str]:
    _, machine = next(resources_of_type(template, "AWS::Serverless::StateMachine"))
    return machine["Properties"]["DefinitionSubstitutions"]


def _drop_first_substitution(template: Document) -> None:
    substitutions = _first_substitutions(template)
    del substitutions[next(iter(substitutions))]


def _unknown_state_field(definition: Document) -> None:
    _, state = next((name, state) for name, state in states(definition) if state["Type"] == "Task")
    state["ResultPth"] = "$.typo"


DANGLING_NEXT = broken_asl(_dangling_next, "statelint")
BAD_JITTER_STRATEGY = broken_asl(_bad_jitter_strategy, "statelint")
PLACEHOLDER_WITHOUT_SUBSTITUTION = broken_template(_drop_first_substitution, "statelint")
UNKNOWN_STATE_FIELD = broken_asl(_unknown_state_field, "cfn-lint")


def test_dangling_next_fails_statelint(static_runs: StaticRuns) -> None:
    result = static_runs.result(DANGLING_NEXT, "statelint")
    assert not result.passed
    assert 'No state found named "No such state"' in result.output


def test_bad_jitter_strategy_fails_statelint(static_runs: StaticRuns) -> None:
    result = static_runs.result(BAD_JITTER_STRATEGY, "statelint")
    assert not result.passed
    assert "JitterStrategy" in result.output
    assert "SOMETIMES" in result.output


def test_placeholder_without_substitution_fails_statelint(static_runs: StaticRuns) -> None:
    removed = next(iter(_first_substitutions(load_sam_template(PROJECT_ROOT / "template.yaml"))))
    result = static_runs.result(PLACEHOLDER_WITHOUT_SUBSTITUTION, "statelint")
    assert not result.passed
    assert f"${{{removed}}} has no DefinitionSubstitutions entry" in result.output


def test_unknown_state_field_fails_cfn_lint_on_the_translated_template(static_runs: StaticRuns) -> None:
    """E3601 only sees the ASL because the check turns the translator's DefinitionString into Definition."""
    result = static_runs.result(UNKNOWN_STATE_FIELD, "cfn-lint")
    assert not result.passed
    assert "E3601" in result.output
    assert "'ResultPth' was unexpected" in result.output
