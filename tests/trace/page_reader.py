"""Reads a written trace page back: the graph's states and edges, the tables, the execution sections."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path


@dataclass
class Section:
    attrs: dict[str, str]
    steps: list[str] = field(default_factory=list)

    @property
    def shown(self) -> bool:
        return "hidden" not in self.attrs


@dataclass
class TracePage:
    html: str
    states: list[dict[str, str]] = field(default_factory=list)  # <g class="state ..."> in the SVG
    edges: list[dict[str, str]] = field(default_factory=list)  # <g class="edge ..."> in the SVG
    transitions: list[dict[str, str]] = field(default_factory=list)  # rows of the transitions table
    sections: list[Section] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    data: dict = field(default_factory=dict)

    @property
    def shown(self) -> Section:
        (section,) = [s for s in self.sections if s.shown]
        return section

    def state(self, name: str) -> dict[str, str]:
        (found,) = [s for s in self.states if s["data-state"] == name]
        return found


class _Reader(HTMLParser):
    def __init__(self, page: TracePage):
        super().__init__()
        self.page = page
        self.section: Section | None = None
        self.in_data = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        classes = values.get("class", "").split()
        if tag == "g" and "state" in classes:
            self.page.states.append(values)
        elif tag == "g" and "edge" in classes:
            self.page.edges.append(values)
        elif tag == "tr" and "transition" in classes:
            self.page.transitions.append(values)
        elif tag == "section" and "execution" in classes:
            self.section = Section(values)
            self.page.sections.append(self.section)
        elif tag == "li" and "step" in classes and self.section is not None:
            self.section.steps.append(values["data-state"])
        elif tag == "script" and values.get("id") == "trace-data":
            self.in_data = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "section":
            self.section = None
        if tag == "script":
            self.in_data = False

    def handle_data(self, data: str) -> None:
        if self.in_data:
            self.page.data = json.loads(data)
        else:
            self.page.text.append(data)


def read_page(path: Path) -> TracePage:
    page = TracePage(path.read_text(encoding="utf-8"))
    _Reader(page).feed(page.html)
    return page


_EXTERNAL = [
    re.compile(r"""\b(?:src|href|xlink:href|action|poster|data)\s*=\s*["']?\s*(?:https?:)?//""", re.IGNORECASE),
    re.compile(r"""url\(\s*["']?\s*(?!#)""", re.IGNORECASE),
    re.compile(r"@import", re.IGNORECASE),
    re.compile(r"<(?:link|iframe|object|embed|img)\b", re.IGNORECASE),
    re.compile(r"<script\b[^>]*\bsrc\s*=", re.IGNORECASE),
]


def external_references(html: str) -> list[str]:
    """Anything that would make the browser fetch: the page must need no network."""
    return [match.group(0) for pattern in _EXTERNAL for match in pattern.finditer(html)]
