"""The pytest plugin as a team uses it: the payments app's own tests run on its stack, deployed from its
template on the embedded AWS; the fixtures restore it between tests, check template parameters and
fail a run that judged nothing. Each run is pytest in a process of its own (one app per process:
its functions' modules are loaded by name), as in a team's repository."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest


def _pytest(cwd: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _counts(output: str) -> dict[str, int]:
    return {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|errors?|skipped|deselected)", output)}


def test_the_apps_own_tests_pass_on_its_stack(payments_root: Path) -> None:
    """New events, resends and redeliveries, poison, the business item, a conflict, and the
    subscriber's R4 (the FIFO and EXPRESS ones run in CI's adoption section, from the wheel)."""
    done = _pytest(payments_root, "-k", "not fifo and not express")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert _counts(done.stdout) == {"passed": 6, "deselected": 2}, done.stdout[-2000:]


PLUGIN_BEHAVIOUR = """
import pytest
from onceflow.testing import GuaranteeFailed


def test_a_sends_two_events(onceflow_driver):
    onceflow_driver.send(2)
    onceflow_driver.settle()
    assert len(onceflow_driver.business_rows()) == 2


def test_b_finds_the_stack_as_just_deployed(onceflow_driver, _onceflow_deployments):
    assert onceflow_driver.business_rows() == [] and onceflow_driver.dead_letters() == []
    assert _onceflow_deployments.deploys == 1  # restored, not deployed again


def test_c_a_run_that_processed_nothing_fails_every_verdict(onceflow_driver):
    with pytest.raises(GuaranteeFailed) as failed:
        onceflow_driver.assert_guarantees()
    assert str(failed.value).count("nothing to judge") == 3  # R1, R2 and R3 each


def test_d_only_poison_is_not_a_pass(onceflow_driver):
    onceflow_driver.send(["not json"])
    onceflow_driver.settle()
    assert not onceflow_driver.verdict("R1").passed


@pytest.mark.onceflow_parameters(StateMachineType="FAST")
def test_e_a_parameter_the_template_refuses(onceflow_stack):
    pass


@pytest.mark.onceflow_parameters(DeploySubscriber=True)
def test_f_other_parameters_deploy_again(onceflow_driver, _onceflow_deployments):
    assert onceflow_driver.stack.subscribers and _onceflow_deployments.deploys == 2
    with pytest.raises(KeyError, match="R5 a FIFO source"):
        onceflow_driver.assert_guarantees("R5")
    onceflow_driver.send(1)
    onceflow_driver.settle()


def test_g_the_first_parameters_again_are_brought_back_not_deployed(onceflow_driver, _onceflow_deployments):
    assert not onceflow_driver.stack.subscribers and _onceflow_deployments.deploys == 2
    assert onceflow_driver.business_rows() == []
    onceflow_driver.send(1)
    onceflow_driver.settle()
    assert len(onceflow_driver.business_rows()) == 1
"""


def test_the_fixtures_restore_the_stack_check_parameters_and_judge_nothing_as_a_failure(
    payments_root: Path, tmp_path: Path
) -> None:
    (tmp_path / "test_behaviour.py").write_text(textwrap.dedent(PLUGIN_BEHAVIOUR))
    done = _pytest(tmp_path, "--onceflow-template", str(payments_root / "template.yaml"), "test_behaviour.py")
    assert _counts(done.stdout) == {"passed": 6, "error": 1}, done.stdout[-4000:]
    failure = done.stdout.split("ERROR at setup of test_e_a_parameter_the_template_refuses")[1].split("====")[0]
    assert failure.strip().splitlines()[-1] == (
        "onceflow_parameters: 'StateMachineType=FAST': StateMachineType takes one of STANDARD, EXPRESS"
    )
    assert len(failure.strip().splitlines()) == 2, failure  # the header's underline, then the one line


def test_without_a_template_the_fixtures_say_where_they_looked(tmp_path: Path) -> None:
    (tmp_path / "test_nothing.py").write_text("def test_stack(onceflow_stack):\n    pass\n")
    done = _pytest(tmp_path, "test_nothing.py", timeout=120)
    assert done.returncode == 1
    assert f"onceflow: no template at {tmp_path.resolve() / 'template.yaml'} (from the rootdir)" in done.stdout
    assert "moto" not in done.stdout  # told before the embedded AWS started


@pytest.mark.parametrize("module", ["onceflow.testing.plugin", "onceflow.testing"])
def test_loading_the_plugin_imports_neither_moto_nor_the_local_stack(module: str) -> None:
    """pytest loads it in every run of an environment where onceflow is installed."""
    code = f"import sys, {module}; print(sorted(m for m in sys.modules if m.split('.')[0] in ('moto', 'boto3', 'samtranslator') or m.startswith('onceflow.local')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]"


def test_pytest_finds_the_plugin_through_its_entry_point() -> None:
    from importlib.metadata import entry_points

    (plugin,) = [e for e in entry_points(group="pytest11") if e.name == "onceflow"]
    assert plugin.value == "onceflow.testing.plugin"
    with pytest.raises(AttributeError):
        __import__("onceflow.testing").testing.NotAThing  # noqa: B018 (the lazy exports name what is missing)


IAM_SWITCH_BEHAVIOUR = """
import boto3
import pytest
from botocore.exceptions import ClientError
from onceflow.engine.iam.identities import assume


