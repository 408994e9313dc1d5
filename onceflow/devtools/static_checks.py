"""Static checks of template.yaml and the ASL files, offline: each reports pass or fail with its output.

    python -m onceflow.devtools.static_checks                 # all checks
    python -m onceflow.devtools.static_checks statelint sam-lint
    python -m onceflow.devtools.static_checks --list

- sam-validate: `sam validate`: the SAM translator (catches an unknown SQS event property).
- sam-lint:     `sam validate --lint`: cfn-lint on the SAM template, not the translator (so run both).
- cfn-lint:     the template translated to CloudFormation by aws-sam-translator with every ASL
                file inlined as `Definition`, written under build/ and linted: rule E3601 checks
                the ASL's structure only there, and a Ref inside a SAM resource's properties is
                only checked there.
- statelint:    every statemachine/*.asl.json, `${...}` placeholders filled in first (dangling
                Next, unreachable states, bad JitterStrategy), and every placeholder must have a
                DefinitionSubstitutions entry in the template.
- checkov:      template.yaml and the translated template (SAM Policies only show up expanded).

aws-sam-cli and checkov each pin their own boto3, so they live in their own virtualenvs,
`.venv-sam` and `.venv-checkov` beside this project (`make venv-tools` or `.ci/run` makes them);
otherwise they are looked for on PATH. Exit status: 0 when every selected check passes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from onceflow.local.template import PROJECT_ROOT, load_sam_template, translate_with_inline_definitions

TOOL_TIMEOUT_SECONDS = 600
REGION = "us-east-1"
ACCOUNT = "123456789012"
TRANSLATED_NAME = "template.translated.json"
_PLACEHOLDER = re.compile(r"\$\{([^}]+)\}")


@dataclass(frozen=True)
class CheckResult:
    name: str
    passed: bool
    output: str
    seconds: float


class CheckFailed(Exception):
    """A check could not run or found a problem; the message says which."""


@dataclass
class Project:
    """The files under check (`root`) and where generated files go (`build_dir`)."""

    root: Path
    build_dir: Path

    @property
    def template(self) -> Path:
        return self.root / "template.yaml"

    def asl_files(self) -> list[Path]:
        return sorted((self.root / "statemachine").glob("*.asl.json"))

    @cached_property
    def translated(self) -> Path:
        """The translated CloudFormation template, written once per run; CheckFailed if it cannot be made."""
        os.environ.setdefault("AWS_DEFAULT_REGION", REGION)
        try:
            cloudformation = translate_with_inline_definitions(self.template)
        except Exception as error:  # the translator raises several types; each names the problem
            raise CheckFailed(f"aws-sam-translator could not translate {self.template.name}: {error}") from error
        self.build_dir.mkdir(parents=True, exist_ok=True)
        path = self.build_dir / TRANSLATED_NAME
        path.write_text(json.dumps(definitions_as_objects(cloudformation), indent=2) + "\n")
        return path

    def shown(self, path: Path) -> str:
        """A path as the reader of the report knows it: relative to the root when it is inside."""
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)


def definitions_as_objects(cloudformation: dict[str, Any]) -> dict[str, Any]:
    """Turn each translated `DefinitionString: {Fn::Join: ["\\n", [lines]]}` back into `Definition`.

    aws-sam-translator emits an inlined definition as a joined string, and cfn-lint's E3601 skips
    any definition that is an intrinsic function; as a JSON object it is checked. Same template.
    """
    for resource in cloudformation.get("Resources", {}).values():
        properties = resource.get("Properties", {})
        joined = properties.get("DefinitionString")
        if resource.get("Type") != "AWS::StepFunctions::StateMachine" or not isinstance(joined, dict):
            continue
        separator, parts = joined.get("Fn::Join", [None, None])
        if isinstance(separator, str) and isinstance(parts, list) and all(isinstance(p, str) for p in parts):
            properties["Definition"] = json.loads(separator.join(parts))
            del properties["DefinitionString"]
    return cloudformation


def _run(command: Sequence[str | Path], cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run a tool without input; return its exit status, standard output and standard error."""
    completed = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TOOL_TIMEOUT_SECONDS,
        check=False,
    )
    return completed.returncode, completed.stdout.strip(), completed.stderr.strip()


def _combined(stdout: str, stderr: str) -> str:
    return "\n".join(part for part in (stdout, stderr) if part)


