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

`run_each` runs checks over several projects at once (the tests: the real files and copies broken
on purpose) with one run of each tool, each project getting only its own findings: most of a
tool's CPU is its start-up (checkov ~2.5 s, cfn-lint ~1 s, the SAM CLI ~1 s).
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
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from onceflow.devtools.sam_in_one_process import NO_SAMCLI
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


# --- the checks: each takes (check name, project) pairs and gives an Outcome per pair ---

Outcome = str | CheckFailed
"""What a check found in one project: its report when it passes, the CheckFailed when it does not."""

Pairs = Sequence[tuple[str, Project]]

_SAM_ENV = {"AWS_DEFAULT_REGION": REGION, "SAM_CLI_TELEMETRY": "0"}
_SAM_ARGUMENTS = {"sam-validate": [], "sam-lint": ["--lint"]}
SAM_IN_ONE_PROCESS = "ONCEFLOW_SAM_IN_ONE_PROCESS"
"""Set to 0 to start one `sam` process per command line instead of one for all of them."""
_SAM_DRIVER = Path(__file__).with_name("sam_in_one_process.py")


def run_sam(pairs: Pairs) -> list[Outcome]:
    """sam-validate (`sam validate`: the SAM translator) and sam-lint (`sam validate --lint`)."""
    command_lines = [
        (project.root, ["validate", *_SAM_ARGUMENTS[name], "--template-file", project.template.name])
        for name, project in pairs
    ]
    outcomes: list[Outcome] = []
    for code, stdout, stderr in sam_command_lines(find_tool("sam", ".venv-sam"), command_lines):
        output = _combined(stdout, stderr)
        outcomes.append(output if code == 0 else CheckFailed(output or f"sam validate exited {code}"))
    return outcomes


def sam_command_lines(sam: Path, command_lines: Sequence[tuple[Path, list[str]]]) -> list[tuple[int, str, str]]:
    """Exit status, standard output and standard error of each `sam` command line, run in its directory.

    When `sam` is the entry script of a virtualenv (`.venv-sam`, pipx, Homebrew), its interpreter
    runs them all in one process: the SAM CLI's start-up (~1 s of CPU) is paid once.
    """
    python = sam.resolve().parent / "python"
    if os.environ.get(SAM_IN_ONE_PROCESS) == "0" or not python.is_file():
        return _sam_process_each(sam, command_lines)
    jobs = [{"cwd": str(cwd), "args": args} for cwd, args in command_lines]
    with tempfile.TemporaryDirectory(prefix="sam-report-") as scratch:
        report = Path(scratch) / "report.json"
        completed = subprocess.run(
            [str(python), str(_SAM_DRIVER), str(report)],
            input=json.dumps(jobs),
            env={**os.environ, **_SAM_ENV},
            capture_output=True,
            text=True,
            timeout=TOOL_TIMEOUT_SECONDS,
            check=False,
        )
        if completed.returncode == NO_SAMCLI:
            return _sam_process_each(sam, command_lines)
        try:
            ran = json.loads(report.read_text())
        except (OSError, ValueError) as error:
            problem = _combined(completed.stdout.strip(), completed.stderr.strip())
            raise CheckFailed(f"{python} {_SAM_DRIVER.name} exited {completed.returncode}:\n{problem}") from error
    return [(job["code"], job["stdout"].strip(), job["stderr"].strip()) for job in ran]


def _sam_process_each(sam: Path, command_lines: Sequence[tuple[Path, list[str]]]) -> list[tuple[int, str, str]]:
    return [_run([sam, *args], cwd, _SAM_ENV) for cwd, args in command_lines]


def run_cfn_lint(pairs: Pairs) -> list[Outcome]:
    """cfn-lint once over every project's translated template; each project gets its own findings."""
    outcomes: list[Outcome | None] = [None] * len(pairs)
    translated: dict[int, Path] = {}
    for index, (_, project) in enumerate(pairs):
        try:
            translated[index] = project.translated
        except CheckFailed as failure:
            outcomes[index] = failure
    if translated:
        cwd = pairs[next(iter(translated))][1].root
        command = [find_tool("cfn-lint"), "--format", "json", *(path.resolve() for path in translated.values())]
        code, stdout, stderr = _run(command, cwd)
        try:
            matches = json.loads(stdout) if stdout else []
        except ValueError as error:
            raise CheckFailed(_combined(stdout, stderr) or f"cfn-lint exited {code}") from error
        if code != 0 and not matches:
            raise CheckFailed(_combined(stdout, stderr) or f"cfn-lint exited {code}")
        by_file: dict[Path, list[dict[str, Any]]] = {}
        for match in matches:
            by_file.setdefault((cwd / (match.get("Filename") or "")).resolve(), []).append(match)
        unattributed = set(by_file) - {path.resolve() for path in translated.values()}
        if unattributed:  # a finding in no template it was given: every project fails, with it
            raise CheckFailed(f"cfn-lint reported on {', '.join(map(str, sorted(unattributed)))}:\n{stdout}")
        for index, path in translated.items():
            project = pairs[index][1]
            found = by_file.get(path.resolve(), [])
            report = "\n\n".join(_cfn_lint_finding(match, project.shown(path)) for match in found)
            outcomes[index] = CheckFailed(_combined(report, stderr)) if found else f"{project.shown(path)}: no findings"
    return [outcome if outcome is not None else CheckFailed("cfn-lint did not run") for outcome in outcomes]


