"""The embedded AWS: moto in server mode on a loopback port, Step Functions execution on.

Plain boto3 clients, the AWS CLI and the tests talk to it with an endpoint URL. What is added to
moto is patched in one place here and checked against the pinned moto version:

- every request is handled under one lock, because moto's backends are not thread-safe
  (concurrent executions corrupt dictionaries, and a cancelled transaction's rollback restores a
  whole-table snapshot that silently undoes other executions' writes);
- Retry and Wait delays are scaled by `time_scale` (0 in tests: no real sleeping) and recorded,
  so tests can assert the backoff that was asked for; so are the SDK's own retry back-offs of the
  boto3 clients in this process (the functions running in-process retry throttled calls as botocore
  does on Lambda), recorded apart (`DelayClock.sdk_retry_delays`);
- a poll of an execution's status from this process waits on the engine, not on time
  (`DelayClock.poll_sleep`): every execution's end is counted (`ExecutionEnds`), and at time scale
  0 a poll's pause lasts until the next one, bounded. A pause that returned at once would spin
  against the execution's own thread for the interpreter lock and the request lock.

`start()` applies the engine's patches (registry.py lists them in order) and restores them on
`stop()`. The speed-ups (speedups/) are each switchable with `speedups=`; `history_budget=` bounds
what moto keeps of finished executions in a long run (bookkeeping/retention.py), `log_budget=` the
log events it keeps per log group (bookkeeping/log_budget.py), `quotas=` enforces AWS's throughput
quotas (bookkeeping/quotas.py).
"""

from __future__ import annotations

import collections
import contextlib
import os
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import requests
from botocore import endpoint as botocore_endpoint
from moto.moto_server import threaded_moto_server
from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl
from moto.stepfunctions.parser.asl.component.state.wait.wait_function import wait_function
from moto.stepfunctions.parser.backend import execution as parser_execution
from werkzeug.serving import make_server

from onceflow.engine import moto_shape, registry
from onceflow.engine import speedups as engine_speedups
from onceflow.engine.bookkeeping import log_budget as engine_log_budget
from onceflow.engine.bookkeeping import quotas as engine_quotas
from onceflow.engine.bookkeeping import retention
from onceflow.engine.iam.decide import IamSwitch
from onceflow.engine.moto_shape import MotoShapeError, Need, need
from onceflow.engine.speedups import batch_requests, collector_thresholds, direct_transport, keep_alive, request_headers
from onceflow.engine.stepfunctions.api import qualified_arns

REGION = "us-east-1"
ACCOUNT_ID = "123456789012"


_ABSENT = object()


# A moto that does not fit the patches (onceflow/engine/moto_shape.py) is this error.
EmbeddedAwsError = MotoShapeError


def moto_needs() -> list[Need]:
    """What this module patches or builds on (the engine modules declare their own)."""
    return [
        need(threaded_moto_server, "DomainDispatcherApplication"),
        need(threaded_moto_server, "create_backend_app"),
        need(threaded_moto_server, "MotoRequestHandler"),
        need(retrier_decl, "time"),
        need(botocore_endpoint, "time"),  # Endpoint._send_request sleeps through it between attempts
        need(wait_function.WaitFunction, "_wait_interval", "env", "wait_seconds"),
        need(parser_execution.BaseExecutionWorkerCommunication, "terminated"),  # where an execution ends
        need(parser_execution.Execution, "__init__", "state_machine"),  # sets state_machine_arn, counted per machine
    ]


class _QuietRequestHandler(
    keep_alive.KeepAliveRequestHandler, threaded_moto_server.MotoRequestHandler, request_headers.PlainHeadRequestHandler
):
    """moto's handler on kept connections (engine/speedups/keep_alive.py), plain request heads read without the
    email parser (engine/speedups/request_headers.py), without a log line per request."""

    def log_request(self, code: Any = "-", size: Any = "-") -> None:
        pass


class _SerializedApp:
    """WSGI wrapper: one request at a time, body fully produced inside the lock.

    The lock is re-entrant and shared with the in-process service integrations (speedups/), so
    a request that runs an execution to its end in its own thread can dispatch that execution's
    tasks without deadlocking on itself.
    """

    def __init__(
        self,
        app: Callable[..., Iterable[bytes]],
        lock: threading.RLock,
        after_request: Callable[[], None] | None = None,
    ):
        self._app = app
        self.lock = lock
        self._after_request = after_request

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        with self.lock:
            body = list(self._app(environ, start_response))
            if self._after_request is not None:
                self._after_request()
            return body


