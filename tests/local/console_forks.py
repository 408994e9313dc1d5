"""The `onceflow` console script's entry point run in a fresh child process per command line, cheaply.

A console script costs about 0.25 s of CPU to start (the interpreter, typer, rich); a walk of every
option with several bad values is a few hundred command lines. So one helper process (`python -m
tests.local.console_forks`, single-threaded: a fork copies no other thread's locks) imports what
the console script imports at its start (`onceflow.cli`) and forks a child per command line; the
child calls the entry point the installed script calls (`console_scripts` entry point `onceflow`)
with its own argv, environment, working folder, stdin from /dev/null and stdout and stderr of its
own, and exits with what the script would exit with, a traceback printed as the interpreter prints
it. Commands import what they need lazily in the child, as they do in the script.

`drop_dac`: the child gives up CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (root's way past file
permissions), so a file made unreadable is unreadable to it, as to any user.

Requests and answers are JSON lines on the helper's stdin and stdout.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import select
import subprocess
import sys
import tempfile
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_CAP_VERSION_3 = 0x20080522
_DAC_CAPS = (1 << 1) | (1 << 2)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH (linux/capability.h)


@dataclass(frozen=True)
class Ran:
    code: int
    stdout: str
    stderr: str
    timed_out: bool = False


def _drop_dac() -> None:
    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    libc = ctypes.CDLL(None, use_errno=True)
    header, data = Header(_CAP_VERSION_3, 0), (Data * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capget")
    data[0].effective &= ~_DAC_CAPS
    data[0].permitted &= ~_DAC_CAPS
    if libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset")


def _child(request: dict[str, Any], out: int, err: int, entry: Any) -> None:
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(out, 1)
    os.dup2(err, 2)
    code = 1
    try:
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        if request.get("drop_dac"):
            _drop_dac()
        sys.argv = ["onceflow", *request["args"]]
        entry()
        code = 0
    except SystemExit as exiting:
        if exiting.code is None or isinstance(exiting.code, int):
            code = exiting.code or 0
        else:
            print(exiting.code, file=sys.stderr)
    except BaseException:  # what the interpreter prints for an uncaught exception
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BaseException):
                stream.flush()
        os._exit(code)


def _run(request: dict[str, Any], entry: Any) -> dict[str, Any]:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(request, out.fileno(), err.fileno(), entry)
        pidfd = os.pidfd_open(pid)
        try:
            ended = select.select([pidfd], [], [], request["timeout"])[0]  # readable once the child ended
        finally:
            os.close(pidfd)
        if not ended:
            os.kill(pid, 9)
        _, status = os.waitpid(pid, 0)
        out.seek(0)
        err.seek(0)
        return {
            "code": os.waitstatus_to_exitcode(status),
            "stdout": out.read().decode(errors="replace"),
            "stderr": err.read().decode(errors="replace"),
            "timed_out": not ended,
        }


def serve() -> None:
    from importlib.metadata import entry_points

    # typer's value coercion (pydantic, about 0.1 s), which every refused value needs: imported here
    # once instead of in every child. An import that works changes nothing but the time it takes.
    import typer._adapters  # noqa: F401

    import onceflow.cli  # noqa: F401 (what the console script imports as it starts)

    (entry_point,) = [e for e in entry_points(group="console_scripts") if e.name == "onceflow"]
    entry = entry_point.load()
    answers = os.fdopen(os.dup(1), "w")
    for line in sys.stdin:
        answers.write(json.dumps(_run(json.loads(line), entry)) + "\n")
        answers.flush()


class ConsoleForks:
    """The helper process; `run` one command line in a child of it."""

    def __init__(self) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-m", "tests.local.console_forks"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parents[2],
        )

    def run(self, args: list[str], env: dict[str, str], cwd: Path, drop_dac: bool = False, timeout: float = 60) -> Ran:
        request = {"args": args, "env": env, "cwd": str(cwd), "drop_dac": drop_dac, "timeout": timeout}
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.write(json.dumps(request) + "\n")
        self._process.stdin.flush()
        answer = self._process.stdout.readline()
        if not answer:
            raise RuntimeError(f"the console forks helper ended ({self._process.poll()})")
        return Ran(**json.loads(answer))

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        self._process.wait(timeout=30)


if __name__ == "__main__":
    serve()
