"""The cost model counts what AWS bills: transitions from the history, DynamoDB units from item
sizes, and prices the single-Lambda floor from the same operations."""

from __future__ import annotations

import pytest

from onceflow.devtools.cost import MixError, floor_cost, load_prices, parse_mix
from onceflow.devtools.cost.measure import Bench, Execution, Measurement
from onceflow.devtools.cost.paths import PATHS
from onceflow.devtools.cost.recorder import PRODUCER, WORKFLOW, Call
from onceflow.devtools.cost.settings import CostSettings
from onceflow.devtools.cost.units import item_size, write_units
from onceflow.local.template import TEMPLATE_PATH

NEW_EVENT = next(spec for spec in PATHS if spec.key == "new")


def test_billed_transitions_are_the_states_entered_plus_retries_in_the_history(embedded_aws):
    """Standard bills each state entered and each retry: https://aws.amazon.com/step-functions/pricing/"""
    bench = Bench(embedded_aws, TEMPLATE_PATH)
    bench.fresh()
    measured = NEW_EVENT.run(bench)

    [execution] = measured.executions
    entered = [event for event in execution.history if event["type"].endswith("StateEntered")]
    scheduled = [event for event in execution.history if event["type"] == "TaskScheduled"]
    task_states = [event for event in entered if event["type"] == "TaskStateEntered"]
    failures = [e for e in execution.history if e["type"].endswith("Failed")]
    assert execution.status == "SUCCEEDED", failures
    assert measured.billed_transitions == len(entered) + len(scheduled) - len(task_states)
    assert measured.billed_transitions == len(execution.path), "no retries on the happy path"
    workflow_calls = [call.action for call in measured.calls_by(WORKFLOW)]
    assert workflow_calls.count("Publish") == 1
    assert [call.action for call in measured.calls_by(PRODUCER)] == ["SendMessage"]


def test_a_transaction_of_two_items_costs_two_write_units_per_item_per_kb():
    """https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-capacity-handling"""
    small = {"event_id": {"S": "order-1"}, "status": {"S": "pending"}}  # 8+7 + 6+7 = 28 bytes
    large = {"order_id": {"S": "order-1"}, "payload": {"S": "x" * 1500}}  # 8+7 + 7+1500 bytes: 2 KB
    assert item_size(small) == 28
    assert item_size(large) == 1522
    assert write_units(item_size(small), transactional=True) + write_units(item_size(large), transactional=True) == 6
    assert write_units(item_size(large)) == 2
    assert item_size({"n": {"N": "12345"}, "m": {"M": {"a": {"BOOL": True}}}, "l": {"L": [{"NULL": True}]}}) == (
        1 + 4 + 1 + (3 + 1 + 1 + 1) + 1 + (3 + 1 + 1)
    )


def _settings(batch_size: int = 10) -> CostSettings:
    return CostSettings(
        memory_mb=1024,
        architecture="arm64",
        batch_size=batch_size,
        state_machine_type="STANDARD",
        log_level="OFF",
        include_execution_data=False,
    )


def test_the_floor_prices_the_same_operations_in_one_lambda_per_batch():
    prices = load_prices()
    assumed = prices.assumptions
    calls = (
        Call(PRODUCER, "sqs", "SendMessage", 300, "queue", True),
        Call("starter", "stepfunctions", "StartExecution", 700, "", True),
        Call(WORKFLOW, "dynamodb", "TransactWriteItems", 1300, "", True, write_units=4.0),
        Call(WORKFLOW, "sns", "Publish", 600, "topic", True),
        Call(WORKFLOW, "dynamodb", "UpdateItem", 700, "table", True, write_units=1.0),
    )
    history = [{"type": "ExecutionStarted", "id": 1}]
    measured = Measurement(
        path="new",
        deliveries=1,
        calls=calls,
        executions=(Execution("arn:x", "SUCCEEDED", history),),
        starter_log_bytes=0,
        starter_invocations=1,
        records=1,
        retry_delay_seconds=0.0,
    )
    floor = floor_cost(measured, _settings(), prices)

    data_call_ms = 2 * assumed.call_ms("dynamodb") + assumed.call_ms("sns")  # no StartExecution in one Lambda
    lambda_ms = assumed.lambda_per_record_ms + assumed.lambda_invocation_overhead_ms / 10 + data_call_ms
    expected = {
        "Step Functions": 0.0,
        "DynamoDB": 5 * prices["dynamodb_on_demand_per_write_unit"],
        "SNS": prices["sns_per_publish"],
        # the producer's send, and one receive and one delete per batch of 10
        "SQS": (1 + 2 / 10) * prices["sqs_per_request"],
        "Lambda": prices["lambda_per_request"] / 10 + lambda_ms / 1000 * 1.0 * prices["lambda_arm64_per_gb_second"],
        "CloudWatch Logs": assumed.lambda_platform_log_bytes_per_invocation
        / 10
        / 1024**3
        * prices["cloudwatch_logs_per_gb_ingested"],
    }
    assert floor.parts == pytest.approx(expected)


