"""Run several `sam` command lines in one interpreter: the SAM CLI's start-up is paid once.

    <sam's python> sam_in_one_process.py REPORT.json < command-lines.json

Run by the interpreter of aws-sam-cli's own virtualenv (it cannot import this project), so it
imports only the standard library and samcli. Reads a JSON list of `{"cwd": dir, "args": [...]}`
on standard input; writes a JSON list of `{"code": int, "stdout": str, "stderr": str}`, one per
command line and in the same order, to REPORT.json (not to standard output, which a tool might
write to directly). Each command line runs through the `sam` entry point itself
(`samcli.cli.main.cli`), in its directory, with what it prints to standard output and standard
error (its log lines included) captured apart from the others'.
"""

from __future__ import annotations

import io
import json
import logging
import os
import sys
import traceback
from pathlib import Path
from typing import Any

NO_SAMCLI = 3
"""Exit status when this interpreter cannot import samcli (a `python` beside `sam` that is not its own)."""


class _Switchable(io.TextIOBase):
    """A text stream whose writes go to the buffer of the command line that is running."""

    def __init__(self) -> None:
        super().__init__()
        self.buffer_now = io.StringIO()

    @property
    def encoding(self) -> str:
        return "utf-8"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        return self.buffer_now.write(text)

    def take(self) -> str:
        text, self.buffer_now = self.buffer_now.getvalue(), io.StringIO()
        return text


def _exit_status(code: object, stderr: _Switchable) -> int:
    """What the interpreter makes of `sys.exit(code)`: a message goes to standard error, status 1."""
    if code is None or isinstance(code, int):
        return code or 0
    stderr.write(f"{code}\n")
    return 1


def main() -> int:
    report = Path(sys.argv[1])
    jobs: list[dict[str, Any]] = json.load(sys.stdin)
    out, err = _Switchable(), _Switchable()
    # Before samcli is imported: its logging handler keeps the stream it finds at import time.
    sys.stdout, sys.stderr = out, err
    try:
        from samcli.cli.main import cli
    except ImportError:
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        traceback.print_exc()
        return NO_SAMCLI

    # aws-sam-translator warns of "unpublished metrics" when its Metrics object is collected: a
    # `sam` process exits before that can print, here it would land in a later command's output.
    logging.getLogger("samtranslator.metrics.metrics").setLevel(logging.ERROR)
    results = []
    for job in jobs:
        os.chdir(job["cwd"])
        try:
            cli.main(args=job["args"], prog_name="sam")
            code = 0
        except SystemExit as exit_:
            code = _exit_status(exit_.code, err)
        except Exception:  # what the interpreter does with an exception no one catches
            traceback.print_exc(file=err)
            code = 1
        results.append({"code": code, "stdout": out.take(), "stderr": err.take()})
    sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    report.write_text(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
