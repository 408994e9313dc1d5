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
    rows: list[dict[str, str]] = field(default_factory=list)  # rows of the execution list (drawn by the script)
    row_cells: list[list[str]] = field(default_factory=list)
    entries: list[dict[str, str]] = field(default_factory=list)  # state details: one per entry into the state
    details_text: list[str] = field(default_factory=list)  # text of the state details panel
    ids: dict[str, str] = field(default_factory=dict)  # text of elements with an id (e.g. match-count)

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
        self.in_list = False
        self.cell: list[str] | None = None
        self.details_depth = 0
        self.open_ids: list[tuple[str, str]] = []  # (tag, id) of open elements with an id

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
        elif tag == "table" and values.get("id") == "executions":
            self.in_list = True
        elif tag == "tr" and self.in_list and "pick" in classes:
            self.page.rows.append(values)
            self.page.row_cells.append([])
        elif tag == "td" and self.in_list and self.page.row_cells:
            self.cell = []
        elif tag == "div" and "entry" in classes:
            self.page.entries.append(values)
        if tag == "div" and (values.get("id") == "state-details" or self.details_depth):
            self.details_depth += 1
        if values.get("id"):
            self.open_ids.append((tag, values["id"]))
            self.page.ids.setdefault(values["id"], "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "section":
            self.section = None
        if tag == "script":
            self.in_data = False
        if tag == "table":
            self.in_list = False
        if tag == "td" and self.cell is not None and self.page.row_cells:
            self.page.row_cells[-1].append("".join(self.cell))
            self.cell = None
        if tag == "div" and self.details_depth:
            self.details_depth -= 1
        if self.open_ids and self.open_ids[-1][0] == tag:
            self.open_ids.pop()

    def handle_data(self, data: str) -> None:
        if self.in_data:
            self.page.data = json.loads(data)
            for execution in self.page.data.get("executions", []):  # as the page's script does
                for key, default in self.page.data.get("defaults", {}).items():
                    execution.setdefault(key, default)
            return
        self.page.text.append(data)
        if self.cell is not None:
            self.cell.append(data)
        if self.details_depth:
            self.page.details_text.append(data)
        if self.open_ids:
            tag_id = self.open_ids[-1][1]
            self.page.ids[tag_id] += data


def read_page(path: Path) -> TracePage:
    return read_html(path.read_text(encoding="utf-8"))


def read_html(html: str) -> TracePage:
    page = TracePage(html)
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
