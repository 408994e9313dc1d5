"""A team's domain, read from its own app (docs/ARCHITECTURE.md, "What a domain is").

The sample body is the file the template's `Metadata.Onceflow.SampleBody` names; where its
event_id is comes from the starter's environment in the template (`PAYLOAD_EVENT_ID_PATH`), or from
the `EventIdPath` parameter when it is set. Nothing here knows any domain's words.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from onceflow.domain.template_yaml import read_template

# The paths a generator can write a fresh id into: JMESPath identifiers joined by dots.
_SETTABLE_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


class DomainError(ValueError):
    """The app does not describe its domain as Onceflow needs it; the message says what to add."""


@dataclass(frozen=True)
class Domain:
    template_path: Path
    sample_path: Path
    sample: dict[str, Any]
    # Where the event_id is in a plain JSON body (EventFormat json), as a dotted path.
    event_id_path: str
    event_format: str = "json"

    @property
    def sample_event_id(self) -> str:
        return str(get_path(self.sample, self.event_id_path))

    def event_id_of(self, body: str) -> str | None:
        """The event_id a plain JSON body carries at the domain's path; None when it has none."""
        try:
            value = get_path(json.loads(body), self.event_id_path)
        except (ValueError, TypeError):
            return None
        return value if isinstance(value, str) and value else None


def get_path(document: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(document, dict):
            return None
        document = document.get(part)
    return document


def with_path(document: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of `document` with `value` at the dotted `path` (made where absent)."""
    copied = json.loads(json.dumps(document))
    holder = copied
    *parents, last = path.split(".")
    for part in parents:
        if not isinstance(holder.get(part), dict):
            holder[part] = {}
        holder = holder[part]
    holder[last] = value
    return copied


def without_path(document: dict[str, Any], path: str) -> dict[str, Any]:
    copied = json.loads(json.dumps(document))
    holder = copied
    *parents, last = path.split(".")
    for part in parents:
        holder = holder.get(part) if isinstance(holder, dict) else None
    if isinstance(holder, dict):
        holder.pop(last, None)
    return copied


def starter_environment(template: dict[str, Any]) -> dict[str, Any]:
    """The environment of the function that names where the domain's event_id is."""
    for resource in (template.get("Resources") or {}).values():
        variables = ((resource.get("Properties") or {}).get("Environment") or {}).get("Variables") or {}
        if "PAYLOAD_EVENT_ID_PATH" in variables:
            return variables
    return {}


def _parameter(template: dict[str, Any], name: str, overrides: dict[str, str]) -> str:
    if name in overrides:
        return str(overrides[name])
    default = ((template.get("Parameters") or {}).get(name) or {}).get("Default", "")
    return str(default)


def load_domain(template_path: Path, parameters: dict[str, str] | None = None) -> Domain:
    """The domain of the app whose template is `template_path`, under these parameter values."""
    overrides = parameters or {}
    try:
        template = read_template(template_path)
    except OSError as error:
        raise DomainError(f"{template_path}: cannot read the template ({error.strerror or error})") from None
    except ValueError as error:
        raise DomainError(f"{template_path}: not a readable template: {error}") from None
    sample_name = ((template.get("Metadata") or {}).get("Onceflow") or {}).get("SampleBody")
    if not isinstance(sample_name, str) or not sample_name:
        raise DomainError(
            f"{template_path}: the template names no sample body; add `Metadata: Onceflow: SampleBody: "
            "events/bodies/<name>.json` (a message body of your domain)"
        )
    sample_path = template_path.parent / sample_name
    try:
        sample = json.loads(sample_path.read_text(encoding="utf-8"))
    except OSError as error:
        raise DomainError(f"{sample_path}: the template's sample body cannot be read ({error.strerror})") from None
    except ValueError as error:
        raise DomainError(f"{sample_path}: the sample body is not JSON ({error})") from None
    if not isinstance(sample, dict):
        raise DomainError(f"{sample_path}: the sample body must be a JSON object")
    event_format = _parameter(template, "EventFormat", overrides) or "json"
    path = _parameter(template, "EventIdPath", overrides) or str(
        starter_environment(template).get("PAYLOAD_EVENT_ID_PATH") or ""
    )
    if not path:
        raise DomainError(
            f"{template_path}: no function's environment names PAYLOAD_EVENT_ID_PATH (where the event_id is "
            "in the payload), and EventIdPath is empty"
        )
    domain = Domain(template_path, sample_path, sample, path, event_format)
    if not _SETTABLE_PATH.match(path):
        raise DomainError(
            f"event_id path {path!r}: bodies can be generated only for a path of plain names joined by dots; "
            "send your own bodies (--file)"
        )
    value = get_path(sample, path)
    if not isinstance(value, str) or not value:
        raise DomainError(f"{sample_path}: the sample body has no non-empty string at {path!r}, where its event_id is")
    return domain
