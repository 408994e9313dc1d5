"""`onceflow`: run, feed, inspect and trace the pipeline on the embedded AWS (or a stack on AWS).

`start` and `demo` run the embedded AWS in this process. The other commands are clients: they
find the stack through its CloudFormation outputs with boto3 alone (no moto, no SAM translator),
on the local endpoint by default or on AWS with `--aws --stack-name NAME`.
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
import time
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.table import Table
from typer.core import TyperGroup
from typer.exceptions import TyperException

from onceflow import cli_checks

if TYPE_CHECKING:
    from onceflow.local.report import RunReport
    from onceflow.ops.redrive import RedriveReport
    from onceflow.ops.stack import StackResources

DEFAULT_PORT = 4747  # not 5000: macOS's AirPlay receiver listens there
DEFAULT_ENDPOINT = f"http://127.0.0.1:{DEFAULT_PORT}"
DEFAULT_STACK_NAME = "onceflow-local"
console = Console()


class Mode(StrEnum):
    STANDARD = "STANDARD"
    EXPRESS = "EXPRESS"


class Source(StrEnum):
    """The template's SourceQueueType (`--source fifo`: a FIFO queue, the events spread over message groups)."""

    STANDARD = "standard"
    FIFO = "fifo"


class CommandError(TyperException):
    """Something the user can fix (no stack running, a name that does not exist): one line, exit 1."""


class _OneLineErrors(TyperGroup):
    """A user's mistake gets one line on stderr naming the value and what is allowed, never a traceback."""

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        argv = list((args[0] if args else kwargs.get("args")) or sys.argv[1:])
        words = [w for w in argv if not w.startswith("-")]
        command = f"onceflow {words[0]}" if words and words[0] in self.commands else "onceflow"
        from onceflow.cli_values import install

        install()  # plain option values without pydantic (issue 21: `status` under 1 s)
        try:
            code = super().main(*args, standalone_mode=False, **kwargs)
        except TyperException as error:
            if type(error).__name__ == "NoArgsIsHelpError":
                typer.echo(error.format_message())
                code = 2
            else:
                typer.echo(f"{command}: {_one_line(_naming_the_value(error, argv))}", err=True)
                code = error.exit_code
        except typer.Abort:
            typer.echo("aborted", err=True)
            code = 1
        except BrokenPipeError:  # `onceflow status | head`: the reader left; nothing more to say
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            code = 1
        except OSError as error:
            if error.filename is None:
                raise
            # A file a command reads or writes beyond what its options' checks could foresee.
            typer.echo(f"{command}: {error.filename}: {(error.strerror or str(error)).lower()}", err=True)
            code = 1
        except Exception as error:
            told = _aws_failure(error)
            if told is None:
                raise
            typer.echo(f"{command}: {_one_line(told)}", err=True)
            code = 1
        if not standalone_mode:
            return code
        sys.exit(code if isinstance(code, int) else 0)


def _one_line(message: str) -> str:
    """A refusal is one line: a multi-line message (a YAML parser's, say) is joined into one."""
    return " ".join(message.split()) if "\n" in message else message


def _naming_the_value(error: TyperException, argv: list[str]) -> str:
    """typer's refusal of a value it could not convert names the option, not the value: add it."""
    from onceflow.cli_checks import given_value

    param = getattr(error, "param", None)
    value = given_value(argv, param) if isinstance(error, typer.BadParameter) and param is not None else None
    inner = str(getattr(error, "message", "")).removeprefix("Value error, ")
    if value is None or repr(value) in inner or inner.startswith(f"{value}:"):
        if hasattr(error, "message"):
            error.message = inner
        return error.format_message()
    bound = re.search(r"(greater|less) than or equal to (\S+)", inner)
    if "valid integer" in inner:
        inner = "not a whole number"
    elif "valid number" in inner:
        inner = "not a number"
    elif bound:
        inner = f"must be {bound[2]} or {'more' if bound[1] == 'greater' else 'less'}"
    error.message = f"{value!r}: {inner}"
    return error.format_message()


def _aws_failure(error: Exception) -> str | None:
    """One line for an AWS call that failed mid-command (the endpoint went away, a refusal), else None."""
    exceptions = sys.modules.get("botocore.exceptions")  # not imported: the error cannot be botocore's
    if exceptions is None or not isinstance(error, (exceptions.BotoCoreError, exceptions.ClientError)):
        return None
    if isinstance(error, (exceptions.ConnectionError, exceptions.HTTPClientError)):
        return f"the endpoint stopped answering ({error}): was `onceflow start` stopped, or the network lost?"
    stack = sys.modules.get("onceflow.ops.stack")
    return (stack.credentials_problem(error) if stack else None) or str(error)


app = typer.Typer(
    help=__doc__.split("\n\n")[0],
    no_args_is_help=True,
    add_completion=False,
    cls=_OneLineErrors,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"onceflow {version('onceflow')}")
        except PackageNotFoundError:  # run from a checkout that was never installed
            typer.echo("onceflow (not installed: no version recorded)")
        raise typer.Exit()


@app.callback()
def _options(
    show_version: Annotated[
        bool, typer.Option("--version", is_eager=True, callback=_print_version, help="Print the version and exit.")
    ] = False,
) -> None:
    pass


def _endpoint_url(ctx: typer.Context, param: typer.CallbackParam, value: str) -> str:
    """A URL with its scheme, as boto3 takes it (unless --aws, which leaves it unused); the error
    names where the value came from: the option or ONCEFLOW_ENDPOINT."""
    from urllib.parse import urlparse

    parsed = urlparse(value)
    if ctx.params.get("aws") or (parsed.scheme in ("http", "https") and parsed.hostname):
        return value
    from_environment = param.name is not None and ctx.get_parameter_source(param.name).name == "ENVIRONMENT"
    example = DEFAULT_ENDPOINT if "://" in value else f"http://{value}"
    raise typer.BadParameter(
        f"{value!r}: an http:// or https:// URL with a host, e.g. {example}",
        param_hint="ONCEFLOW_ENDPOINT" if from_environment else "'--endpoint'",
    )