def _shut_down(server: Any) -> None:
    """server.shutdown(), without waiting for the idle server's next poll (up to SERVE_POLL_SECONDS:
    half a second off every engine's stop): while shutdown waits, a connection wakes its select; the
    server takes it, sees the request to stop and ends (the connection closes without a request)."""
    stopping = threading.Thread(target=server.shutdown, name="onceflow-embedded-aws-stop")
    stopping.start()
    while stopping.is_alive():
        with contextlib.suppress(OSError):
            socket.create_connection(server.server_address[:2], timeout=1).close()
        stopping.join(0.05)


class ExecutionEnds:
    """Counts the executions that ended in this process, and lets a thread wait for the next end.

    Counted after moto's end-of-execution bookkeeping and every patch on it
    (`BaseExecutionWorkerCommunication.terminated`): when a waiting thread wakes, DescribeExecution
    answers the final status with its output or error, and the status change event was sent.
    moto's backends are process-wide, so an embedded AWS counts every execution of the process;
    `count_of` counts one state machine's (its versions' and aliases' included)."""

    def __init__(self) -> None:
        self._ended = threading.Condition()
        self._count = 0
        self._by_machine: collections.Counter[str] = collections.Counter()

    @property
    def count(self) -> int:
        return self._count

    def count_of(self, state_machine_arn: str) -> int:
        """How many executions of this state machine ended in this process."""
        return self._by_machine[qualified_arns.split(state_machine_arn)[0]]

    def note(self, state_machine_arn: str | None = None) -> None:
        with self._ended:
            self._count += 1
            if state_machine_arn:
                self._by_machine[qualified_arns.split(state_machine_arn)[0]] += 1
            self._ended.notify_all()

    def wait_past(self, seen: int, timeout: float) -> int:
        """Return when more than `seen` executions have ended, or after `timeout` seconds (real)
        when none more did; the count then."""
        with self._ended:
            self._ended.wait_for(lambda: self._count > seen, timeout)
            return self._count


@dataclass
class DelayClock:
    """Replaces the sleeps of Retry and Wait: scaled, recorded, interruptible by the engine. Also
    the pause between the polls of an execution's status (`poll_sleep`)."""

    time_scale: float = 0.0
    retry_delays: list[float] = field(default_factory=list)
    wait_seconds: list[float] = field(default_factory=list)
    sdk_retry_delays: list[float] = field(default_factory=list)  # botocore's back-offs between attempts
    ends: ExecutionEnds = field(default_factory=ExecutionEnds)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _polls: threading.local = field(default_factory=threading.local)  # per thread: the ends it has seen

    def sleep(self, seconds: float) -> None:  # stands in for time.sleep in moto's retrier
        self._sleep_recorded(self.retry_delays, seconds)

    def sdk_sleep(self, seconds: float) -> None:  # stands in for time.sleep in botocore's retries
        self._sleep_recorded(self.sdk_retry_delays, seconds)

    def _sleep_recorded(self, record: list[float], seconds: float) -> None:
        with self._lock:
            record.append(seconds)
        if self.time_scale > 0:
            time.sleep(seconds * self.time_scale)

    def wait(self, env: Any, seconds: float) -> None:
        with self._lock:
            self.wait_seconds.append(seconds)
        if seconds > 0:
            # Waiting on the engine's event lets StopExecution interrupt the wait, as moto does.
            env.program_state_event.wait(seconds * self.time_scale if self.time_scale > 0 else 0)

    def poll_sleep(self, seconds: float) -> None:
        """Stands in for the pause between two polls of an execution's status (the starter's
        DescribeExecution loop, FIFO STANDARD): it waits for the work the poll waits for, not for
        time. It returns as soon as an execution ended since this thread's last pause (at once on
        the thread's first), or after `seconds` scaled by time_scale (or, at time scale 0, real
        seconds) when none did: a poll then neither sleeps for nothing nor spins."""
        bound = seconds * self.time_scale if self.time_scale > 0 else seconds
        self._polls.seen = self.ends.wait_past(getattr(self._polls, "seen", 0), bound)

    def reset(self) -> None:
        with self._lock:
            self.retry_delays.clear()
            self.wait_seconds.clear()
            self.sdk_retry_delays.clear()


