"""The pytest plugin (entry point `pytest11: onceflow`): a team's tests against its own stack on the
embedded AWS. Fixtures, each prefixed `onceflow_` (docs/ADOPTING.md has them with examples):

    onceflow_aws         session   the embedded AWS (onceflow.engine.EmbeddedAws), no delays, IAM enforced
                                   unless --onceflow-iam=off, the ini option `onceflow_iam = off` or
                                   ONCEFLOW_IAM=off (docs/IAM.md)
    onceflow_template    session   the app's template.yaml: --onceflow-template, the ini option
                                   `onceflow_template` (relative to the rootdir), or <rootdir>/template.yaml
    onceflow_parameters  function  template parameters for this test: every `onceflow_parameters` marker's
                                   keywords, the closest winning; override the fixture to compute them
    onceflow_stack       function  the stack deployed from the template with those parameters, as just
                                   deployed (onceflow.local.stack.LocalStack)
    onceflow_pipeline    function  the pipeline on it (onceflow.local.pipeline.LocalPipeline)
    onceflow_driver      function  onceflow.testing.PipelineDriver: send, process, settle, R1–R5

This module imports only pytest and the standard library: the plugin loads in every pytest run of an
environment where onceflow is installed, and costs nothing until a test asks for a fixture.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from onceflow.engine import EmbeddedAws
    from onceflow.local.pipeline import LocalPipeline
    from onceflow.local.stack import LocalStack
    from onceflow.testing.driver import PipelineDriver

MARKER = "onceflow_parameters"
MARKER_HELP = (
    f"{MARKER}(**parameters): template parameters the onceflow_stack of this test is deployed with, "
    'e.g. SourceQueueType="FIFO", DeploySubscriber="true" (checked against the template)'
)
INI = "onceflow_template"
IAM_INI = "onceflow_iam"
_OFF, _ON = ("off", "0", "false", "no"), ("on", "1", "true", "yes")
IAM_OFF_HEADER = (
    "onceflow: IAM enforcement off ({source}): the embedded AWS authorizes no request (functions and the state "
    "machine still call with their roles' credentials), so a missing permission or a resource policy that "
    "does not admit a service is not refused and no denial is recorded (docs/IAM.md)"
)
# What this process must never use while the embedded AWS runs: a profile or session of a real account.
_REAL_ACCOUNT_VARIABLES = ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("onceflow", "Onceflow: the app's stack on the embedded AWS")
    group.addoption(
        "--onceflow-template",
        dest="onceflow_template",
        default=None,
        metavar="PATH",
        help="the app's template.yaml (default: the ini option onceflow_template, else <rootdir>/template.yaml)",
    )
    group.addoption(
        "--onceflow-iam",
        dest="onceflow_iam",
        default=None,
        choices=("on", "off"),
        help="IAM enforced from the template's roles and resource policies (on, the default) or not (off: "
        "for a template that is not ready); default: the ini option onceflow_iam, else ONCEFLOW_IAM, else on",
    )
    parser.addini(INI, "the app's template.yaml, relative to the rootdir (default: template.yaml)", default="")
    parser.addini(IAM_INI, "on (the default) or off: IAM enforcement on the embedded AWS", default="")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)
    iam_enforcement(config)  # a wrong ini value is a usage error before any test runs


def iam_enforcement(config: pytest.Config) -> tuple[bool, str]:
    """Whether the embedded AWS enforces IAM, and what said so: --onceflow-iam, else the ini option
    onceflow_iam, else ONCEFLOW_IAM (EmbeddedAws's own switch: off, 0, false, no), else on."""
    given = config.getoption("onceflow_iam", None)
    if given:
        return given == "on", f"--onceflow-iam={given}"
    configured = str(config.getini(IAM_INI) or "").strip().lower()
    if configured:
        if configured not in (*_OFF, *_ON):
            raise pytest.UsageError(f"ini option {IAM_INI} = {configured!r}: on or off")
        return configured in _ON, f"the ini option {IAM_INI} = {configured}"
    variable = os.environ.get("ONCEFLOW_IAM", "on").strip().lower()
    return variable not in _OFF, f"ONCEFLOW_IAM={variable}"


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Said when enforcement is off, with what it skips (nothing is said when it is on)."""
    enforced, source = iam_enforcement(config)
    return [] if enforced else [IAM_OFF_HEADER.format(source=source)]


def template_path(config: pytest.Config) -> Path:
    """The template the fixtures deploy; FileNotFoundError naming where it was looked for."""
    given = config.getoption("onceflow_template")
    if given:
        path, source = Path(given), "--onceflow-template"
    else:
        configured = str(config.getini(INI) or "")
        path = config.rootpath / (configured or "template.yaml")
        source = f"the ini option {INI}" if configured else "the rootdir"
    if not path.is_file():
        raise FileNotFoundError(f"onceflow: no template at {path} (from {source}); give --onceflow-template PATH")
    return path.resolve()


@pytest.fixture(scope="session")
def onceflow_template(pytestconfig: pytest.Config) -> Path:
    try:
        return template_path(pytestconfig)
    except FileNotFoundError as error:
        missing = str(error)
    pytest.fail(missing, pytrace=False)


@pytest.fixture(scope="session")
def onceflow_aws(pytestconfig: pytest.Config) -> Iterator[EmbeddedAws]:
    """The embedded AWS for the session: moto in server mode in this process, Onceflow's patches applied,
    Retry and Wait delays scaled to 0, IAM enforced unless switched off (iam_enforcement). Its
    credentials are fake; no profile of a real account is read."""
    enforced, _ = iam_enforcement(pytestconfig)
    saved = {
        name: os.environ.get(name) for name in (*_REAL_ACCOUNT_VARIABLES, "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
    }
    for name in _REAL_ACCOUNT_VARIABLES:
        os.environ.pop(name, None)
    os.environ.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing")
    import logging

    from onceflow.engine import EmbeddedAws

    # moto logs every caught task failure with a long repr; the verdicts and histories say what failed.
    logging.getLogger("moto").setLevel(logging.CRITICAL)
    try:
        with EmbeddedAws(time_scale=0.0, iam=enforced) as aws:
            yield aws
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.fixture
def onceflow_parameters(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The keywords of every `onceflow_parameters` marker on the test, its class and module, the
    closest winning. Override this fixture (same name) to compute them, e.g. per parametrised mode."""
    chosen: dict[str, Any] = {}
    for marker in reversed(list(request.node.iter_markers(MARKER))):
        for argument in marker.args:
            chosen.update(dict(argument))
        chosen.update(marker.kwargs)
    return chosen


@pytest.fixture(scope="session")
def _onceflow_deployments(onceflow_template: Path, onceflow_aws: EmbeddedAws) -> Any:
    # The template first: a missing one is told before the embedded AWS starts.
    from onceflow.testing.deployments import Deployments

    return Deployments(onceflow_aws, onceflow_template)


@pytest.fixture
def onceflow_stack(
    _onceflow_deployments: Any, onceflow_template: Path, onceflow_parameters: dict[str, Any]
) -> Iterator[LocalStack]:
    """The app's stack, as just deployed: deployed once per parameter set, restored for every test."""
    from onceflow.domain.parameters import ParameterError, parse_parameters
    from onceflow.ops.executions import stop_running
    from onceflow.testing.deployments import plain_parameters

    try:
        parameters = parse_parameters(plain_parameters(onceflow_parameters), onceflow_template)
    except ParameterError as error:
        refused = str(error)
    else:
        refused = None
    if refused is not None:  # outside the except: one line, without the ParameterError chained to it
        pytest.fail(f"{MARKER}: {refused}", pytrace=False)
    stack = _onceflow_deployments.fresh(parameters)
    yield stack
    stop_running(stack.client("stepfunctions"), [stack.state_machine_arn])


@pytest.fixture
def onceflow_pipeline(onceflow_aws: EmbeddedAws, onceflow_stack: LocalStack) -> LocalPipeline:
    """The whole pipeline on the stack: the SQS event source with the app's starter behind it, the state
    machine, the safety net and the reconciler, each subscriber behind its queue, a notification reader."""
    from onceflow.local.pipeline import LocalPipeline

    return LocalPipeline(onceflow_aws, onceflow_stack, log_stream=io.StringIO())


@pytest.fixture
def onceflow_driver(onceflow_pipeline: LocalPipeline) -> Iterator[PipelineDriver]:
    """Send, process, settle and judge (onceflow.testing.PipelineDriver). On a FIFO source the order of
    sends, writes and notifications is logged for R5 while the test runs."""
    from onceflow.testing.driver import PipelineDriver

    stack = onceflow_pipeline.stack
    if not stack.fifo:
        yield PipelineDriver(onceflow_pipeline)
        return
    from onceflow.devtools.schedules.effects import EffectLog

    log = EffectLog(
        stack.source_queue_url.rsplit("/", 1)[-1],
        stack.dead_letter_queue_url.rsplit("/", 1)[-1],
        stack.business_table,
        stack.business_key,
        stack.domain.event_id_of,
    )
    with log.installed():
        yield PipelineDriver(onceflow_pipeline, effects=log)