EndpointOption = Annotated[
    str,
    typer.Option(
        envvar="ONCEFLOW_ENDPOINT",
        callback=_endpoint_url,
        help="The local endpoint of `onceflow start` (env ONCEFLOW_ENDPOINT).",
    ),
]
StackNameOption = Annotated[
    str,
    typer.Option(
        envvar="ONCEFLOW_STACK_NAME",
        callback=cli_checks.stack_name(),
        help="The stack whose outputs name the resources.",
    ),
]
AwsOption = Annotated[
    bool,
    typer.Option(
        "--aws",
        is_eager=True,  # known before --endpoint is checked: with --aws the endpoint is not used
        help="Talk to AWS itself (default credential chain and region), not the local endpoint.",
    ),
]
# A str, not a Path: a Path option would import pydantic for typer's coercion (cli_values.py).
TemplateOption = Annotated[
    str,
    typer.Option(
        "--template",
        callback=cli_checks.input_file("template"),
        help="The app's template.yaml (its sample body, state machine and functions beside it).",
    ),
]
DEFAULT_TEMPLATE = "template.yaml"
TimeScaleOption = Annotated[
    float, typer.Option(callback=cli_checks.finite(0), help="Retry/Wait delays are multiplied by this.")
]
DemoTimeScaleOption = Annotated[
    float,
    typer.Option(
        callback=cli_checks.finite(0),
        help="Retry/Wait delays are multiplied by this (0: recorded, not waited for; the verdicts do not depend on it).",
    ),
]
ParameterOption = Annotated[
    list[str] | None,
    typer.Option(
        "--parameter",
        help="A template parameter KEY=VALUE (repeatable), checked against the template's Parameters.",
    ),
]


def _fail(message: str) -> NoReturn:
    raise CommandError(message)


def _stack(endpoint: str, stack_name: str, aws: bool) -> StackResources:
    from onceflow.ops.stack import StackNotFound, Target, find_stack

    try:
        return find_stack(Target(endpoint_url=None if aws else endpoint), stack_name)
    except StackNotFound as problem:
        raise CommandError(str(problem)) from None


def _at_least(minimum: int) -> Any:
    def check(value: int | None) -> int | None:
        if value is not None and value < minimum:
            raise typer.BadParameter(f"{value}: must be {minimum} or more")
        return value

    check.minimum = minimum  # type: ignore[attr-defined]  # what tests/local/test_bad_values.py tries below
    return check


def _duplicate_share(value: float) -> float:
    if not 0 <= value < 1:
        raise typer.BadParameter(f"{value}: a share of the messages, at least 0 and below 1 (e.g. 0.3)")
    return value


def _local_only_environment() -> None:
    """`start` and `demo` are wholly local: nothing in this process may pick up the user's AWS
    profile, session or config files (the starter runs in-process with this environment)."""
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN"):
        os.environ.pop(name, None)
    os.environ.update(
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_CONFIG_FILE=os.devnull,
        AWS_SHARED_CREDENTIALS_FILE=os.devnull,
    )


