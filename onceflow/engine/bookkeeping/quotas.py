"""AWS's throughput quotas on the embedded engine, when asked (off by default): token buckets.

References: "Step Functions service quotas"
(https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html): StartExecution,
StartSyncExecution and state transitions are token buckets per account and region (a bucket size
and a refill rate per second); a throttled API call fails with `ThrottlingException` (HTTP 400,
"Rate exceeded"); a throttled state transition delays the execution (CloudWatch
`ExecutionThrottled`), it does not fail it. SNS Publish over the region's quota answers `Throttled`
(https://docs.aws.amazon.com/sns/latest/api/API_Publish.html, HTTP 400), which a Step Functions
task sees as `SNS.ThrottledException`.

The buckets refill on a `QuotaClock`: simulated seconds, the real time elapsed divided by the
engine's `time_scale` (plus whatever was advanced by hand); with `time_scale` 0 (tests) time moves
only when advanced, and a delayed transition advances it by its own delay. A `VirtualClock` (a
benchmark's) moves only when its driver advances it, and a delayed transition waits for that. Figures come from
onceflow/devtools/capacity/quotas.json (`onceflow.devtools.capacity.engine_quotas`), optionally
scaled down with the clock by a benchmark. DynamoDB throughput is not enforced here (the fault
kinds in onceflow/local/faults.py inject its throttling).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from moto.core.exceptions import AWSError
from moto.sns.exceptions import SNSException
from moto.sns.models import SNSBackend
from moto.stepfunctions.parser.api import StateMachineType
from moto.stepfunctions.parser.asl.component.state.state import CommonStateField
from moto.stepfunctions.responses import StepFunctionResponse

from onceflow.engine.registry import current

Patch = tuple[Any, str, Any]

START_EXECUTION_STANDARD = "StartExecution.STANDARD"
START_EXECUTION_EXPRESS = "StartExecution.EXPRESS"
START_SYNC_EXECUTION = "StartSyncExecution"
STATE_TRANSITION_STANDARD = "StateTransition.STANDARD"
SNS_PUBLISH = "SNS.Publish"
BUCKETS = (
    START_EXECUTION_STANDARD,
    START_EXECUTION_EXPRESS,
    START_SYNC_EXECUTION,
    STATE_TRANSITION_STANDARD,
    SNS_PUBLISH,
)


class QuotaClock:
    """Simulated seconds: real elapsed time / time_scale, plus what `advance` added."""

    def __init__(self, time_scale: float = 0.0):
        self.time_scale = time_scale
        self._started = time.monotonic()
        self._advanced = 0.0
        self._lock = threading.Lock()

    def now(self) -> float:
        running = (time.monotonic() - self._started) / self.time_scale if self.time_scale > 0 else 0.0
        with self._lock:
            return running + self._advanced

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._advanced += seconds

    def sleep(self, seconds: float) -> None:
        """Wait `seconds` of simulated time."""
        if self.time_scale > 0:
            time.sleep(seconds * self.time_scale)
        else:
            self.advance(seconds)


class VirtualClock(QuotaClock):
    """Simulated seconds that pass only when `advance`d, whatever the machine's speed: a benchmark's
    clock. A thread that sleeps on it (a throttled transition) waits until the driver (the
    benchmark's loop) advances it past its wake-up time; `sleeping` and `next_wake` let the driver
    see that every such thread waits, and when the first would wake."""

    def __init__(self) -> None:
        super().__init__(0.0)
        self._moved = threading.Condition(self._lock)
        self._wakes: dict[int, float] = {}  # sleeping thread -> its wake-up time

    def now(self) -> float:
        with self._lock:
            return self._advanced

    def advance(self, seconds: float) -> None:
        with self._moved:
            self._advanced += max(0.0, seconds)
            self._moved.notify_all()

    def sleep(self, seconds: float) -> None:
        me = threading.get_ident()
        with self._moved:
            self._wakes[me] = self._advanced + seconds
            try:
                while self._advanced < self._wakes[me]:
                    self._moved.wait(timeout=1.0)
            finally:
                del self._wakes[me]

    def sleeping(self) -> int:
        with self._lock:
            return len(self._wakes)

    def next_wake(self) -> float | None:
        with self._lock:
            return min(self._wakes.values(), default=None)


@dataclass(frozen=True)
class BucketSpec:
    bucket: float
    refill_per_second: float


@dataclass
class TokenBucket:
    name: str
    spec: BucketSpec
    clock: QuotaClock
    tokens: float = -1.0
    updated: float = 0.0
    calls: int = 0
    throttled: int = 0
    delayed_seconds: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.tokens = self.spec.bucket  # a bucket starts full
        self.updated = self.clock.now()

    def _refill(self) -> None:
        now = self.clock.now()
        self.tokens = min(self.spec.bucket, self.tokens + (now - self.updated) * self.spec.refill_per_second)
        self.updated = now

    def take(self, tokens: float = 1.0) -> bool:
        """`tokens` at once, or False (counted as throttled)."""
        with self._lock:
            self.calls += 1
            self._refill()
            if self.tokens >= tokens:
                self.tokens -= tokens
                return True
            self.throttled += 1
            return False

    def wait(self) -> float:
        """One token, waiting for it on the clock if none is there; returns the simulated wait."""
        waited = 0.0
        with self._lock:
            self.calls += 1
        while True:
            with self._lock:
                self._refill()
                if self.tokens >= 1:
                    self.tokens -= 1
                    self.delayed_seconds += waited
                    return waited
                missing = (1 - self.tokens) / self.spec.refill_per_second
                if waited == 0:
                    self.throttled += 1
            self.clock.sleep(missing)
            waited += missing


@dataclass
class EngineQuotas:
    """The buckets the engine enforces; a name left out is not limited."""

    specs: dict[str, BucketSpec]
    clock: QuotaClock = field(default_factory=QuotaClock)
    region: str = "us-east-1"
    scale: float = 1.0  # the figures were divided by this (a benchmark's smaller world)
    buckets: dict[str, TokenBucket] = field(init=False)

    def __post_init__(self) -> None:
        unknown = set(self.specs) - set(BUCKETS)
        if unknown:
            raise ValueError(f"unknown quota buckets: {', '.join(sorted(unknown))} (known: {', '.join(BUCKETS)})")
        self.buckets = {name: TokenBucket(name, spec, self.clock) for name, spec in self.specs.items()}

    def take(self, name: str) -> bool:
        bucket = self.buckets.get(name)
        return True if bucket is None else bucket.take()

    def wait(self, name: str) -> float:
        bucket = self.buckets.get(name)
        return 0.0 if bucket is None else bucket.wait()

    def throttled(self) -> dict[str, int]:
        return {name: bucket.throttled for name, bucket in self.buckets.items()}


class QuotaSwitch:
    """Which quotas the engine enforces now: none (the default) or one EngineQuotas."""

    def __init__(self, active: EngineQuotas | None = None):
        self.active = active


class ThrottlingException(AWSError):
    """Step Functions' answer to a call over its bucket."""

    TYPE = "ThrottlingException"
    STATUS = 400

    def __init__(self) -> None:
        super().__init__("Rate exceeded", exception_type=self.TYPE, status=self.STATUS)


class SnsThrottled(SNSException):
    code = "Throttled"

    def __init__(self) -> None:
        super().__init__("Rate exceeded")


def _state_machine_type(response: StepFunctionResponse) -> Any:
    try:
        return response.stepfunction_backend.describe_state_machine(response._get_param("stateMachineArn")).type
    except Exception:  # the original call reports the unknown machine as AWS does
        return None


def _throttled_start(original: Callable[..., Any], switch: QuotaSwitch) -> Callable[..., Any]:
    def start_execution(self: StepFunctionResponse) -> Any:
        quotas = switch.active
        if quotas is None:
            return original(self)
        kind = _state_machine_type(self)
        name = START_EXECUTION_EXPRESS if kind == StateMachineType.EXPRESS else START_EXECUTION_STANDARD
        if kind is not None and not quotas.take(name):
            raise ThrottlingException()
        return original(self)

    return start_execution


def _throttled_sync_start(original: Callable[..., Any], switch: QuotaSwitch) -> Callable[..., Any]:
    def start_sync_execution(self: StepFunctionResponse) -> Any:
        quotas = switch.active
        if quotas is None:
            return original(self)
        if _state_machine_type(self) is not None and not quotas.take(START_SYNC_EXECUTION):
            raise ThrottlingException()
        return original(self)

    return start_sync_execution


def _delayed_transition(original: Callable[..., Any], switch: QuotaSwitch) -> Callable[..., Any]:
    def _eval_body(self: CommonStateField, env: Any) -> Any:
        quotas = switch.active
        if quotas is not None and env.execution_type == StateMachineType.STANDARD:
            quotas.wait(STATE_TRANSITION_STANDARD)
        return original(self, env)

    return _eval_body


def _throttled_publish(original: Callable[..., Any], switch: QuotaSwitch) -> Callable[..., Any]:
    def publish(self: SNSBackend, *args: Any, **kwargs: Any) -> Any:
        quotas = switch.active
        if quotas is not None and not quotas.take(SNS_PUBLISH):
            raise SnsThrottled()
        return original(self, *args, **kwargs)

    return publish


def moto_needs() -> list[Any]:
    from onceflow.engine.moto_shape import need

    return [
        need(StepFunctionResponse, "start_execution"),
        need(StepFunctionResponse, "stepfunction_backend"),
        need(StepFunctionResponse, "_get_param"),
        need(CommonStateField, "_eval_body", "env"),
        need(SNSBackend, "publish"),
    ]


def patches(quotas: QuotaSwitch | None, before: list[Patch]) -> list[Patch]:
    """The buckets around what the engine serves (around the engine's own replacements in `before`);
    each lets every call through while `quotas.active` is None."""
    if quotas is None:
        return []

    wrapped = [
        (StepFunctionResponse, "start_execution", _throttled_start),
        (
            StepFunctionResponse,
            "start_sync_execution",
            _throttled_sync_start,
        ),  # the engine's (stepfunctions/api/sync_execution.py)
        (CommonStateField, "_eval_body", _delayed_transition),
        (SNSBackend, "publish", _throttled_publish),
    ]
    return [
        (owner, name, wrap(original, quotas))
        for owner, name, wrap in wrapped
        if (original := current(before, owner, name)) is not None
    ]
