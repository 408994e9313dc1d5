"""`KEY=VALUE` template parameter overrides, checked against the template's own Parameters as
CloudFormation checks them (AllowedValues, AllowedPattern, Min/MaxLength, Number with
Min/MaxValue), so a mistake is one line before anything is deployed. One rule for every command
that takes them (start, demo, cost, capacity) and for the pytest plugin.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any

from onceflow.domain.template_yaml import read_template


class ParameterError(ValueError):
    """A parameter override the template would refuse; the message names it and what is allowed."""


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _check_value(name: str, value: str, spec: dict[str, Any]) -> None:
    given = f"{name}={value}"
    allowed = [str(v) for v in spec.get("AllowedValues") or []]
    if allowed and value not in allowed:
        same_but_case = [a for a in allowed if a.lower() == value.lower()]
        hint = f" (did you mean {same_but_case[0]}? values are case-sensitive)" if same_but_case else ""
        raise ParameterError(f"{given!r}: {name} takes one of {', '.join(allowed)}{hint}")
    if spec.get("Type") == "Number":
        number = _number(value)
        if number is None:
            raise ParameterError(f"{given!r}: {name} is a Number")
        if "MinValue" in spec and number < float(spec["MinValue"]):
            raise ParameterError(f"{given!r}: {name} is at least {spec['MinValue']}")
        if "MaxValue" in spec and number > float(spec["MaxValue"]):
            raise ParameterError(f"{given!r}: {name} is at most {spec['MaxValue']}")
    if "MinLength" in spec and len(value) < int(spec["MinLength"]):
        raise ParameterError(f"{given!r}: {name} has at least {spec['MinLength']} characters")
    if "MaxLength" in spec and len(value) > int(spec["MaxLength"]):
        raise ParameterError(f"{given!r}: {name} has at most {spec['MaxLength']} characters")
    pattern = spec.get("AllowedPattern")
    if pattern and not re.fullmatch(str(pattern), value):
        raise ParameterError(f"{given!r}: {name} must match {pattern}")


def template_parameters(template_path: Path) -> dict[str, dict[str, Any]]:
    try:
        parameters = read_template(template_path).get("Parameters") or {}
    except OSError as error:
        raise ParameterError(f"{template_path}: cannot read the template ({error.strerror or error})") from None
    except ValueError as error:
        raise ParameterError(f"{template_path}: not a readable template: {error}") from None
    return {str(name): spec or {} for name, spec in parameters.items()}


def parse_parameters(items: list[str] | None, template_path: Path) -> dict[str, str]:
    """`KEY=VALUE` items as a dict, each checked against the template; ParameterError otherwise."""
    if not items:
        return {}
    declared = template_parameters(template_path)
    chosen: dict[str, str] = {}
    for item in items:
        name, equals, value = item.partition("=")
        if not equals or not name:
            example = name if name in declared else next(iter(sorted(declared)), "Name")
            default = (declared.get(example) or {}).get("Default", "value")
            raise ParameterError(f"{item!r}: give KEY=VALUE, e.g. {example}={default}")
        if name not in declared:
            close = difflib.get_close_matches(name, declared, n=1)
            hint = f" (did you mean {close[0]}?)" if close else f"; it has {', '.join(sorted(declared))}"
            raise ParameterError(f"{item!r}: {template_path.name} has no parameter {name}{hint}")
        if name in chosen and chosen[name] != value:
            raise ParameterError(f"{item!r}: {name} is given twice ({name}={chosen[name]} before)")
        _check_value(name, value, declared[name])
        chosen[name] = value
    return chosen