def find_tool(name: str, venv: str | None = None) -> Path:
    """A tool from its own virtualenv beside the project, else this interpreter's, else PATH."""
    candidates = [PROJECT_ROOT / venv / "bin" / name] if venv else []
    candidates.append(Path(sys.executable).parent / name)
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which(name)
    if found is None:
        where = f"{venv}/bin/{name} or " if venv else ""
        raise CheckFailed(f"{name} not found ({where}PATH); create it with `make venv-tools` or `bash .ci/run tools`")
    return Path(found)


# --- the checks: each returns its output when the check passes, raises CheckFailed otherwise ---

_SAM_ENV = {"AWS_DEFAULT_REGION": REGION, "SAM_CLI_TELEMETRY": "0"}


def check_sam_validate(project: Project) -> str:
    return _sam(project, [])


def check_sam_lint(project: Project) -> str:
    return _sam(project, ["--lint"])


def _sam(project: Project, extra: list[str]) -> str:
    command = [find_tool("sam", ".venv-sam"), "validate", *extra, "--template-file", project.template.name]
    code, stdout, stderr = _run(command, project.root, _SAM_ENV)
    output = _combined(stdout, stderr)
    if code != 0:
        raise CheckFailed(output or f"sam validate exited {code}")
    return output


def check_cfn_lint(project: Project) -> str:
    translated = project.translated
    code, stdout, stderr = _run([find_tool("cfn-lint"), project.shown(translated)], project.root)
    output = _combined(stdout, stderr)
    if code != 0:
        raise CheckFailed(output or f"cfn-lint exited {code}")
    return f"{project.shown(translated)}: no findings"


def check_statelint(project: Project) -> str:
    files = project.asl_files()
    if not files:
        raise CheckFailed(f"no statemachine/*.asl.json under {project.root}")
    substitutions = _definition_substitutions(project)
    statelint = find_tool("statelint")
    out_dir = project.build_dir / "statelint"
    out_dir.mkdir(parents=True, exist_ok=True)
    reports, failed = [], False
    for path in files:
        text = path.read_text()
        problems = [
            f"placeholder ${{{name}}} has no DefinitionSubstitutions entry in {project.template.name}"
            for name in sorted(set(_PLACEHOLDER.findall(text)))
            if path.name in substitutions and name not in substitutions[path.name]
        ]
        filled = out_dir / path.name
        filled.write_text(_PLACEHOLDER.sub(lambda match: placeholder_value(match.group(1)), text))
        code, stdout, stderr = _run([statelint, "--ignore=FLOAT", filled], project.root)
        if code != 0:
            problems.append(_combined(stdout, stderr) or f"statelint exited {code}")
        failed = failed or bool(problems)
        reports.append(f"{project.shown(path)}: " + ("\n".join(problems) if problems else "valid"))
    if failed:
        raise CheckFailed("\n".join(reports))
    return "\n".join(reports)


def _definition_substitutions(project: Project) -> dict[str, set[str]]:
    """ASL file name -> the DefinitionSubstitutions keys of the state machines that use it."""
    keys: dict[str, set[str]] = {}
    for resource in load_sam_template(project.template).get("Resources", {}).values():
        properties = resource.get("Properties", {})
        uri = properties.get("DefinitionUri")
        if resource.get("Type") == "AWS::Serverless::StateMachine" and isinstance(uri, str):
            keys.setdefault(Path(uri).name, set()).update(properties.get("DefinitionSubstitutions", {}))
    return keys


def placeholder_value(name: str) -> str:
    """A plausible literal for a `${Name}` placeholder, guessed from its name."""
    slug = re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()
    if name.endswith("Url"):
        return f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/{slug}"
    if not name.endswith("Arn"):
        return slug
    for word, service, kind in (
        ("Topic", "sns", ""),
        ("Queue", "sqs", ""),
        ("Table", "dynamodb", "table/"),
        ("Function", "lambda", "function:"),
        ("StateMachine", "states", "stateMachine:"),
    ):
        if word in name:
            return f"arn:aws:{service}:{REGION}:{ACCOUNT}:{kind}{slug}"
    return f"arn:aws:iam::{ACCOUNT}:role/{slug}"


