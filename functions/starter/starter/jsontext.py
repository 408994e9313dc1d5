"""JSON text in and out: strict decoding, and the canonical form that payload hashes are made of."""

from __future__ import annotations

import json
from typing import Any


class NotJson(ValueError):
    """Text that is not a JSON document this pipeline can carry unchanged."""


def _reject_constant(name: str) -> Any:
    # Python's json accepts NaN and Infinity; JSON (and so Step Functions) does not.
    raise NotJson(f"{name} is not a JSON number")


def loads(text: str) -> Any:
    """Decode JSON, rejecting what json.loads lets through but the pipeline could not carry:
    NaN/Infinity, numbers too long to convert, nesting too deep, unpaired UTF-16 surrogates."""
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except NotJson:
        raise
    except (ValueError, RecursionError) as error:  # JSONDecodeError is a ValueError
        raise NotJson(str(error) or type(error).__name__) from None
    try:
        canonical_json(value).encode()
    except UnicodeEncodeError:
        raise NotJson("contains an unpaired UTF-16 surrogate (\\ud800-\\udfff)") from None
    except (ValueError, RecursionError) as error:
        raise NotJson(str(error) or type(error).__name__) from None
    return value


def canonical_json(value: Any) -> str:
    """Sorted keys, no insignificant whitespace, UTF-8 text: equal documents give equal strings."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
