"""AWS's throughput quotas on the embedded engine (onceflow/engine/bookkeeping/quotas.py), off by default.

"Step Functions service quotas" (https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html):
StartExecution, StartSyncExecution and state transitions are token buckets (bucket size, refill
per second); a throttled call fails with ThrottlingException (HTTP 400); a throttled transition
delays the execution instead of failing it. SNS Publish over the quota answers `Throttled`
(https://docs.aws.amazon.com/sns/latest/api/API_Publish.html).
"""

from __future__ import annotations

import threading

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from onceflow.devtools.capacity.engine import engine_quotas
from onceflow.engine import REGION
from onceflow.engine.bookkeeping.quotas import (
    SNS_PUBLISH,
    START_EXECUTION_STANDARD,
    START_SYNC_EXECUTION,
    STATE_TRANSITION_STANDARD,
    BucketSpec,
    EngineQuotas,
    QuotaClock,
    VirtualClock,
)

PASS = {"StartAt": "A", "States": {"A": {"Type": "Pass", "Next": "B"}, "B": {"Type": "Pass", "End": True}}}


def no_retries(account, service: str):
    """One attempt per call: the test counts what the engine answered, not botocore's retries."""
    return boto3.client(
        service,
        endpoint_url=account.aws.endpoint_url,
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(inject_host_prefix=False, retries={"total_max_attempts": 1}),
    )


def test_start_execution_over_its_bucket_is_throttled_until_it_refills(account):
    machine = account.state_machine(PASS)
    sfn = no_retries(account, "stepfunctions")
    clock = QuotaClock()
    quotas = EngineQuotas({START_EXECUTION_STANDARD: BucketSpec(bucket=2, refill_per_second=0.5)}, clock)
    with account.aws.enforcing(quotas):
        sfn.start_execution(stateMachineArn=machine, name="one")
        sfn.start_execution(stateMachineArn=machine, name="two")
        with pytest.raises(ClientError) as raised:
            sfn.start_execution(stateMachineArn=machine, name="three")
        clock.advance(2.0)  # one token back at 0.5/s
        sfn.start_execution(stateMachineArn=machine, name="three")
    error = raised.value.response
    assert error["Error"]["Code"] == "ThrottlingException"
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert quotas.throttled() == {START_EXECUTION_STANDARD: 1}
    names = {e["name"] for e in sfn.list_executions(stateMachineArn=machine)["executions"]}
    assert names == {"one", "two", "three"}  # the throttled call started nothing


def test_quotas_are_off_unless_asked(account):
    machine = account.state_machine(PASS)
    sfn = no_retries(account, "stepfunctions")
    for i in range(20):
        sfn.start_execution(stateMachineArn=machine, name=f"free-{i}")
    assert account.aws.quotas.active is None


def test_start_sync_execution_has_its_own_bucket(account):
    machine = account.state_machine(PASS, kind="EXPRESS")
    sfn = no_retries(account, "stepfunctions")
    quotas = EngineQuotas({START_SYNC_EXECUTION: BucketSpec(bucket=1, refill_per_second=1)})
    with account.aws.enforcing(quotas):
        assert sfn.start_sync_execution(stateMachineArn=machine)["status"] == "SUCCEEDED"
        with pytest.raises(ClientError) as raised:
            sfn.start_sync_execution(stateMachineArn=machine)
    assert raised.value.response["Error"]["Code"] == "ThrottlingException"
    assert quotas.throttled() == {START_SYNC_EXECUTION: 1}


def test_a_throttled_state_transition_delays_the_execution_and_does_not_fail_it(account):
    clock = QuotaClock()
    quotas = EngineQuotas({STATE_TRANSITION_STANDARD: BucketSpec(bucket=1, refill_per_second=2)}, clock)
    with account.aws.enforcing(quotas):
        result = account.run(PASS)
    assert result.status == "SUCCEEDED"
    bucket = quotas.buckets[STATE_TRANSITION_STANDARD]
    assert (bucket.calls, bucket.throttled) == (2, 1)  # A took the token, B waited for the next
    assert bucket.delayed_seconds == pytest.approx(0.5)
    assert clock.now() == pytest.approx(0.5)


def test_sns_publish_over_its_quota_answers_throttled(account):
    sns = no_retries(account, "sns")
    topic = sns.create_topic(Name="quota-topic")["TopicArn"]
    quotas = EngineQuotas({SNS_PUBLISH: BucketSpec(bucket=1, refill_per_second=1)})
    with account.aws.enforcing(quotas):
        sns.publish(TopicArn=topic, Message="first")
        with pytest.raises(ClientError) as raised:
            sns.publish(TopicArn=topic, Message="second")
    assert raised.value.response["Error"]["Code"] == "Throttled"


def test_published_figures_scale_down_together():
    full, scaled = engine_quotas("us-east-1"), engine_quotas("us-east-1", scale=100)
    for name, spec in full.specs.items():
        small = scaled.specs[name]
        assert small.bucket == pytest.approx(spec.bucket / 100)
        assert small.bucket / small.refill_per_second == pytest.approx(spec.bucket / spec.refill_per_second)
    assert full.specs[START_EXECUTION_STANDARD] == BucketSpec(1300, 300)
    assert engine_quotas("eu-central-1").specs[START_EXECUTION_STANDARD] == BucketSpec(800, 150)


def test_sustained_step_functions_throttling_fault_counts_each_refusal(account):
    from onceflow.local.faults import step_functions_throttling

    machine = account.state_machine(PASS)
    sfn = no_retries(account, "stepfunctions")
    with step_functions_throttling() as fault:
        for name in ("a", "b", "c"):
            with pytest.raises(ClientError) as raised:
                sfn.start_execution(stateMachineArn=machine, name=name)
            assert raised.value.response["Error"]["Code"] == "ThrottlingException"
    sfn.start_execution(stateMachineArn=machine, name="after")
    assert (fault.calls, fault.injected) == (3, 3)
    assert [e["name"] for e in sfn.list_executions(stateMachineArn=machine)["executions"]] == ["after"]


def test_on_a_virtual_clock_a_throttled_transition_waits_until_the_driver_advances_it(account):
    """A benchmark's clock (benchmarks/capacity_bad_day.py): time moves only when advanced, so an
    execution throttled on its transitions waits however long the machine takes, and the driver
    sees it waiting (and until when) before it moves time on."""
    clock = VirtualClock()
    quotas = EngineQuotas({STATE_TRANSITION_STANDARD: BucketSpec(bucket=1, refill_per_second=2)}, clock)
    machine = account.state_machine(PASS)
    with account.aws.enforcing(quotas):
        execution = account.start(machine)
        waiting = threading.Event()
        for _ in range(1000):  # until the execution's thread reaches the clock (bounded: 10 s)
            if clock.sleeping() == 1 or waiting.wait(0.01):
                break
        assert clock.sleeping() == 1 and clock.next_wake() == pytest.approx(0.5)
        assert account.describe(execution)["status"] == "RUNNING"  # B waits: no time has passed
        assert clock.now() == 0.0
        clock.advance(0.5)
        for _ in range(1000):
            if account.describe(execution)["status"] != "RUNNING" or waiting.wait(0.01):
                break
    assert account.describe(execution)["status"] == "SUCCEEDED"
    assert clock.sleeping() == 0 and clock.now() == pytest.approx(0.5)
