"""The capacity model: each limit from the dated quotas file and the template's parameters, the
binding one first, and the template's defaults sized from it.

Quotas: https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html (token buckets),
https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html (MaximumConcurrency)."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
from typer.testing import CliRunner

from onceflow.cli import app
from onceflow.devtools.capacity import (
    DefinitionMismatch,
    capacity_for,
    load_quotas,
    model_capacity,
    read_capacity_settings,
    sized_maximum_concurrency,
)
from onceflow.devtools.capacity.model import batch_seconds
from onceflow.devtools.capacity.quotas import QUOTAS_PATH
from onceflow.devtools.cost.prices import load_prices
from onceflow.local.template import TEMPLATE_PATH

ASSUMED = load_prices().assumptions


@pytest.fixture(scope="module")
def capacities():
    return {c.label: c for c in capacity_for(TEMPLATE_PATH, "us-east-1")}


def test_every_quota_is_dated_and_cites_an_aws_page():
    data = json.loads(QUOTAS_PATH.read_text())
    assert data["as_of"]
    for key, entry in data["quotas"].items():
        assert entry["source"].startswith("https://docs.aws.amazon.com/"), key
        assert entry["throttled_as"], key


def test_standard_binds_on_the_starter_sized_below_start_execution(capacities):
    standard = capacities["STANDARD"]
    start = load_quotas("us-east-1")["stepfunctions_start_execution_standard"]
    lambda_limit = next(lim for lim in standard.limits if lim.name.startswith("Lambda"))
    settings = standard.settings
    assert lambda_limit.events_per_second == pytest.approx(
        settings.maximum_concurrency * settings.batch_size / batch_seconds(settings, ASSUMED)
    )
    assert standard.binding is lambda_limit
    assert standard.next_limit.name == "Step Functions StartExecution"
    assert standard.next_limit.events_per_second == start["refill_per_second"]
    assert standard.sustained < start["refill_per_second"]


def test_template_default_concurrency_is_the_sized_one_so_1x_is_never_throttled(capacities):
    """At 1x the modelled rate the starter stays below every Step Functions bucket's refill (standard
    sources; a FIFO source's concurrency is its active message groups, `--groups`)."""
    standard_sources = [c for c in capacities.values() if not c.settings.fifo]
    sized = min(sized_maximum_concurrency(c) for c in standard_sources)
    assert all(c.settings.maximum_concurrency == sized for c in standard_sources)
    for capacity in standard_sources:
        others = [lim for lim in capacity.ranked if not lim.name.startswith("Lambda")]
        assert capacity.sustained <= min(lim.events_per_second for lim in others)


def test_unsized_concurrency_lets_start_execution_bind_first():
    settings = read_capacity_settings(TEMPLATE_PATH, {"MaximumConcurrency": "20"})
    capacity = model_capacity(settings, load_quotas("us-east-1"), ASSUMED)
    assert capacity.binding.name == "Step Functions StartExecution"
    assert capacity.burst_events == 1300
    assert sized_maximum_concurrency(capacity) == 8


def test_smaller_regions_have_smaller_buckets_and_a_smaller_sized_concurrency():
    settings = read_capacity_settings(TEMPLATE_PATH)
    capacity = model_capacity(settings, load_quotas("eu-central-1"), ASSUMED)
    start = next(lim for lim in capacity.limits if lim.name == "Step Functions StartExecution")
    assert (start.events_per_second, start.burst_events) == (150, 800)
    assert capacity.binding is start
    assert sized_maximum_concurrency(capacity) < settings.maximum_concurrency


def test_express_has_no_transition_limit_and_waits_for_each_execution(capacities):
    express = capacities["EXPRESS"]
    names = {lim.name for lim in express.limits}
    assert "Step Functions state transitions" not in names
    assert "Step Functions StartSyncExecution" in names
    assert batch_seconds(express.settings, ASSUMED) > batch_seconds(capacities["STANDARD"].settings, ASSUMED) / 10


def test_drain_time_is_the_backlog_over_the_spare_rate(capacities):
    standard = capacities["STANDARD"]
    assert standard.drain_seconds(1000) == pytest.approx(1000 / standard.sustained)
    assert standard.drain_seconds(1000, standard.sustained / 2) == pytest.approx(2000 / standard.sustained)
    assert math.isinf(standard.drain_seconds(1, standard.sustained))
    assert standard.backlog_after(3 * standard.sustained, 3600) == pytest.approx(2 * standard.sustained * 3600)


def test_a_path_naming_a_state_the_asl_lacks_is_an_error(capacities):
    settings = capacities["STANDARD"].settings
    states = dict(settings.definition["States"])
    states["Published"] = states.pop("Publish notification")
    renamed = dataclasses.replace(settings, definition={**settings.definition, "States": states})
    with pytest.raises(DefinitionMismatch, match="Publish notification"):
        model_capacity(renamed, load_quotas("us-east-1"), ASSUMED)


def test_cli_prints_each_mode_and_refuses_a_bad_region_in_one_line():
    runner = CliRunner()
    printed = runner.invoke(app, ["capacity", "--backlog", "5000"])
    assert printed.exit_code == 0, printed.output
    assert "STANDARD in us-east-1" in printed.output and "EXPRESS in us-east-1" in printed.output
    assert "STANDARD FIFO in us-east-1" in printed.output
    refused = runner.invoke(app, ["capacity", "--region", "moon"])
    assert refused.exit_code != 0
    assert "--region" in refused.output and "Traceback" not in refused.output


def test_fifo_standard_binds_on_describe_execution_the_starter_polls(capacities):
    """FIFO with STANDARD executions: the starter waits for each one with DescribeExecution, whose
    bucket refills 15/s in the large regions ("Step Functions service quotas", other quotas)."""
    fifo = capacities["STANDARD FIFO"]
    assert fifo.binding.name.startswith("Step Functions DescribeExecution")
    assert (
        fifo.binding.events_per_second
        == load_quotas("us-east-1")["stepfunctions_describe_execution"]["refill_per_second"]
    )
