"""String literals of a definition read as JSON reads them (both query languages).

moto's parser keeps a string literal's escape sequences as written: `"he said \\"hi\\""` in an
`Assign`, a `Result`, an `Output` or a `Parameters` value became the text `he said \\"hi\\"`, backslashes
included, where AWS (which reads the definition as JSON) has `he said "hi"`. LocalStack's recording
scenarios/test_base_scenarios `test_escape_sequence_parsing[ESCAPE_SEQUENCES_*]` shows AWS's side.
https://docs.aws.amazon.com/step-functions/latest/dg/concepts-amazon-states-language.html
"""

from __future__ import annotations

import json
from typing import Any

from moto.stepfunctions.parser.asl.parse.preprocessor import Preprocessor

from onceflow.local.engine.shape import Need, need

Patch = tuple[Any, str, Any]


def moto_needs() -> list[Need]:
    return [need(Preprocessor, "_inner_string_of", "parser_rule_context")]


def patches() -> list[Patch]:
    return [(Preprocessor, "_inner_string_of", staticmethod(_inner_string_of(Preprocessor._inner_string_of)))]


def _inner_string_of(original: Any) -> Any:
    def inner_string_of(parser_rule_context: Any) -> str | None:
        text = original(parser_rule_context)
        if text is None or "\\" not in text:
            return text
        raw = parser_rule_context.getText()
        if not (len(raw) >= 2 and raw[0] == raw[-1] == '"'):
            return text
        try:
            return json.loads(raw)
        except ValueError:
            return text

    return inner_string_of
