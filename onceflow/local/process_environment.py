"""os.environ read whole at once, while this process's functions set and unset their variables.

Every function of a local stack runs in this process, and the runtime sets and unsets variables
while other threads run (function_runtime.py: a function's environment; function_credentials.py: its
role session during an invocation, unset after it when it was unset before). Meanwhile an
execution's first call of a service makes a botocore client, which reads the proxy variables by
iterating `os.environ.items()` (botocore's get_environ_proxies, urllib's getproxies_environment), and
a function makes its clients on first use too. Iterating `os.environ` lists its keys, then reads each
one: a key another thread unset in between raised KeyError from inside botocore. An execution then
failed with States.Runtime at its SNS publish, or SQS.AmazonSQSException at its dead-letter send,
intermittently (tests/local/test_speedups_switched_off.py's runs).

`install()` makes `os.environ.items()`, `.values()` and `.copy()` read a snapshot taken in one step
(a copy of the environment's dict, which no other Python thread can interleave); the keys, a lookup
and every change are os.environ's own.
"""

from __future__ import annotations

import os
import threading
from collections.abc import ItemsView, ValuesView
from typing import Any

_lock = threading.Lock()
_installed = False


def snapshot(environ: Any = os.environ) -> dict[str, str]:
    """The environment as one dict, read at once."""
    data = environ._data.copy()  # one C-level dict copy: the GIL is not released inside it
    return {environ.decodekey(key): environ.decodevalue(value) for key, value in data.items()}


def install() -> None:
    """Once per process: os.environ's items(), values() and copy() read a snapshot."""
    global _installed
    with _lock:
        if _installed:
            return
        environ_class = type(os.environ)
        environ_class.items = lambda self: ItemsView(snapshot(self))  # type: ignore[method-assign]
        environ_class.values = lambda self: ValuesView(snapshot(self))  # type: ignore[method-assign]
        environ_class.copy = snapshot  # type: ignore[method-assign]
        _installed = True
