"""The `dispatch_cache` speed-up: how the server finds a request's backend and action, read once.

moto's server lists its own package directory (a stat per entry, about 200) on every request to find
the backend for the Host header, then matches the host against every backend's URL patterns
(hundreds of regular expressions, twice a request), and every response class lists its methods
(inspect.getmembers) on every request to find the action's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from moto import backends as moto_backends
from moto.core import responses as moto_core_responses
from moto.core import utils as moto_core_utils
from moto.moto_server.werkzeug_app import DomainDispatcherApplication

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.speedups import DISPATCH_CACHE

Patch = tuple[Any, str, Any]
SPEEDUPS = (DISPATCH_CACHE,)


def moto_needs() -> list[Need]:
    return [
        need(moto_backends, "list_of_moto_modules"),
        need(DomainDispatcherApplication, "get_backend_for_host", "host"),
        need(DomainDispatcherApplication, "__init__", "create_app"),  # sets backend_url_patterns
        need(moto_core_responses, "method_names_from_class"),
        need(moto_core_utils, "method_names_from_class", "clazz"),
    ]


def patches() -> list[Patch]:
    modules = tuple(moto_backends.list_of_moto_modules())
    # Asked once per response class after start: EmbeddedAws applies every patch (the actions this
    # engine adds among them) before it serves a request, and a new start makes a new cache.
    method_names = functools.lru_cache(maxsize=None)(moto_core_utils.method_names_from_class)
    return [
        (moto_backends, "list_of_moto_modules", lambda: modules),
        (moto_core_responses, "method_names_from_class", method_names),
        (DomainDispatcherApplication, "get_backend_for_host", _backend_for_host()),
    ]


def _backend_for_host() -> Callable[[Any, str | None], Any]:
    """moto's server finds a request's backend (twice per request) by matching its Host against
    every backend's URL patterns in turn, several hundred regular expressions: a host's backend,
    once found, is kept (per list of patterns: the app's, which moto builds once from its index).
    A host with no backend is asked again each time, as moto does (it may print a warning)."""
    original = DomainDispatcherApplication.get_backend_for_host
    found: dict[tuple[int, str], Any] = {}

    def get_backend_for_host(self: Any, host: str | None) -> Any:
        if host is None:
            return None
        key = (id(self.backend_url_patterns), host)
        backend = found.get(key)
        if backend is None:
            backend = original(self, host)
            if backend is not None:
                found[key] = backend
        return backend

    return get_backend_for_host