def _cfn_lint_finding(match: dict[str, Any], where: str) -> str:
    """One finding as cfn-lint's own text format shows it: rule, message, then file:line:column."""
    start = match.get("Location", {}).get("Start", {})
    line, column = start.get("LineNumber", 0), start.get("ColumnNumber", 0)
    return f"{match['Rule']['Id']} {match['Message']}\n{where}:{line}:{column}"


@dataclass
class _AslFile:
    """One ASL file of a project: its placeholders filled in for statelint, and what is wrong with it."""

    path: Path
    filled: Path
    problems: list[str]


def run_statelint(pairs: Pairs) -> list[Outcome]:
    """statelint once over every project's ASL files, placeholders filled in; each file gets its own problems."""
    prepared: list[list[_AslFile] | CheckFailed] = []
    for _, project in pairs:
        try:
            prepared.append(_asl_files_filled_in(project))
        except CheckFailed as failure:
            prepared.append(failure)
        except Exception as error:  # an unreadable file fails this project's check, with the reason
            prepared.append(CheckFailed(f"{type(error).__name__}: {error}"))
    ready = [(project, entry) for (_, project), entry in zip(pairs, prepared, strict=True) if isinstance(entry, list)]
    if ready:
        _add_statelint_problems([file for _, entry in ready for file in entry], ready[0][0].root)
    outcomes: list[Outcome] = []
    for (_, project), entry in zip(pairs, prepared, strict=True):
        if isinstance(entry, CheckFailed):
            outcomes.append(entry)
            continue
        report = "\n".join(
            f"{project.shown(file.path)}: " + ("\n".join(file.problems) if file.problems else "valid") for file in entry
        )
        outcomes.append(CheckFailed(report) if any(file.problems for file in entry) else report)
    return outcomes


def _asl_files_filled_in(project: Project) -> list[_AslFile]:
    paths = project.asl_files()
    if not paths:
        raise CheckFailed(f"no statemachine/*.asl.json under {project.root}")
    substitutions = _definition_substitutions(project)
    out_dir = project.build_dir / "statelint"
    out_dir.mkdir(parents=True, exist_ok=True)
    files = []
    for path in paths:
        text = path.read_text()
        problems = [
            f"placeholder ${{{name}}} has no DefinitionSubstitutions entry in {project.template.name}"
            for name in sorted(set(_PLACEHOLDER.findall(text)))
            if path.name in substitutions and name not in substitutions[path.name]
        ]
        filled = out_dir / path.name
        filled.write_text(_PLACEHOLDER.sub(lambda match: placeholder_value(match.group(1)), text))
        files.append(_AslFile(path, filled, problems))
    return files


def _add_statelint_problems(files: list[_AslFile], cwd: Path) -> None:
    """Run statelint over all the filled-in files; add its report for each file that has problems.

    Given several files, statelint prints each one's path on a line of its own before its problems.
    """
    code, stdout, stderr = _run([find_tool("statelint"), "--ignore=FLOAT", *(file.filled for file in files)], cwd)
    if code == 0:
        return
    if len(files) == 1:
        files[0].problems.append(_combined(stdout, stderr) or f"statelint exited {code}")
        return
    by_path = {str(file.filled): file for file in files}
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in stdout.splitlines():
        if line in by_path:
            current = sections.setdefault(line, [])
        elif current is not None:
            current.append(line)
    if not sections:  # statelint failed without naming a file: every file gets what it said
        for file in files:
            file.problems.append(_combined(stdout, stderr) or f"statelint exited {code}")
        return
    for path, lines in sections.items():
        by_path[path].problems.append(_combined("\n".join(lines), stderr))


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


