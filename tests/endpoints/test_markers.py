"""Tests that need the embedded engine are found from what they use, not from a list kept by hand."""

from __future__ import annotations

from tests.endpoints import in_process_samples as samples
from tests.endpoints.markers import MARKER, _in_process_use


def test_fault_injection_is_found_directly_and_through_helpers():
    assert _in_process_use(samples.publish_outage, set()) == (
        "injects faults by patching moto in this process (onceflow.local.faults.sns_publish_failures)"
    )
    assert _in_process_use(samples.indirect_outage, set()) == _in_process_use(samples.publish_outage, set())
    assert "onceflow.local.faults.dynamodb_throttling" in str(_in_process_use(samples.injects_in_a_closure, set()))


def test_moto_and_the_engine_module_are_found():
    assert "patches moto in this process (moto" in str(_in_process_use(samples.patches_moto_directly, set()))
    assert (
        _in_process_use(samples.starts_an_engine, set())
        == "runs the embedded engine (onceflow.engine.server.free_port)"
    )


def test_code_using_only_boto3_and_onceflow_runs_anywhere():
    assert _in_process_use(samples.plain_helper, set()) is None
    assert _in_process_use(test_code_using_only_boto3_and_onceflow_runs_anywhere, set()) is None


def test_the_marker_is_registered_and_these_tests_are_not_embedded_only(pytestconfig, request):
    assert any(line.startswith(f"{MARKER}(") for line in pytestconfig.getini("markers"))
    assert request.node.get_closest_marker(MARKER) is None