def test_the_starter_role_publishing(onceflow_aws, onceflow_stack):
    # The starter's role has no sns:Publish: refused when enforced, let through when not.
    starter = next(f for f in onceflow_stack.functions.values() if f.code_dir == onceflow_stack.starter_code_dir)
    credentials = assume("123456789012", starter.role_arn, "starter")
    sns = boto3.client("sns", endpoint_url=onceflow_aws.endpoint_url, region_name="us-east-1", **credentials)
    if onceflow_aws.iam.on:
        with pytest.raises(ClientError, match="AuthorizationError"):
            sns.publish(TopicArn=onceflow_stack.notification_topic_arn, Message="{}")
    else:
        sns.publish(TopicArn=onceflow_stack.notification_topic_arn, Message="{}")
    assert len(onceflow_aws.iam.denials.all()) == (1 if onceflow_aws.iam.on else 0)
    print(f"IAM enforcement {'on' if onceflow_aws.iam.on else 'off'}")
"""


def test_the_iam_switch_turns_enforcement_off_from_the_command_line_or_the_ini_file(
    payments_root: Path, tmp_path: Path
) -> None:
    """--onceflow-iam=off lets a request the template's role may not make through, and the run's header
    says what is skipped; the ini option does the same, and the command line wins over it."""
    (tmp_path / "test_switch.py").write_text(textwrap.dedent(IAM_SWITCH_BEHAVIOUR))
    template = ("--onceflow-template", str(payments_root / "template.yaml"))
    # -v cancels _pytest's -q: the header is printed
    off = _pytest(tmp_path, *template, "--onceflow-iam=off", "-s", "-v", "test_switch.py")
    assert _counts(off.stdout) == {"passed": 1}, off.stdout[-4000:]
    assert "IAM enforcement off\n" in off.stdout
    header = off.stdout.split("collect")[0]
    assert "onceflow: IAM enforcement off (--onceflow-iam=off): the embedded AWS authorizes no request" in header

    (tmp_path / "pytest.ini").write_text("[pytest]\nonceflow_iam = off\n")
    # -c: this ini file (the template's path would make the app's own pyproject.toml the configfile)
    template = (*template, "-c", str(tmp_path / "pytest.ini"))
    from_ini = _pytest(tmp_path, *template, "-v", "--co", "test_switch.py")
    assert "onceflow: IAM enforcement off (the ini option onceflow_iam = off)" in from_ini.stdout, from_ini.stdout[
        :1500
    ]
    on = _pytest(tmp_path, *template, "--onceflow-iam=on", "-s", "-v", "test_switch.py")
    assert _counts(on.stdout) == {"passed": 1}, on.stdout[-4000:]
    assert "IAM enforcement on\n" in on.stdout and "onceflow: IAM enforcement off" not in on.stdout

    (tmp_path / "pytest.ini").write_text("[pytest]\nonceflow_iam = maybe\n")
    wrong = _pytest(tmp_path, "--co", "test_switch.py", timeout=120)
    assert wrong.returncode == 4 and "ini option onceflow_iam = 'maybe': on or off" in wrong.stderr
