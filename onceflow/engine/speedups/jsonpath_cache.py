"""The `jsonpath_cache` speed-up: compiled JSONPath expressions are cached; moto builds a new JSONPath
parser (PLY) for every path it evaluates. Compiled expressions hold no state of an evaluation.
"""

from __future__ import annotations

import functools
from typing import Any

from moto.stepfunctions.parser.asl.component.common.path import result_path
from moto.stepfunctions.parser.asl.utils import json_path

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.speedups import JSONPATH_CACHE

Patch = tuple[Any, str, Any]
SPEEDUPS = (JSONPATH_CACHE,)


def moto_needs() -> list[Need]:
    return [need(json_path, "parse"), need(result_path, "parse")]


def patches() -> list[Patch]:
    return [
        (json_path, "parse", functools.lru_cache(maxsize=4096)(json_path.parse)),
        (result_path, "parse", functools.lru_cache(maxsize=4096)(result_path.parse)),
    ]