class _TimeModule:
    """What a retrier sees as `time`: only sleep goes through the clock's `sleep_name` method (looked
    up at each call: a test may replace it on the clock)."""

    def __init__(self, clock: DelayClock, sleep_name: str = "sleep"):
        self._clock = clock
        self._sleep_name = sleep_name

    def sleep(self, seconds: float) -> None:
        getattr(self._clock, self._sleep_name)(seconds)

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


def _counting_ends(terminated: Callable[[Any], None], ends: ExecutionEnds) -> Callable[[Any], None]:
    """`terminated` (moto's, with the engine's patches on it), then the end counted."""

    def terminated_and_counted(communication: Any) -> None:
        try:
            terminated(communication)
        finally:
            ends.note(getattr(communication.execution, "state_machine_arn", None))

    return terminated_and_counted


IAM_SWITCH = "ONCEFLOW_IAM"  # `off`: the embedded AWS authorizes nothing (every caller may do anything)


def iam_enforced() -> bool:
    """IAM is enforced unless ONCEFLOW_IAM says off (also `0`, `false`, `no`)."""
    return os.environ.get(IAM_SWITCH, "on").strip().lower() not in ("off", "0", "false", "no")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class EmbeddedAws:
    """A moto server in this process. Use as a context manager or call start()/stop()."""

    _process_resets = 0  # every instance's resets: `generation`
    SERVE_POLL_SECONDS = 0.5  # socketserver's default: how often an idle server looks for shutdown

    def __init__(
        self,
        port: int | None = None,
        time_scale: float = 0.0,
        speedups: bool | str | Iterable[str] = True,
        history_budget: int | None = None,
        quotas: engine_quotas.EngineQuotas | None = None,
        log_budget: int | None = None,
        iam: bool | None = None,
    ):
        """`speedups`: True (all, less ONCEFLOW_SPEEDUPS_OFF), False, or names from speedups.NAMES.
        `history_budget`: keep the histories of at most this many finished executions (oldest are
        pruned; None keeps all, as tests that read every execution need). See bookkeeping/retention.py.
        `log_budget`: keep at most this many log events per log group, oldest dropped first (None
        keeps all). See bookkeeping/log_budget.py.
        `quotas`: AWS's throughput quotas enforced as token buckets (off when None): bookkeeping/quotas.py.
        `iam`: IAM enforced as AWS enforces it (docs/IAM.md); None reads ONCEFLOW_IAM (`off` turns it
        off, what it skips: every authorization; the calls still carry their roles' credentials)."""
        moto_shape.check_engine()
        self.port = port or free_port()
        self.clock = DelayClock(time_scale=time_scale)
        self.speedups = engine_speedups.resolve(speedups)
        self.retention = retention.Retention(history_budget) if history_budget is not None else None
        self.quotas = engine_quotas.QuotaSwitch(quotas)
        self.log_budget = engine_log_budget.LogBudget(log_budget) if log_budget is not None else None
        self.iam = IamSwitch(on=iam_enforced() if iam is None else iam)
        self._request_lock = threading.RLock()
        self._app: _SerializedApp | None = None
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._saved_patches: list[tuple[Any, str, Any]] = []
        self._previous_moto_port: str | None = None
        self._collector_was: collector_thresholds.Was | None = None  # the garbage collector before start()

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def generation(self) -> int:
        """How many times moto's backends were reset in this process: a stack deployed in an earlier
        generation is gone (unless kept: bookkeeping/worlds.py brings a deployment back). Counted for the
        process, not the instance: the backends are the process's, so another EmbeddedAws started here
        (a CLI command's, a plugin's) forgets this one's stacks too."""
        return EmbeddedAws._process_resets

    @property
    def lock(self) -> threading.RLock:
        """Held while a request (or an in-process integration call) is handled."""
        return self._request_lock

    def environment(self) -> dict[str, str]:
        """What a boto3 client or the AWS CLI needs to talk to this endpoint."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint_url,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_REGION": REGION,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
        }

    def start(self) -> EmbeddedAws:
        # Step Functions service integrations call back to localhost:$MOTO_PORT.
        self._previous_moto_port = os.environ.get("MOTO_PORT")
        os.environ["MOTO_PORT"] = str(self.port)
        self._patch(retrier_decl, "time", _TimeModule(self.clock))
        self._patch(botocore_endpoint, "time", _TimeModule(self.clock, "sdk_sleep"))
        clock = self.clock
        self._patch(
            wait_function.WaitFunction,
            "_wait_interval",
            lambda function, env, wait_seconds: clock.wait(env, wait_seconds),
        )
        for owner, name, replacement in registry.patches(
            speedups=self.speedups,
            request_lock=self._request_lock,
            quotas=self.quotas,
            clock=self.clock,
            iam=self.iam,
        ):
            self._patch(owner, name, replacement)
        for owner, name, replacement in self.log_budget.patches() if self.log_budget is not None else []:
            self._patch(owner, name, replacement)
        self._patch(
            parser_execution.BaseExecutionWorkerCommunication,
            "terminated",
            _counting_ends(parser_execution.BaseExecutionWorkerCommunication.terminated, self.clock.ends),
        )
        self._app = _SerializedApp(
            threaded_moto_server.DomainDispatcherApplication(threaded_moto_server.create_backend_app),
            self._request_lock,
            after_request=self.retention.after_request if self.retention is not None else None,
        )
        self._server = make_server(  # clients in other processes may also batch their calls (batch_requests.py)
            "127.0.0.1",
            self.port,
            batch_requests.Batching(self._app),
            threaded=True,
            request_handler=_QuietRequestHandler,
        )
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            args=(self.SERVE_POLL_SECONDS,),
            name="onceflow-embedded-aws",
            daemon=True,
        )
        self._thread.start()
        if engine_speedups.DIRECT_TRANSPORT in self.speedups:
            direct_transport.serve(self.endpoint_url, self._app)
        if engine_speedups.COLLECTOR_THRESHOLDS in self.speedups:
            self._collector_was = collector_thresholds.raised()
        # moto's backends are process-wide: a new endpoint starts from an empty account.
        self.reset()
        return self

    def configure(self) -> None:
        """Turn on Step Functions execution (a reset turns it off again)."""
        response = requests.post(
            f"{self.endpoint_url}/moto-api/config",
            json={"stepfunctions": {"execute_state_machine": True}},
            timeout=10,
        )
        response.raise_for_status()

    def reset(self) -> None:
        """Forget every resource (stop running executions first) and configure again."""
        requests.post(f"{self.endpoint_url}/moto-api/reset", timeout=30).raise_for_status()
        EmbeddedAws._process_resets += 1
        self.configure()
        self.clock.reset()
        self.iam.denials.clear()
        if self.retention is not None:
            self.retention.reset()

    def stop(self) -> None:
        direct_transport.forget(self.endpoint_url)
        if self._server is not None:
            _shut_down(self._server)
            self._server.server_close()
            keep_alive.close_kept(self._server)  # kept connections of clients in other processes
        if self._thread is not None:
            self._thread.join(timeout=10)
        for owner, name, original in reversed(self._saved_patches):
            if original is _ABSENT:
                delattr(owner, name)
            else:
                setattr(owner, name, original)
        self._saved_patches.clear()
        if self._collector_was is not None:
            collector_thresholds.restore(self._collector_was)
            self._collector_was = None
        if self._previous_moto_port is None:
            os.environ.pop("MOTO_PORT", None)
        else:
            os.environ["MOTO_PORT"] = self._previous_moto_port
        self._server = None

    @contextlib.contextmanager
    def enforcing(self, quotas: engine_quotas.EngineQuotas) -> Iterator[engine_quotas.EngineQuotas]:
        """Enforce these quotas while the block runs (the engine started with none or others)."""
        before, self.quotas.active = self.quotas.active, quotas
        try:
            yield quotas
        finally:
            self.quotas.active = before

    def _patch(self, owner: Any, name: str, value: Any) -> None:
        # A class's own attribute is saved as defined (an API moto lacks, such as TestState, is
        # absent: added here, removed again on stop).
        original = owner.__dict__.get(name, _ABSENT) if isinstance(owner, type) else getattr(owner, name)
        self._saved_patches.append((owner, name, original))
        setattr(owner, name, value)

    def __enter__(self) -> EmbeddedAws:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
