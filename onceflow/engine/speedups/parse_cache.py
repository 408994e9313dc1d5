"""The `parse_cache` speed-up: one parse of each state machine definition, shared by its executions.

moto re-parses the ASL (ANTLR, about 25 ms) for every execution and for every CreateStateMachine (to
validate it); evaluation state lives in each execution's Environment, not in the parsed program, so
one program serves every execution of a definition.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

from moto.stepfunctions.parser import models as sfn_parser_models
from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser
from moto.stepfunctions.parser.backend import execution_worker

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.speedups import PARSE_CACHE

Patch = tuple[Any, str, Any]
SPEEDUPS = (PARSE_CACHE,)


def moto_needs() -> list[Need]:
    return [
        need(execution_worker, "AmazonStateLanguageParser"),
        need(sfn_parser_models, "AmazonStateLanguageParser"),
        need(AmazonStateLanguageParser, "parse"),
    ]


_PARSE_LOCK = threading.Lock()


@functools.lru_cache(maxsize=64)
def _parse_once(definition: str) -> Any:
    return AmazonStateLanguageParser.parse(definition)


class _CachedParser(AmazonStateLanguageParser):
    @staticmethod
    def parse(definition: str) -> Any:
        # One parse per definition: the first executions of a batch start together, and each would
        # parse (about 25 ms) before the first one is cached.
        with _PARSE_LOCK:
            return _parse_once(definition)


def patches() -> list[Patch]:
    # Executions parse their definition, and so does CreateStateMachine to validate it (a definition
    # that does not parse raises, and is not cached).
    return [
        (execution_worker, "AmazonStateLanguageParser", _CachedParser),
        (sfn_parser_models, "AmazonStateLanguageParser", _CachedParser),
    ]
