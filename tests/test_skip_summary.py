"""`make test` on a machine without Chromium: the end of the run names the skipped browser tests and
the one command that installs what they need (tests/skip_summary.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import tests.conftest
from tests import skip_summary

ROOT = Path(__file__).parents[1]
BROWSER_TESTS = "tests/trace/test_trace_browser.py"
PLUGINS = ["-p", "tests.skip_summary", "-p", "no:cacheprovider", "-p", "no:hypothesispytest"]


def test_without_chromium_the_run_ends_naming_the_skipped_browser_tests_and_the_install_command():
    """The real browser test module, with a PATH where no Chromium is (CI unset: there a missing
    browser fails instead). Without the shared conftest (its engine imports cost seconds): the
    plugin is loaded by name, and the conftest is checked to load the same hook."""
    assert tests.conftest.pytest_terminal_summary is skip_summary.pytest_terminal_summary
    environment = {k: v for k, v in os.environ.items() if k != "CI"}
    environment["PATH"] = str(Path(sys.executable).parent)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", BROWSER_TESTS, "-q", "--noconftest", *PLUGINS],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    summary = run.stdout.split(skip_summary.SECTION, 1)[1].splitlines()[1:]
    names = [line.strip() for line in summary if line.startswith(f"  {BROWSER_TESTS}::")]
    assert summary[0] == f"{len(names)} skipped: needs Chromium on PATH; install it with: sudo bash .ci/run browser"
    skipped = int(re.search(r"(\d+) skipped in ", run.stdout).group(1))
    assert len(names) == skipped >= 5 and all(name.split("::")[1].startswith("test_") for name in names)
    assert "SKIPPED [" not in run.stdout  # pytest's own -r summary leaves the skips to this section
