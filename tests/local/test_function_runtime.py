"""The local runtime loads a function's handler once per process and refuses to go on with it once
its code changed on disk: a deploy reads template.yaml and the state machine again, so the old code
would run against the new definition (a long test run that mixed the two failed R1 for no fault of
the pipeline: the new dead-letter states read an input field the old starter did not write)."""

from __future__ import annotations

import io
import os

import pytest

from onceflow.local.function_runtime import FunctionLoadError, _load_handler_module
from onceflow.local.pipeline import LocalPipeline
from onceflow.local.stack import LocalFunction
from tests.support import order


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
