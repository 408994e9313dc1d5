"""The `name_cases` speed-up: moto's Step Functions integrations turn every parameter and result
member name from CamelCase to snake_case and back with a regular expression, per name, per task
(StateTaskService._to_boto_request and _from_boto_response); here each conversion of a name is
computed once and remembered (both are pure functions of their arguments; at most CACHE_SIZE names).
"""

from __future__ import annotations

import functools
from typing import Any

from moto.stepfunctions.parser import utils as parser_utils
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service import state_task_service

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.speedups import NAME_CASES

Patch = tuple[Any, str, Any]
SPEEDUPS = (NAME_CASES,)
CACHE_SIZE = 4096


def moto_needs() -> list[Need]:
    return [
        need(parser_utils, "camel_to_snake_case", "string"),
        need(parser_utils, "snake_to_camel_case", "string", "capitalize_first"),
        need(state_task_service, "camel_to_snake_case", "string"),
        need(state_task_service, "snake_to_camel_case", "string", "capitalize_first"),
    ]


def patches() -> list[Patch]:
    camel_to_snake = functools.lru_cache(maxsize=CACHE_SIZE)(parser_utils.camel_to_snake_case)
    snake_to_camel = functools.lru_cache(maxsize=CACHE_SIZE)(parser_utils.snake_to_camel_case)
    return [
        (state_task_service, "camel_to_snake_case", camel_to_snake),
        (state_task_service, "snake_to_camel_case", snake_to_camel),
    ]