def test_the_mix_is_normalised_and_a_bad_mix_is_one_clear_line():
    assert parse_mix("new=70,redelivered=25,pending=5") == pytest.approx(
        {"new": 0.70, "redelivered": 0.25, "pending": 0.05}
    )
    assert parse_mix("new=1, conflict=1") == {"new": 0.5, "conflict": 0.5}
    for bad, says in (
        ("new=70,resent=30", "unknown path 'resent'"),
        ("new", "not PATH=PERCENT"),
        ("new=x", "not a number"),
    ):
        with pytest.raises(MixError) as raised:
            parse_mix(bad)
        message = str(raised.value)
        assert says in message and "\n" not in message
        assert "new, redelivered, pending" in message, "it names the paths it accepts"


def test_the_cost_command_reports_a_bad_mix_in_one_line():
    from typer.testing import CliRunner

    from onceflow.cli import app

    result = CliRunner().invoke(app, ["cost", "--mix", "new=70,resent=30"])
    assert result.exit_code == 2
    [line] = [line for line in result.output.splitlines() if line.strip()]
    assert "unknown path 'resent'" in line


def test_express_is_measured_from_its_own_synchronous_executions(embedded_aws):
    """EXPRESS bills $1.00 per million requests plus GB-seconds (https://aws.amazon.com/step-functions/pricing/):
    the execution counted and its states (for the duration) come from the Express run itself, not
    from STANDARD's history, which AWS would not have (GetExecutionHistory is Standard-only)."""
    from onceflow.devtools.cost.run import _express_runs_synchronously

    bench = Bench(embedded_aws, TEMPLATE_PATH, {"StateMachineType": "EXPRESS"})
    bench.fresh()
    measured = NEW_EVENT.run(bench)

    [execution] = measured.executions
    assert ":express:" in execution.arn and execution.status == "SUCCEEDED"
    assert execution.path == ["Record event and business item", "Publish notification", "Mark as sent"]
    assert "StartSyncExecution" in {call.action for call in measured.calls_by("starter")}
    assert _express_runs_synchronously({"new": measured}) is None, "not modelled from STANDARD"


def test_the_tables_keep_every_dollar_figure_whole_at_80_columns_and_mark_the_jittered_ones(embedded_aws):
    """The dead-lettered path retries Publish with FULL jitter: its EXPRESS duration, and so its
    EXPRESS figure, includes delays drawn at random, which the page says; at 80 columns no figure is
    cut to `$130.…` (EXPRESS modelled from the STANDARD run here, as `cost` does when it must)."""
    import io

    from rich.console import Console

    from onceflow.devtools.cost import print_cost_run
    from onceflow.devtools.cost.run import CostRun, ModeRun, _measure_all
    from onceflow.devtools.cost.settings import read_settings

    paths = tuple(spec for spec in PATHS if spec.key in ("new", "dead_lettered"))
    measured = _measure_all(embedded_aws, TEMPLATE_PATH, {}, paths)
    settings = read_settings(TEMPLATE_PATH)
    run = CostRun(
        str(TEMPLATE_PATH),
        load_prices(),
        {
            "STANDARD": ModeRun("STANDARD", settings, measured),
            "EXPRESS": ModeRun("EXPRESS", settings, measured, modelled_because="not measured in this test"),
        },
    )
    assert measured["dead_lettered"].retry_delay_seconds > 0 and measured["new"].retry_delay_seconds == 0
    out = io.StringIO()
    print_cost_run(run, {"new": 0.9, "dead_lettered": 0.1}, Console(file=out, width=80))
    text = out.getvalue()

    for mode in ("STANDARD", "EXPRESS"):
        for path in measured:
            assert f"${run.path_cost(mode, path).per_million():,.2f}" in text, (mode, path)
        assert f"${run.mix(mode, {'new': 0.9, 'dead_lettered': 0.1}).per_million():,.2f}" in text, mode
    assert "$…" not in text.replace(" ", "") and ".…" not in text
    assert f"${run.path_cost('EXPRESS', 'dead_lettered').per_million():,.2f}*" in text
    assert f"${run.path_cost('EXPRESS', 'new').per_million():,.2f}*" not in text
    assert "these figures vary from run to run" in " ".join(text.split())


def test_a_batch_read_costs_each_key_as_its_own_get_item(stack):
    """BatchGetItem (the starter's look-up of events already sent, the reconciler's markers) is billed
    as one GetItem per key: each item's size rounded up to 4 KB, a key with no item the minimum, half
    for an eventually consistent table's keys
    (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html,
    "Read request units and read capacity units": BatchGetItem)."""
    from types import SimpleNamespace

    from onceflow.devtools.cost.recorder import _Units
    from onceflow.engine import ACCOUNT_ID, REGION

    dynamodb = stack.client("dynamodb")
    tables = ("cost-batch-a", "cost-batch-b")
    for table in tables:
        dynamodb.create_table(
            TableName=table,
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
    dynamodb.put_item(TableName=tables[0], Item={"pk": {"S": "big"}, "blob": {"S": "x" * 5_000}})
    dynamodb.put_item(TableName=tables[0], Item={"pk": {"S": "small"}})
    dynamodb.put_item(TableName=tables[1], Item={"pk": {"S": "small"}})
    request = {
        tables[0]: {"Keys": [{"pk": {"S": key}} for key in ("big", "small", "none")], "ConsistentRead": True},
        tables[1]: {"Keys": [{"pk": {"S": "small"}}]},
    }
    units = _Units(
        SimpleNamespace(current_account=ACCOUNT_ID, region=REGION), "BatchGetItem", {"RequestItems": request}
    )
    assert units.compute("") == (2 + 1 + 1 + 0.5, 0.0)