def check_checkov(project: Project) -> str:
    files = [project.template, project.translated]
    command: list[str | Path] = [find_tool("checkov", ".venv-checkov"), "--framework", "cloudformation"]
    for path in files:
        command += ["--file", project.shown(path)]
    command += ["--skip-download", "--output", "json"]
    code, stdout, stderr = _run(command, project.root)
    try:
        reports = json.loads(stdout)
    except ValueError as error:
        raise CheckFailed(f"checkov exited {code} without a JSON report:\n{_combined(stdout, stderr)}") from error
    findings, skips, totals = _checkov_lines(reports, project.shown)
    text = "\n".join([", ".join(f"{key}: {value}" for key, value in totals.items()), *findings, *skips])
    if findings or totals["parsing_errors"] or code not in (0, 1):
        raise CheckFailed(text if code in (0, 1) else f"{text}\n{stderr}")
    return text


def _checkov_lines(
    reports: dict[str, Any] | list[dict[str, Any]], show: Callable[[Path], str]
) -> tuple[list[str], list[str], dict[str, int]]:
    """Failed and skipped checks, one line each, and the totals of checkov's JSON report(s)."""
    reports = reports if isinstance(reports, list) else [reports]
    findings, skips = [], []
    totals = {"passed": 0, "failed": 0, "skipped": 0, "parsing_errors": 0}
    for report in reports:
        for key in totals:
            totals[key] += report.get("summary", {}).get(key, 0)
        results = report.get("results", {})
        for check in results.get("failed_checks", []):
            where = show(Path(check["file_abs_path"]))
            findings.append(f"FAILED {check['check_id']} {check['resource']} in {where}: {check['check_name']}")
        for check in results.get("skipped_checks", []):
            where = show(Path(check["file_abs_path"]))
            reason = check.get("check_result", {}).get("suppress_comment") or "no reason given"
            skips.append(f"skipped {check['check_id']} {check['resource']} in {where}: {reason}")
    return findings, skips, totals


CHECKS: dict[str, Callable[[Project], str]] = {
    "sam-validate": check_sam_validate,
    "sam-lint": check_sam_lint,
    "cfn-lint": check_cfn_lint,
    "statelint": check_statelint,
    "checkov": check_checkov,
}


def run_check(name: str, project: Project) -> CheckResult:
    started = time.perf_counter()
    try:
        output, passed = CHECKS[name](project), True
    except CheckFailed as failure:
        output, passed = str(failure), False
    except Exception as error:  # a check that crashes (unreadable template, tool timeout) fails, with the reason
        output, passed = f"{type(error).__name__}: {error}", False
    return CheckResult(name, passed, output, time.perf_counter() - started)


def run_checks(names: Sequence[str], project: Project, jobs: int = 1) -> Iterator[CheckResult]:
    """Run the named checks, `jobs` at a time; yield their results in the order of `names`."""
    if any(name in ("cfn-lint", "checkov") for name in names):
        # Translate once, before the checks that read the file run side by side; each check
        # that needs it reports a failure to translate itself.
        with contextlib.suppress(CheckFailed):
            project.translated  # noqa: B018
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        yield from pool.map(lambda name: run_check(name, project), names)


def format_result(result: CheckResult) -> str:
    status = "PASS" if result.passed else "FAIL"
    body = "\n".join(f"    {line}" for line in result.output.splitlines())
    return f"[{status}] {result.name} ({result.seconds:.1f} s)" + (f"\n{body}" if body else "")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m onceflow.devtools.static_checks", description=__doc__.split("\n")[0]
    )
    parser.add_argument("checks", nargs="*", metavar="CHECK", help=f"checks to run (default: all): {', '.join(CHECKS)}")
    parser.add_argument("--root", type=Path, default=PROJECT_ROOT, help="directory holding template.yaml")
    parser.add_argument("--build-dir", type=Path, help="where generated files go (default: ROOT/build)")
    parser.add_argument("--jobs", "-j", type=int, default=1, help="checks to run side by side (default: 1)")
    parser.add_argument("--list", action="store_true", help="list the checks and exit")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(CHECKS))
        return 0
    unknown = [name for name in args.checks if name not in CHECKS]
    if unknown:
        parser.error(f"unknown check(s) {', '.join(unknown)}; choose from {', '.join(CHECKS)}")
    root = args.root.resolve()
    project = Project(root, (args.build_dir or root / "build").resolve())
    started = time.perf_counter()
    results = []
    for result in run_checks(args.checks or list(CHECKS), project, args.jobs):
        print(format_result(result), flush=True)
        results.append(result)
    failed = [result.name for result in results if not result.passed]
    elapsed = time.perf_counter() - started
    verdict = f"FAILED: {', '.join(failed)}" if failed else "all passed"
    print(f"static checks: {len(results) - len(failed)} passed, {len(failed)} failed ({elapsed:.1f} s): {verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