def _cannot_listen(port: int) -> str | None:
    """Why the loopback port cannot be bound, or None (the server would print and exit on its own)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as error:
            return error.strerror or str(error)
    return None


def _quiet_engine_logs() -> None:
    import logging

    # moto logs every caught task failure with a long repr; the report and traces show them instead.
    logging.getLogger("moto").setLevel(logging.CRITICAL)


def _aws_cli_example(stack: Any, endpoint_url: str) -> str:
    """`aws sqs send-message` of one body made from the app's sample; a FIFO queue's group and id too."""
    import shlex

    from onceflow.domain import fresh_bodies

    (body,) = fresh_bodies(stack.domain, 1, "cli")
    command = (
        f"aws --endpoint-url {endpoint_url} sqs send-message --queue-url {stack.source_queue_url} "
        f"--message-body {shlex.quote(json.dumps(json.loads(body), separators=(',', ':')))}"
    )
    if stack.fifo:
        event_id = stack.domain.event_id_of(body)
        command += f" --message-group-id {shlex.quote(event_id)} --message-deduplication-id {shlex.quote(event_id)}"
    return command


def _print_start_banner(stack: Any, endpoint_url: str, environment: dict[str, str], logs: dict[str, str]) -> None:
    console.print(f"Stack {stack.stack_name} is up at {endpoint_url}; its outputs:", highlight=False)
    if stack.parameters:
        chosen = " ".join(f"{key}={value}" for key, value in sorted(stack.parameters.items()))
        console.print(f"  (deployed with {chosen})", soft_wrap=True, highlight=False)
    width = max(map(len, stack.outputs), default=0)
    for key, value in sorted(stack.outputs.items()):
        console.print(f"  {key:<{width}}  {value}", soft_wrap=True, highlight=False)
    console.print("Everything lives in memory in this process: Ctrl-C stops it and forgets it all.")
    console.print("In another shell, for boto3, the AWS CLI and `onceflow`, paste:")
    exports = " ".join(f"{key}={value}" for key, value in environment.items())
    console.print(f"  export {exports} ONCEFLOW_ENDPOINT={endpoint_url}", soft_wrap=True, highlight=False)
    console.print("  unset AWS_PROFILE AWS_SESSION_TOKEN", highlight=False)
    console.print(
        f"AWS CLI: always add --endpoint-url {endpoint_url} (the AWS CLI v1 ignores AWS_ENDPOINT_URL for SQS), e.g.",
        highlight=False,
    )
    console.print(f"  {_aws_cli_example(stack, endpoint_url)}", soft_wrap=True, highlight=False)
    for logical_id, group in logs.items():
        console.print(f"{logical_id} logs go to CloudWatch Logs {group}", highlight=False)
    console.print("Then: onceflow send · onceflow status · onceflow logs --follow · onceflow trace", highlight=False)


@app.command()
def start(
    port: Annotated[
        int, typer.Option(min=1, max=65535, help="Loopback port for the endpoint (clients: ONCEFLOW_ENDPOINT).")
    ] = DEFAULT_PORT,
    stack_name: Annotated[
        str, typer.Option(callback=cli_checks.stack_name(), help="Name of the local stack.")
    ] = DEFAULT_STACK_NAME,
    poll: Annotated[bool, typer.Option(help="Run the emulated SQS event source and starter.")] = True,
    time_scale: TimeScaleOption = 0.01,
    history_budget: Annotated[
        int,
        typer.Option(
            min=0,
            help="Keep the histories of this many finished executions, failed, timed-out and aborted ones first, "
            "then the newest (the others keep name, status, "
            "dates, input and output; `trace` and `status` say how many lost theirs). Each kept history of the "
            "pipeline costs about 0.04 MB of this process's memory, 1,000 about 36 MB (benchmarks/trace_status.py --memory-only).",
        ),
    ] = 1000,
    log_budget: Annotated[
        int,
        typer.Option(
            min=0,
            help="Keep this many newest log events per CloudWatch Logs group; older ones are dropped, oldest "
            "first (AWS keeps them by the group's retention; `logs` says how many were dropped). Each kept "
            "starter line costs about 0.8 KB of this process's memory, 10,000 about 8 MB.",
        ),
    ] = 10_000,
    summary_every: Annotated[
        int,
        typer.Option(
            callback=_at_least(1),
            help="Seconds between the summary lines of what the starter and the subscribers handled.",
        ),
    ] = 5,
    parameter: ParameterOption = None,
    template: TemplateOption = DEFAULT_TEMPLATE,
) -> None:
    """Start the embedded AWS, deploy the app's template.yaml on it and keep it up (Ctrl-C stops).

    Every template parameter can be set (--parameter KEY=VALUE): a FIFO source, EXPRESS, the
    subscriber (fed from its own queue, as on AWS), an SNS FIFO topic."""
    parameters = _parameters(parameter, template)
    _domain(template)  # a template without a domain is told before anything starts
    problem = _cannot_listen(port)  # before the engine's imports: a taken port is told at once
    if problem:
        _fail(f"--port {port}: cannot listen there ({problem}); is another `onceflow start` running? Pick another port")
    _local_only_environment()  # before moto is imported: it makes botocore sessions at import time
    from onceflow.engine import EmbeddedAws
    from onceflow.local.logs import FunctionLogRouter, log_streams_for
    from onceflow.local.pipeline import LocalPipeline
    from onceflow.local.stack import deploy
    from onceflow.local.start_progress import StartProgress
    from onceflow.ops.executions import HISTORY_BUDGET_TAG

    _quiet_engine_logs()
    progress = StartProgress(clock=time.monotonic, every=summary_every)
    # A long run: only the most recent finished executions keep their histories (engine/retention.py).
    aws = EmbeddedAws(port=port, time_scale=time_scale, history_budget=history_budget, log_budget=log_budget).start()
    try:
        stack = deploy(
            aws.endpoint_url, stack_name=stack_name, parameter_overrides=parameters, template_path=Path(template)
        )
        # Said where clients read it: `trace` and `status` name the budget beside what it pruned.
        stack.client("stepfunctions").tag_resource(
            resourceArn=stack.state_machine_arn, tags=[{"key": HISTORY_BUDGET_TAG, "value": str(history_budget)}]
        )
        streams = log_streams_for(stack.client("logs"), stack.outputs, list(stack.functions))
        starter_id = next(i for i, f in stack.functions.items() if f.code_dir == stack.starter_code_dir)
        logs = FunctionLogRouter(streams, default=starter_id)
        pipeline = LocalPipeline(aws, stack, log_stream=logs, keep_acknowledged=False, notification_inbox=False)
        for logical_id, runtime in pipeline.invoker.runtimes.items():
            if logical_id != starter_id:  # the event source calls the starter directly: the default stream
                runtime.invoke = logs.invoking(logical_id, runtime.invoke)  # type: ignore[method-assign]
        _print_start_banner(stack, aws.endpoint_url, aws.environment(), {i: s.log_group for i, s in streams.items()})
        while True:
            done = pipeline.background_round(poll)
            if line := progress.add(done.handled, done.notified):
                console.print(line)
            if done.routed:
                console.print(f"safety net: {done.routed} execution(s) ended outside the workflow's paths → reconciler")
            logs.publish()
            if not (done.handled or done.notified):  # a full queue is read again at once; an idle one waits
                time.sleep(0.2)
    except KeyboardInterrupt:
        if line := progress.flush():
            console.print(line)
        console.print("stopping")
    finally:
        aws.stop()


# SQS: a message body is 1 character to 256 KiB (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html).
MAX_BODY_BYTES = 262_144


def _message_body(path: Path) -> str:
    """The file's text as one SQS message body, or BadParameter saying why SQS would refuse it."""
    try:
        body = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise typer.BadParameter(f"{path}: not UTF-8 text (an SQS body is text)", param_hint="'--file'") from None
    if not body:
        raise typer.BadParameter(f"{path}: the file is empty (SQS refuses an empty body)", param_hint="'--file'")
    if len(body.encode()) > MAX_BODY_BYTES:
        raise typer.BadParameter(
            f"{path}: {len(body.encode()):,} bytes, more than SQS's {MAX_BODY_BYTES:,} per message",
            param_hint="'--file'",
        )
    return body


def _parameters(items: list[str] | None, template: str | Path) -> dict[str, str]:
    """The overrides, each checked against the template as CloudFormation would; one line on a bad one."""
    from onceflow.domain.parameters import ParameterError, parse_parameters

    try:
        return parse_parameters(items, Path(template))
    except ParameterError as problem:
        raise typer.BadParameter(str(problem), param_hint="'--parameter'") from None


def _app_template(template: Path | None) -> Path:
    """The app's template.yaml: the one given, else the one in this folder; one line when there is none."""
    chosen = template or Path(DEFAULT_TEMPLATE)
    if not chosen.is_file():
        raise typer.BadParameter(
            f"{chosen}: no template.yaml there; run in your app's folder or pass --template PATH",
            param_hint="'--template'",
        )
    return chosen


def _domain(template: str) -> Any:
    from onceflow.domain import DomainError, load_domain

    try:
        return load_domain(Path(template))
    except DomainError as problem:
        raise typer.BadParameter(str(problem), param_hint="'--template'") from None


def _group_of(domain: Any, group_by: str | None, groups: int | None, run_id: str) -> Any:
    """A FIFO message's group: the body's value at --group-by, one of --groups round robin, or its event."""
    from onceflow.domain.app import get_path

    def group(index: int, body: str) -> str:
        if groups is not None:
            return f"{run_id}-group-{index % groups}"
        if group_by is not None:
            value = get_path(json.loads(body), group_by)
            if value is None:
                raise typer.BadParameter(f"{group_by!r}: the body has no value there", param_hint="'--group-by'")
            return str(value)
        return (domain.event_id_of(body) if domain is not None else None) or run_id

    return group


