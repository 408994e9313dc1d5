"""An `Assign` string literal read as JSON reads it (both query languages).

moto's parser keeps the escape sequences of an `Assign` string literal as written (its other
literals, in `Output`, `Arguments`, `Parameters` or `Result`, are decoded): `"he said \\"hi\\""`
became the variable `he said \\"hi\\"`, backslashes included, where AWS (which reads the definition as
JSON) assigns `he said "hi"`. Paths and JSONata expressions are left as they are (their own parsers
read their escapes). https://docs.aws.amazon.com/step-functions/latest/dg/workflow-variables.html
"""

from __future__ import annotations

import json
from typing import Any

from moto.stepfunctions.parser.asl.component.common.assign.assign_template_value_terminal import (
    AssignTemplateValueTerminalLit,
)
from moto.stepfunctions.parser.asl.parse.preprocessor import Preprocessor

from onceflow.engine.moto_shape import Need, need

Patch = tuple[Any, str, Any]


def moto_needs() -> list[Need]:
    return [
        need(Preprocessor, "visitAssign_template_value_terminal_string_literal", "ctx"),
        need(AssignTemplateValueTerminalLit, "__init__", "value"),
    ]


def patches() -> list[Patch]:
    original = Preprocessor.visitAssign_template_value_terminal_string_literal

    def visit_assign_string_literal(self: Preprocessor, ctx: Any) -> AssignTemplateValueTerminalLit:
        # The rule's string_literal is one JSON string token (quotes included): it decodes as JSON.
        try:
            return AssignTemplateValueTerminalLit(value=json.loads(ctx.string_literal().getText()))
        except ValueError:
            return original(self, ctx)

    return [(Preprocessor, "visitAssign_template_value_terminal_string_literal", visit_assign_string_literal)]
