"""The local runtime loads a function's handler once per process and refuses to go on with it once
its code changed on disk: a deploy reads template.yaml and the state machine again, so the old code
would run against the new definition (a long test run that mixed the two failed R1 for no fault of
the pipeline: the new dead-letter states read an input field the old starter did not write)."""

from __future__ import annotations

import io
import os

import pytest
from moto.core.exceptions import AWSError
from moto.stepfunctions.parser.models import StepFunctionsParserBackend

from onceflow.local.faults import inject
from onceflow.local.function_runtime import FunctionLoadError, StarterRuntime, _load_handler_module
from onceflow.local.pipeline import LocalPipeline
from onceflow.local.stack import LocalFunction
from tests.starter.helpers import failed_ids
from tests.support import order, sqs_event, sqs_record


def _function(tmp_path, name: str) -> LocalFunction:
    code, package = tmp_path / name, f"{name}_lib"  # a package name of its own: sys.modules is the process's
    (code / package).mkdir(parents=True)
    (code / "app.py").write_text(
        f"from {package}.values import VALUE\n\ndef handler(event, context):\n    return VALUE\n"
    )
    (code / package / "__init__.py").write_text("")
    (code / package / "values.py").write_text("VALUE = 1\n")
    return LocalFunction(
        logical_id="ProbeFunction",
        name=name,
        code_dir=code,
        handler="app.handler",
        timeout=3,
        layer_dirs=(),
        environment={},
    )


def test_a_handler_is_loaded_once_while_its_code_is_unchanged(tmp_path):
    function = _function(tmp_path, "probe_unchanged")
    assert _load_handler_module(function) is _load_handler_module(function)


def test_a_handler_whose_code_changed_on_disk_since_it_was_loaded_is_refused(tmp_path):
    function = _function(tmp_path, "probe_changed")
    module = _load_handler_module(function)
    assert module.handler({}, None) == 1
    changed = (
        function.code_dir / "probe_changed_lib" / "values.py"
    )  # a module the handler imports, not the handler itself
    changed.write_text("VALUE = 22\n")
    os.utime(changed, ns=(1, 1))  # a different stamp even on a file system with coarse mtimes
    with pytest.raises(FunctionLoadError, match="changed on disk since this process loaded it"):
        _load_handler_module(function)


def test_a_run_after_one_whose_log_stream_closed_still_handles_its_batches(stack, embedded_aws):
    """The handler's logger and Powertools' metrics printer are the process's. A run that wrote them
    to a stream (the demo's starter.log) left them pointing at it once it closed; a later run without
    a stream then raised `ValueError: I/O operation on closed file` at every metrics flush, so every
    batch crashed after its work and SQS delivered it again until the redrive policy moved it to the
    dead-letter queue (a test that ran after the demo saw a second dead letter)."""
    earlier_log = io.StringIO()
    LocalPipeline(embedded_aws, stack, log_stream=earlier_log)
    earlier_log.close()

    pipeline = LocalPipeline(embedded_aws, stack)
    pipeline.send([order("order-after-closed-log")])
    pipeline.process(timeout=60)

    assert pipeline.event_source.stats.crashed_batches == 0, pipeline.event_source.stats.errors
    assert pipeline.event_source.stats.acknowledged == 1
    assert stack.client("sqs").receive_message(QueueUrl=stack.dead_letter_queue_url).get("Messages", []) == []


def test_a_new_runtime_retries_as_a_cold_sandbox_does_whatever_an_earlier_runtime_spent_of_the_retry_quota(stack):
    """botocore's standard retry mode keeps a retry quota per client (500 units; 14 per retried
    error, 5 per retried throttle; given back on success). The starter caches its clients per
    process, as a warm sandbox does. A runtime made later (the next test's) used to get the clients
    an earlier one had drained, so its StartExecution was tried once instead of three times: whether a
    test saw retries depended on the tests before it. A new runtime starts with clients of its own."""

    def refused() -> AWSError:
        return AWSError("Injected fault: InternalServerError", exception_type="InternalServerError", status=500)

    earlier = StarterRuntime(stack, log_stream=io.StringIO())
    attempts: list[int] = []
    with inject(StepFunctionsParserBackend, "start_execution", refused) as fault:
        for n in range(60):  # 28 units per refused record: the quota is spent within 18
            before = fault.injected
            assert failed_ids(earlier.invoke(sqs_event(sqs_record(order(f"quota-{n}"), message_id=f"m-{n}")))) == [
                f"m-{n}"
            ]
            attempts.append(fault.injected - before)
            if attempts[-1] == 1:
                break
    assert attempts[0] == 3 and attempts[-1] == 1, attempts  # the quota really was spent: no retry left

    later = StarterRuntime(stack, log_stream=io.StringIO())
    with inject(StepFunctionsParserBackend, "start_execution", refused) as fault:
        response = later.invoke(sqs_event(sqs_record(order("quota-later"), message_id="m-later")))
    assert failed_ids(response) == ["m-later"]
    assert fault.injected == 3
