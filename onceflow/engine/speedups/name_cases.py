"""The `name_cases` speed-up: moto's Step Functions integrations turn every parameter and result
member name from CamelCase to snake_case and back with a regular expression, per name, per task
(StateTaskService._to_boto_request and _from_boto_response); moto's request handling turns every
action's name into its method's name, and SQS and SNS every attribute name into the queue's or
topic's member, character by character (`camelcase_to_underscores`: SQS's SendMessage computes every
queue attribute, about 14 names, to read one). Here each conversion of a name is computed once and
remembered (all are pure functions of their arguments; at most CACHE_SIZE names each).
"""

from __future__ import annotations

import functools
from typing import Any

from moto.core import responses as core_responses
from moto.core import utils as core_utils
from moto.sns import models as sns_models
from moto.sns import responses as sns_responses
from moto.sqs import models as sqs_models
from moto.stepfunctions.parser import utils as parser_utils
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service import state_task_service

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.speedups import NAME_CASES

Patch = tuple[Any, str, Any]
SPEEDUPS = (NAME_CASES,)
CACHE_SIZE = 4096
# Modules that call moto.core.utils.camelcase_to_underscores by the name they imported.
UNDERSCORED_IN = (core_responses, sqs_models, sns_models, sns_responses)


def moto_needs() -> list[Need]:
    return [
        need(parser_utils, "camel_to_snake_case", "string"),
        need(parser_utils, "snake_to_camel_case", "string", "capitalize_first"),
        need(state_task_service, "camel_to_snake_case", "string"),
        need(state_task_service, "snake_to_camel_case", "string", "capitalize_first"),
        need(core_utils, "camelcase_to_underscores", "argument"),
        *(need(module, "camelcase_to_underscores", "argument") for module in UNDERSCORED_IN),
    ]


def patches() -> list[Patch]:
    camel_to_snake = functools.lru_cache(maxsize=CACHE_SIZE)(parser_utils.camel_to_snake_case)
    snake_to_camel = functools.lru_cache(maxsize=CACHE_SIZE)(parser_utils.snake_to_camel_case)
    underscored = functools.lru_cache(maxsize=CACHE_SIZE)(core_utils.camelcase_to_underscores)
    return [
        (state_task_service, "camel_to_snake_case", camel_to_snake),
        (state_task_service, "snake_to_camel_case", snake_to_camel),
        *((module, "camelcase_to_underscores", underscored) for module in UNDERSCORED_IN),
    ]