@app.command()
def send(
    endpoint: EndpointOption = DEFAULT_ENDPOINT,
    stack_name: StackNameOption = DEFAULT_STACK_NAME,
    aws: AwsOption = False,
    count: Annotated[
        int,
        typer.Option(callback=_at_least(0), help="Events to make from the app's sample body, each a fresh event_id."),
    ] = 10,
    duplicates: Annotated[
        float, typer.Option(callback=_duplicate_share, help="Share of messages that resend an earlier event (0–<1).")
    ] = 0.0,
    body_file: Annotated[
        Path | None, typer.Option("--file", exists=True, dir_okay=False, help="Send this body instead.")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seeds which events are resent.")] = 1,
    run_id: Annotated[
        str | None,
        typer.Option(help="Event ids are <prefix>-<run-id>-00000…: fresh each run; pass an earlier one to resend it."),
    ] = None,
    group_by: Annotated[
        str | None,
        typer.Option(help="FIFO source: the message group is the body's value at this path (e.g. customer_id)."),
    ] = None,
    groups: Annotated[
        int | None, typer.Option(min=1, help="FIFO source: spread the messages over this many groups, round robin.")
    ] = None,
    template: TemplateOption = DEFAULT_TEMPLATE,
) -> None:
    """Put events made from the app's sample body (or one body from a file) on the source queue; fresh ids every run.

    A FIFO source gets a message group per event (or --group-by, --groups) and a deduplication id per message."""
    from onceflow.domain import fresh_bodies, new_run_id
    from onceflow.ops.send import SendProgress, SendRefused, is_fifo, send_bodies

    if run_id is not None and (not run_id or not all(c.isalnum() or c in "-_" for c in run_id)):
        raise typer.BadParameter(f"{run_id!r}: letters, digits, - and _ only", param_hint="'--run-id'")
    if group_by is not None and groups is not None:
        raise typer.BadParameter("give --group-by or --groups, not both", param_hint="'--groups'")
    run_id = run_id or new_run_id()
    domain = None
    if body_file is not None:
        bodies = [_message_body(body_file)]
        described = f"the body of {body_file}"
    else:
        domain = _domain(template)
        rng = random.Random(f"{seed}:{run_id}")
        bodies = fresh_bodies(domain, count, run_id)
        resends = round(count * duplicates / (1 - duplicates)) if bodies else 0
        bodies += [rng.choice(bodies) for _ in range(resends)]
        first = domain.event_id_of(bodies[0]) if bodies else None
        described = (
            f"{_counted(count, 'event')} ({first or '-'}…) and {_counted(resends, 'resend')}; again: --run-id {run_id}"
        )
    stack = _stack(endpoint, stack_name, aws)
    fifo = is_fifo(stack.source_queue_url)
    if not fifo and (group_by is not None or groups is not None):
        raise typer.BadParameter("the source queue is not FIFO: messages have no group", param_hint="'--group-by'")
    if fifo and domain is None and group_by is None and groups is None:
        from onceflow.domain import DomainError, load_domain

        try:  # a file's body goes to its event's group when the app's template says where the id is
            domain = load_domain(Path(template))
        except DomainError:
            domain = None  # else to the run's own group
    progress = SendProgress(len(bodies))
    group_of = _group_of(domain, group_by, groups, run_id) if fifo else None
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        send_bodies(stack.client("sqs"), stack.source_queue_url, bodies, progress, run_id, group_of)
    except KeyboardInterrupt:
        _fail(
            f"interrupted: sent {progress.sent} of {len(bodies)} messages"
            + (f" (maybe the next {progress.in_flight} too)" if progress.in_flight else "")
            + f"; the same command with --run-id {run_id} sends them all again, and the pipeline (FIFO: SQS "
            "within 5 minutes) drops what already arrived"
        )
    except SendRefused as refused:
        _fail(f"sent {progress.sent} of {len(bodies)} messages, then {refused}")
    except (BotoCoreError, ClientError) as error:
        # The batch in flight may have arrived: at-least-once, the pipeline absorbs a resend of it.
        _fail(
            f"sent {progress.sent} of {len(bodies)} messages (maybe the next {progress.in_flight} too), "
            f"then {_aws_failure(error)}"
        )
    typer.echo(f"sent {_counted(len(bodies), 'message')}: {described}")


@app.command()
def status(
    endpoint: EndpointOption = DEFAULT_ENDPOINT,
    stack_name: StackNameOption = DEFAULT_STACK_NAME,
    aws: AwsOption = False,
    last: Annotated[
        int, typer.Option(callback=_at_least(0), help="Show the paths of this many latest executions.")
    ] = 20,
) -> None:
    """Summary counts, the latest executions in time order with their paths, the dead letters' reasons."""
    from onceflow.ops.counts import CountsUnavailable
    from onceflow.ops.status import read_status

    stack = _stack(endpoint, stack_name, aws)
    try:
        report = read_status(stack, last=last)
    except CountsUnavailable as problem:
        raise CommandError(f"cannot count the executions: {problem}") from None
    console = Console()
    summary = Table(title=f"Stack {stack.stack_name} on {stack.target.describe()}", show_header=False)
    summary.add_row("events", report.events_line())
    summary.add_row("executions", report.executions_line())
    summary.add_row("source queue", report.source_queue_line())
    summary.add_row("dead-letter queue", report.dead_letter_line())
    if report.histories_line():
        summary.add_row("histories", report.histories_line())
    if report.subscriber_queues is not None:
        summary.add_row("subscriber", report.subscriber_queues)
    if report.denials_line() is not None:
        summary.add_row("access denied", report.denials_line())
    console.print(summary)
    if report.executions.running is None:
        console.print(
            "EXPRESS: AWS keeps no list or history of Express executions; the state machine's log group "
            "and the starter's logs have them (`onceflow logs`).",
            highlight=False,
        )
    if report.latest:
        from onceflow.ops.status_view import latest_executions

        console.print(latest_executions(report, console.width))
    if report.dead_letters.letters:
        dead = Table(title="Dead letters by reason")
        for column in ("count", "source: error", "event_ids", "redriven before"):
            dead.add_column(column, overflow="fold")
        for reason, group in report.dead_letters_by_reason().items():
            ids = sorted({letter.event_id or "(none)" for letter in group})
            again = sum(1 for letter in group if letter.redrive_count)
            dead.add_row(str(len(group)), reason, ", ".join(ids[:5]) + (" …" if len(ids) > 5 else ""), str(again))
        console.print(dead)
    for problem in report.dead_letters.unreadable:
        typer.echo(f"unreadable dead letter {problem}")
    if report.denials:
        from onceflow.ops.status_view import denials

        console.print(denials(report.denials))


@app.command()
def logs(
    endpoint: EndpointOption = DEFAULT_ENDPOINT,
    stack_name: StackNameOption = DEFAULT_STACK_NAME,
    aws: AwsOption = False,
    function: Annotated[str, typer.Option(help="Whose logs: starter (or another function with a log group).")] = (
        "starter"
    ),
    event_id: Annotated[str | None, typer.Option(help="Only the lines of this event.")] = None,
    follow: Annotated[bool, typer.Option("--follow", "-f", help="Keep printing new lines (Ctrl-C stops).")] = False,
) -> None:
    """A function's CloudWatch Logs lines (JSON, as Lambda writes them), oldest first."""
    from onceflow.ops.logs import dropped_note, read_lines
    from onceflow.ops.logs import follow as follow_lines

    stack = _stack(endpoint, stack_name, aws)
    group = stack.log_groups.get(function)
    if group is None:
        known = ", ".join(sorted(stack.log_groups)) or "none"
        raise typer.BadParameter(
            f"{function!r}: the stack's outputs name log groups for {known}", param_hint="'--function'"
        )
    client = stack.client("logs")
    note = dropped_note(client, group)
    if note:
        typer.echo(note, err=True)  # before the lines: they start after what was dropped
    printed = 0
    try:
        lines = follow_lines(client, group, event_id) if follow else iter(read_lines(client, group, event_id))
        for line in lines:
            typer.echo(line.render())
            printed += 1
    except KeyboardInterrupt:
        return
    if not printed:
        wanted = f" for event_id {event_id}" if event_id else ""
        typer.echo(f"no log lines in {group}{wanted} yet", err=True)


@app.command()
def trace(
    endpoint: EndpointOption = DEFAULT_ENDPOINT,
    stack_name: StackNameOption = DEFAULT_STACK_NAME,
    aws: AwsOption = False,
    out: Annotated[
        str | None,
        typer.Option(
            callback=cli_checks.output_file("trace.html"),
            help="Where to write the HTML page [default: reports/STACK-NAME-trace.html; the demo's is trace.html]",
        ),
    ] = None,
    execution: Annotated[str | None, typer.Option(help="Execution (name or ARN) to select on the page.")] = None,
    watch: Annotated[
        bool,
        typer.Option(
            "--watch",
            help="Rewrite the page every --every seconds while `onceflow start` runs; the page reloads itself. "
            "Ctrl-C writes it once more without reloading: the file to share.",
        ),
    ] = False,
    every: Annotated[int, typer.Option(callback=_at_least(1), help="With --watch: seconds between rewrites.")] = 5,
) -> None:
    """Write a self-contained HTML page: the state machine graph with the run overlaid."""
    from onceflow.devtools.trace import write_trace
    from onceflow.devtools.trace.collect import Collected, collect, without_cycle_collection
    from onceflow.devtools.trace.progress import collect_with_progress, pruned_line
    from onceflow.ops.subscriber import outcomes

    page = Path(out) if out is not None else Path("reports") / f"{stack_name}-trace.html"
    problem = cli_checks.write_problem(page, "trace.html") if out is None else None
    if problem:  # the default's folder, checked as --out is
        _fail(f"cannot write the page to {page}: {problem}; pass --out PATH")
    stack = _stack(endpoint, stack_name, aws)
    sfn = stack.client("stepfunctions")
    machine = sfn.describe_state_machine(stateMachineArn=stack.state_machine_arn)
    if machine["type"] == "EXPRESS":  # API_ListExecutions: StateMachineTypeNotSupported
        raise CommandError(
            f"{stack.stack_name} runs an EXPRESS state machine: AWS keeps no list or history of its executions "
            "to trace; its logs have them (`onceflow logs`)"
        )
    definition = json.loads(machine["definition"])

    def named(listed: list[dict[str, Any]]) -> None:  # told before any history is read
        if execution is not None and not any(execution in (e["name"], e["executionArn"]) for e in listed):
            examples = ", ".join(e["name"] for e in listed[-3:]) or "there are no executions yet"
            raise typer.BadParameter(
                f"{execution!r}: no such execution among the {len(listed)} of the state machine (e.g. {examples})",
                param_hint="'--execution'",
            )

    read_before: list[Collected] = []

    def read() -> Collected:
        """Every execution; a watch's later rounds read only what is new or was running."""
        with without_cycle_collection():
            if not read_before:
                collected = collect_with_progress(sfn, stack.state_machine_arn, check=named)
            else:
                earlier = {r.arn: r for r in read_before[0].executions}
                collected = collect(sfn, stack.state_machine_arn, check=named, known=earlier)
        read_before[:] = [collected]
        return collected

    def write(collected: Collected, live: Any = None) -> Path:
        results = collected.executions
        with without_cycle_collection():
            subscriber = outcomes(  # the example subscriber's outcome per event, when the stack has it
                stack.outputs,
                stack.client("dynamodb"),
                stack.client("sqs"),
                (str(r.input.get("event_id", "")) for r in results),
            )
            try:
                return write_trace(
                    definition,
                    results,
                    page,
                    selected=execution,
                    history_budget=collected.history_budget,
                    subscriber={event_id: outcome.line() for event_id, outcome in subscriber.items()},
                    live=live,
                )
            except OSError as error:  # the folder changed since the option was checked
                _fail(f"cannot write the page to {page}: {(error.strerror or str(error)).lower()}")

    if watch:
        from onceflow.devtools.trace.watch import watch as watching

        def told(collected: Collected, path: Path) -> None:
            if not told_once:
                told_once.append(path)
                typer.echo(
                    f"trace of {_counted(len(collected.executions), 'execution')} written to {path}; rewritten every "
                    f"{every} s while this runs (the page reloads itself); Ctrl-C writes it once more, to share"
                )

        told_once: list[Path] = []
        watched = watching(read, write, every, on_round=told)
        collected, path = watched.last, watched.path
        if watched.ended_by != "interrupted":
            typer.echo(f"watch ended: {watched.ended_by}; the page keeps what was read last", err=True)
    else:
        collected = read()
        path = write(collected)
    results = collected.executions
    typer.echo(f"trace of {_counted(len(results), 'execution')} written to {path}")
    if collected.pruned:
        typer.echo(pruned_line(collected.pruned, len(results), collected.history_budget))


def _counted(count: int, noun: str) -> str:
    """`1 execution`, `2 executions`: what the commands print counts in."""
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


@app.command()
def redrive(
    endpoint: EndpointOption = DEFAULT_ENDPOINT,
    stack_name: StackNameOption = DEFAULT_STACK_NAME,
    aws: AwsOption = False,
    dry_run: Annotated[bool, typer.Option(help="Only count and list what would move.")] = False,
    limit: Annotated[int | None, typer.Option(callback=_at_least(0), help="Move at most this many messages.")] = None,
    skip_error: Annotated[
        list[str] | None,
        typer.Option(help="Leave dead letters with this error in place (repeatable), e.g. Onceflow.PayloadConflict."),
    ] = None,
) -> None:
    """Move dead letters back to the source queue (safe: the pipeline is idempotent per event_id)."""
    from onceflow.ops.redrive import redrive as move
    from onceflow.ops.redrive import unknown_skip_errors

    stack = _stack(endpoint, stack_name, aws)
    skip_errors = set(skip_error or ())

    def run(dry: bool, most: int | None) -> RedriveReport:
        return move(
            stack.client("sqs"),
            stack.dead_letter_queue_url,
            stack.source_queue_url,
            dry_run=dry,
            limit=most,
            skip_errors=skip_errors,
            sfn=stack.client("stepfunctions"),
        )

    if skip_errors:  # a name nothing carries is a typo: say so before anything moves
        preview = run(True, None)
        unknown = unknown_skip_errors(skip_errors, preview)
        if unknown:
            present = sorted({i.error for i in preview.items if i.error}) or ["none"]
            raise typer.BadParameter(
                f"{unknown[0]!r}: no dead letter has this error and the pipeline writes none such "
                f"(the queue's: {', '.join(present)}); nothing was moved",
                param_hint="'--skip-error'",
            )
    report = run(dry_run, limit)
    typer.echo(report.summary())
    if report.failed:
        raise typer.Exit(code=1)


DEAD_LETTER_QUEUES = ("pipeline", "subscriber", "safety-net")  # onceflow/ops/letters.py, QUEUES


def _dead_letter_queue(value: str) -> str:
    """A str, not an enum: an enum option would import pydantic for typer's coercion (cli_values.py)."""
    if value.lower() not in DEAD_LETTER_QUEUES:
        raise typer.BadParameter(f"{value!r}: one of {', '.join(DEAD_LETTER_QUEUES)}")
    return value.lower()


_dead_letter_queue.kind = "choice"  # type: ignore[attr-defined]  # for tests/local/test_bad_values.py


@app.command("dead-letters")
def dead_letters(
    endpoint: EndpointOption = DEFAULT_ENDPOINT,
    stack_name: StackNameOption = DEFAULT_STACK_NAME,
    aws: AwsOption = False,
    message_id: Annotated[str | None, typer.Option(help="Show this dead letter in full: body and attributes.")] = None,
    event_id: Annotated[str | None, typer.Option(help="Show the dead letters of this event in full.")] = None,
    queue: Annotated[
        str, typer.Option(callback=_dead_letter_queue, help="pipeline (the DLQ), subscriber (its DLQ) or safety-net.")
    ] = "pipeline",
    limit: Annotated[
        int, typer.Option(callback=_at_least(1), help="Read at most this many messages of the queue.")
    ] = 1000,
) -> None:
    """List the dead letters, or show one (--message-id, --event-id): its body and every attribute.

    Reads only: each message is made visible again at once, as `redrive --dry-run` does."""
    from onceflow.ops.letters import QUEUES, letters

    stack = _stack(endpoint, stack_name, aws)
    output = QUEUES[queue]
    url = stack.outputs.get(output)
    if url is None:
        raise typer.BadParameter(
            f"{queue!r}: the stack has no output {output} (the subscriber's: DeploySubscriber=true)",
            param_hint="'--queue'",
        )
    read = list(letters(stack.client("sqs"), url, limit, sfn=stack.client("stepfunctions")))
    wanted = message_id is not None or event_id is not None
    chosen = [letter for letter in read if letter.matches(message_id, event_id)] if wanted else read
    if not read:
        typer.echo(f"the {queue} dead-letter queue is empty")
        return
    if not wanted:
        console.print(f"{len(read)} dead letters in {url.rsplit('/', 1)[-1]}:", highlight=False, soft_wrap=True)
        for letter in read:  # ids and reasons are copied whole: a line each, never folded in a cell
            console.print(f"{letter.message_id}  {letter.sent}", highlight=False, soft_wrap=True)
            event = f"  event_id {letter.event_id}" if letter.event_id else ""
            console.print(f"    {letter.reason}{event}", highlight=False, soft_wrap=True, markup=False)
        typer.echo("show one: onceflow dead-letters --message-id ID (or --event-id ID)")
        return
    if not chosen:
        given = f"--message-id {message_id!r}" if message_id is not None else f"--event-id {event_id!r}"
        raise CommandError(
            f"{given}: none of the {len(read)} dead letters read has it (e.g. "
            + ", ".join(letter.message_id for letter in read[:3])
            + "); `onceflow dead-letters` lists them"
        )
    for letter in chosen:
        facts = Table(title=f"Dead letter {letter.message_id}", show_header=False)
        facts.add_column(no_wrap=True)
        facts.add_column(overflow="fold")
        for label, text in letter.details():
            facts.add_row(label, text)
        console.print(facts)
        console.print("body:", highlight=False)
        console.print(letter.body(), soft_wrap=True, highlight=False, markup=False)


def print_report(report: RunReport, fault_counts: dict[str, int], seconds: float) -> None:
    summary = Table(title=f"Onceflow demo ({seconds:.1f} s)", show_header=False)
    rows: list[tuple[str, Any]] = [
        ("messages sent", report.messages_sent),
        ("unique events", report.unique_events),
        ("business rows", report.business_rows),
        (
            "notifications",
            f"{report.notifications} for {report.notified_events} events ({report.duplicate_notifications} duplicates)",
        ),
        ("executions", report.executions),
    ]
    rows += [(f"  path: {path}", n) for path, n in sorted(report.executions_by_path.items())]
    rows += [(f"  dead letter: {reason}", n) for reason, n in sorted(report.dead_letters_by_reason.items())]
    rows += [(f"  fault: {name}", n) for name, n in fault_counts.items()]
    for key, value in rows:
        summary.add_row(key, str(value))
    console.print(summary)
    for verdict in report.verdicts:
        mark = "[bold green]PASS[/]" if verdict.passed else "[bold red]FAIL[/]"
        console.print(f"{mark} {verdict.name}: {verdict.evidence}")
        for problem in verdict.problems:
            console.print(f"     - {problem}")


@app.command()
def demo(
    events: Annotated[
        int,
        typer.Option(
            callback=_at_least(1), help="Unique events in the stream (the app's sample with fresh event ids)."
        ),
    ] = 500,
    duplicates: Annotated[
        float, typer.Option(callback=_duplicate_share, help="Share of messages that are duplicates (0–<1).")
    ] = 0.3,
    poison: Annotated[int, typer.Option(callback=_at_least(0), help="Messages that can never succeed.")] = 6,
    conflicts: Annotated[int, typer.Option(callback=_at_least(0), help="Event ids reused with another payload.")] = 3,
    concurrency: Annotated[int, typer.Option(callback=_at_least(1), help="Concurrent starter invocations.")] = 4,
    seed: Annotated[int, typer.Option()] = 7,
    mode: Annotated[Mode, typer.Option(case_sensitive=False, help="The state machine type.")] = Mode.STANDARD,
    source: Annotated[
        Source,
        typer.Option(
            case_sensitive=False, help="The source queue type (fifo adds R5: order within each message group)."
        ),
    ] = Source.STANDARD,
    time_scale: DemoTimeScaleOption = 0.0,
    out: Annotated[
        Path,
        typer.Option(
            callback=cli_checks.output_folder(), help="Folder for the report, the trace page and the starter log."
        ),
    ] = Path("reports"),
    parameter: ParameterOption = None,
    template: TemplateOption = DEFAULT_TEMPLATE,
) -> None:
    """Run a stream through the whole pipeline with every fault kind, redrive, and judge R1–R4 (R4 on the example subscriber; R5 with --source fifo)."""
    parameters = _parameters(parameter, template)
    set_by_options = sorted({"StateMachineType", "SourceQueueType", "DeploySubscriber"} & set(parameters))
    if set_by_options:
        raise typer.BadParameter(
            f"{set_by_options[0]} is the demo's own (--mode, --source; the subscriber is always deployed)",
            param_hint="'--parameter'",
        )
    _domain(template)  # a template without a domain is told before anything starts
    _local_only_environment()  # before moto is imported: it makes botocore sessions at import time
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from onceflow.local.demo import DemoOptions, ModeNotSupported, StreamDoesNotFitDomain, run_demo, write_trace
    from onceflow.local.report import report_as_dict

    _quiet_engine_logs()
    out.mkdir(parents=True, exist_ok=True)
    options = DemoOptions(
        events,
        duplicates,
        poison,
        conflicts,
        concurrency,
        seed=seed,
        time_scale=time_scale,
        mode=mode.value,
        source=source.value.upper(),
        template=Path(template),
        parameters=parameters,
    )
    began = time.monotonic()
    with (
        Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
        ) as bar,
        (out / "starter.log").open("w") as log_stream,
    ):
        task = bar.add_task("messages handed to the starter", total=None)

        def progress(description: str, done: int, total: int) -> None:
            bar.update(task, description=description, completed=done, total=total)

        try:
            run = run_demo(options, progress=progress, log_stream=log_stream)
        except ModeNotSupported as problem:
            _fail(f"--mode {mode.value}: {problem}")
        except StreamDoesNotFitDomain as problem:
            _fail(f"nothing to judge: {problem}")
    seconds = time.monotonic() - began
    print_report(run.report, run.faults.counts, seconds)
    if mode is Mode.EXPRESS:
        console.print(
            "EXPRESS: executions are not listed (Express workflows keep no execution history); "
            "the tables, the notifications and the dead letters are the evidence.",
            highlight=False,
        )
    (out / "report.json").write_text(
        json.dumps(
            {
                **report_as_dict(run.report),
                "mode": mode.value,
                "source": source.value.upper(),
                "faults": run.faults.counts,
                "seconds": seconds,
            },
            indent=2,
        )
    )
    trace_path = write_trace(run, out / "trace.html")
    console.print(f"report: {out / 'report.json'}  trace: {trace_path}  starter log: {out / 'starter.log'}")
    run.pipeline.aws.stop()
    raise typer.Exit(code=0 if run.report.passed else 1)