def run_checkov(pairs: Pairs) -> list[Outcome]:
    """checkov once over every project's template.yaml and translated template (SAM Policies only show up expanded)."""
    outcomes: list[Outcome | None] = [None] * len(pairs)
    scanned: dict[int, list[Path]] = {}
    for index, (_, project) in enumerate(pairs):
        try:
            scanned[index] = [project.template, project.translated]
        except CheckFailed as failure:
            outcomes[index] = failure
    if scanned:
        command: list[str | Path] = [find_tool("checkov", ".venv-checkov"), "--framework", "cloudformation"]
        for path in (path for paths in scanned.values() for path in paths):
            command += ["--file", path.resolve()]
        command += ["--skip-download", "--output", "json", "--compact"]  # --compact: no code blocks
        code, stdout, stderr = _run(command, pairs[next(iter(scanned))][1].root)
        try:
            reports = json.loads(stdout)
        except ValueError as error:
            raise CheckFailed(f"checkov exited {code} without a JSON report:\n{_combined(stdout, stderr)}") from error
        reports = reports if isinstance(reports, list) else [reports]
        for index, paths in scanned.items():
            project = pairs[index][1]
            findings, skips, totals = _checkov_lines(reports, {path.resolve(): path for path in paths}, project.shown)
            text = "\n".join([", ".join(f"{key}: {value}" for key, value in totals.items()), *findings, *skips])
            if findings or totals["parsing_errors"] or code not in (0, 1):
                outcomes[index] = CheckFailed(text if code in (0, 1) else f"{text}\n{stderr}")
            else:
                outcomes[index] = text
    return [outcome if outcome is not None else CheckFailed("checkov did not run") for outcome in outcomes]


def _checkov_lines(
    reports: list[dict[str, Any]], files: dict[Path, Path], show: Callable[[Path], str]
) -> tuple[list[str], list[str], dict[str, int]]:
    """Failed and skipped checks in `files` (resolved path -> path as given), one line each, and their totals."""
    findings, skips = [], []
    totals = {"passed": 0, "failed": 0, "skipped": 0, "parsing_errors": 0}
    for report in reports:
        results = report.get("results", {})
        for kind in ("passed", "failed", "skipped"):
            for check in results.get(f"{kind}_checks", []):
                path = files.get(Path(check["file_abs_path"]).resolve())
                if path is None:
                    continue
                totals[kind] += 1
                if kind == "failed":
                    findings.append(
                        f"FAILED {check['check_id']} {check['resource']} in {show(path)}: {check['check_name']}"
                    )
                elif kind == "skipped":
                    reason = check.get("check_result", {}).get("suppress_comment") or "no reason given"
                    skips.append(f"skipped {check['check_id']} {check['resource']} in {show(path)}: {reason}")
        # A file checkov could not parse is named by the path it was given (absolute here).
        totals["parsing_errors"] += sum(Path(error).resolve() in files for error in results.get("parsing_errors", []))
    return findings, skips, totals


CHECKS: dict[str, str] = {
    "sam-validate": "sam",
    "sam-lint": "sam",
    "cfn-lint": "cfn-lint",
    "statelint": "statelint",
    "checkov": "checkov",
}
"""Each check and the tool it runs: the checks of one tool run together share one start-up of it."""

TOOLS: dict[str, Callable[[Pairs], list[Outcome]]] = {
    "sam": run_sam,
    "cfn-lint": run_cfn_lint,
    "statelint": run_statelint,
    "checkov": run_checkov,
}


def run_each(pairs: Pairs) -> list[CheckResult]:
    """Run each (check, project) pair, one tool at a time, each tool once for all of its pairs.

    One run of a tool over several projects (tests: the project's own files and copies broken on
    purpose) costs one start-up instead of one each; each project still gets only its own findings.
    A tool that cannot run or crashes fails each of its pairs, with the reason.
    """
    results: list[CheckResult | None] = [None] * len(pairs)
    by_tool: dict[str, list[int]] = {}
    for index, (name, _) in enumerate(pairs):
        by_tool.setdefault(CHECKS[name], []).append(index)
    for tool, indices in by_tool.items():
        started = time.perf_counter()
        outcomes: list[Outcome]
        try:
            outcomes = TOOLS[tool]([pairs[index] for index in indices])
        except CheckFailed as failure:
            outcomes = [failure] * len(indices)
        except Exception as error:  # a tool that crashes (unreadable template, timeout) fails, with the reason
            outcomes = [CheckFailed(f"{type(error).__name__}: {error}")] * len(indices)
        seconds = time.perf_counter() - started
        for index, outcome in zip(indices, outcomes, strict=True):
            passed = not isinstance(outcome, CheckFailed)
            results[index] = CheckResult(pairs[index][0], passed, str(outcome), seconds)
    return [result for result in results if result is not None]


def run_check(name: str, project: Project) -> CheckResult:
    return run_each([(name, project)])[0]


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
