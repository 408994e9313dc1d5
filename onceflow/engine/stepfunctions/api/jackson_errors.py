"""JSON syntax errors in the words of the JSON parser AWS Step Functions runs (Jackson), which its
API answers quote: StartExecution's InvalidExecutionInput, ValidateStateMachineDefinition's
INVALID_JSON_DESCRIPTION. The two commonest mistakes are worded as AWS words them (LocalStack's
test_sfn_api.snapshot.json, test_invalid_start_execution_input; test_sfn_api_validation.snapshot.json,
test_validate_state_machine_definition_not_a_definition); any other keeps Python's json message.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

_TOKEN = re.compile(r"[A-Za-z0-9_$+\-.]+")
_LITERALS = ("true", "false", "null")


@dataclass(frozen=True)
class JsonSyntaxError:
    message: str
    line: int
    column: int

    def location(self, text: str) -> str:
        """Jackson's `at [Source: ...]` part (the text quoted as Java quotes a String)."""
        return f'[Source: (String)"{text}"; line: {self.line}, column: {self.column}]'


def syntax_error(text: str, error: json.JSONDecodeError) -> JsonSyntaxError:
    """`error` (Python's) said in Jackson's words where we know them; line and column as Jackson
    counts them (the column just past what it read)."""
    position = error.pos
    line = text.count("\n", 0, position) + 1
    column_base = position - (text.rfind("\n", 0, position) + 1)
    token = _TOKEN.match(text, position)
    if token and not token.group().startswith(_LITERALS) and not _is_number(token.group()):
        column = column_base + len(token.group()) + 1
        return JsonSyntaxError(
            f"Unrecognized token '{token.group()}': was expecting (JSON String, Number, Array, Object "
            "or token 'null', 'true' or 'false')",
            line,
            column,
        )
    if error.msg.startswith("Expecting property name enclosed in double quotes") and position < len(text):
        char = text[position]
        return JsonSyntaxError(
            f"Unexpected character ('{char}' (code {ord(char)})): was expecting double-quote to start field name",
            line,
            column_base + 2,
        )
    return JsonSyntaxError(error.msg, line, column_base + 1)


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True