@app.command()
def init(
    path: Annotated[
        Path | None,
        typer.Argument(
            callback=cli_checks.output_folder(command_tells_a_file=True),
            help="The new app's folder (new or empty); its name is the project's.",
        ),
    ] = None,
    sample_event: Annotated[
        Path | None,
        typer.Option(help="A message body of your domain (a JSON object): the app is made from its fields."),
    ] = None,
    event_id_path: Annotated[
        str | None, typer.Option(help="Where the event_id is in that body: names joined by dots, e.g. payment_id.")
    ] = None,
    example: Annotated[
        str | None, typer.Option(help="Make a shipped domain's app instead (payments): its sample and id path.")
    ] = None,
    business_key: Annotated[
        str | None, typer.Option(help="The business table's key attribute (default: the id path's last name).")
    ] = None,
    group_by: Annotated[
        str | None,
        typer.Option(
            help="The field the example subscriber tallies by and a FIFO source's message group "
            "(default: the first text field that is not the event_id)."
        ),
    ] = None,
    name: Annotated[str | None, typer.Option(help="The project's name (default: the folder's name).")] = None,
    stack_name: Annotated[
        str | None, typer.Option(help="The CloudFormation stack in samconfig.toml (default: from the folder's name).")
    ] = None,
    location: Annotated[
        bool, typer.Option("--location", help="Print the app template's folder, for `sam init --location`, and exit.")
    ] = False,
) -> None:
    """Write a new Onceflow app (a SAM application) for your domain into PATH, from one sample body.

    In PATH then: `pytest` runs the app's tests on its stack on the embedded AWS, `onceflow demo` judges
    R1–R4 on a stream of its events, `sam validate && sam deploy --guided` puts it on AWS."""
    from onceflow.app_template import TemplateNotOnDisk
    from onceflow.app_template import location as template_location

    if location:
        try:
            typer.echo(str(template_location()))
        except TemplateNotOnDisk as problem:
            _fail(str(problem))
        return
    from onceflow.app_template.render import InitError, examples, render

    if path is None:
        raise typer.BadParameter("name the new app's folder, e.g. `onceflow init payments-app --example payments`")
    values: dict[str, str] = {}
    if example is not None:
        shipped = examples()
        if example not in shipped:
            raise typer.BadParameter(f"{example!r}: the shipped examples are {', '.join(sorted(shipped))}")
        if sample_event is not None:
            raise typer.BadParameter("give --example or --sample-event, not both", param_hint="'--example'")
        chosen = shipped[example]
        values.update(sample_body=chosen.sample_text, event_id_path=event_id_path or chosen.event_id_path)
        values.update(group_by=chosen.group_by)
    else:
        if sample_event is None or event_id_path is None:
            raise typer.BadParameter(
                "give --sample-event FILE and --event-id-path EXPR (or --example payments)",
                param_hint="'--sample-event'",
            )
        try:
            values.update(sample_body=sample_event.read_text(encoding="utf-8"), event_id_path=event_id_path)
        except (OSError, UnicodeDecodeError) as error:
            reason = error.strerror if isinstance(error, OSError) and error.strerror else "not UTF-8 text"
            raise typer.BadParameter(
                f"{sample_event}: cannot be read ({reason})", param_hint="'--sample-event'"
            ) from None
    given = {"business_key": business_key, "group_by": group_by, "project_name": name, "stack_name": stack_name}
    values.update({key: value for key, value in given.items() if value is not None})
    try:
        made = render(path, values)
    except InitError as problem:
        raise typer.BadParameter(str(problem)) from None
    inputs = made.inputs
    typer.echo(
        f"wrote {made.path}: events of {inputs.sample_file} with the event_id at {inputs.event_id_path}, "
        f"business key {inputs.business_key}, schema functions/starter/{inputs.schema_file}"
    )
    typer.echo(
        f'next: cd {path} && python -m venv .venv && .venv/bin/pip install -e ".[dev]" && .venv/bin/pytest '
        '&& .venv/bin/onceflow demo\nwhat to change for your own business item: README.md, "Where to change what"'
    )


# Commands added later go above main().


def main() -> None:
    app()


@app.command()
def cost(
    mix: Annotated[
        str, typer.Option(callback=cli_checks.mix(), help="shares per path, e.g. new=70,redelivered=25,pending=5")
    ] = "",
    template: Annotated[
        Path | None,
        typer.Option(
            callback=cli_checks.input_file("template"), help="a template.yaml (its ASL and functions beside it)"
        ),
    ] = None,
    revision: Annotated[
        str | None,
        typer.Option(
            callback=cli_checks.revision(),
            help="use template.yaml, statemachine/ and functions/ from this git revision",
        ),
    ] = None,
    parameter: Annotated[
        list[str] | None, typer.Option(help="template parameter override KEY=VALUE (repeatable)")
    ] = None,
) -> None:
    """Cost per million events: each path run on the embedded engine, priced for STANDARD, EXPRESS and the single-Lambda floor."""
    from onceflow.devtools.cost.mix import DEFAULT_MIX, parse_mix

    if revision is not None and template is not None:
        raise typer.BadParameter(
            "give --template or --revision, not both (--revision reads the template of that revision)",
            param_hint="'--revision'",
        )
    app_template = _app_template(template)
    if revision is not None:  # in the app's own repository
        problem = cli_checks.revision_problem(revision, app_template.absolute().parent)
        if problem:
            raise typer.BadParameter(f"{revision!r}: {problem}", param_hint="'--revision'")
    shares = parse_mix(mix or DEFAULT_MIX)  # checked as the command line was read
    overrides = _parameters(parameter, app_template)  # before the engine's imports
    from onceflow.devtools.cost import print_cost_run, run_cost_model, template_at_revision

    _quiet_engine_logs()
    if revision is not None:
        from contextlib import ExitStack

        with ExitStack() as exports:
            try:
                exported = exports.enter_context(template_at_revision(revision, app_template))
            except ValueError as problem:  # a revision without the app's files
                said = " ".join(str(problem).split())
                raise typer.BadParameter(f"{revision!r}: {said}", param_hint="'--revision'") from None
            try:
                run = run_cost_model(exported, overrides, progress=console.print)
            except Exception as error:  # an older app than this cost model knows: say so, not a traceback
                _fail(
                    f"--revision {revision}: the cost model cannot run that revision's app "
                    f"({type(error).__name__}: {_one_line(str(error))}); pick a later revision"
                )
    else:
        run = run_cost_model(app_template, overrides, progress=console.print)
    print_cost_run(run, shares, console)
    if revision is None:  # the subscriber, on the template in use (it is the same with any revision's pipeline)
        from onceflow.devtools.cost.subscriber import measure_subscriber, subscriber_table

        console.print(subscriber_table(measure_subscriber(app_template)))


@app.command()
def capacity(
    region: Annotated[
        str, typer.Option(callback=cli_checks.region(), help="the AWS region whose quotas apply")
    ] = "us-east-1",
    backlog: Annotated[
        int, typer.Option(min=0, help="a backlog of this many events: how long it takes to drain")
    ] = 1_000_000,
    groups: Annotated[int | None, typer.Option(min=1, help="FIFO source: message groups with messages waiting")] = None,
    template: Annotated[
        Path | None,
        typer.Option(
            callback=cli_checks.input_file("template"), help="a template.yaml (its ASL and functions beside it)"
        ),
    ] = None,
    parameter: Annotated[
        list[str] | None, typer.Option(help="template parameter override KEY=VALUE (repeatable)")
    ] = None,
) -> None:
    """Sustained events/s per mode in a region from AWS's published quotas: what binds first, bursts, drains, latency."""
    import logging

    app_template = _app_template(template)
    overrides = _parameters(parameter, app_template)  # before the engine's imports
    from onceflow.devtools.capacity import RegionError, capacity_for, load_quotas, print_capacity

    logging.getLogger("samtranslator").setLevel(logging.ERROR)  # its "unpublished metrics" warning
    try:
        capacities = capacity_for(app_template, region, overrides, groups)
    except RegionError as error:
        _fail(f"--region: {error}")
    print_capacity(capacities, load_quotas(region), backlog, console)
