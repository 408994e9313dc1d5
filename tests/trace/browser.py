"""Headless Chromium for the trace page: the DOM after the page's script ran, and screenshots.

`Browser` keeps one Chromium running and loads each page in a new tab, driven over the DevTools
protocol on a pipe: starting Chromium costs about three page loads, so a module's loads share one.
A tab is a new document whose script runs from its URL's fragment, as on a fresh start; the trace
page keeps nothing in storage that a later tab could read.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WINDOW_SIZE = "1000,900"
# Chromium reads DevTools commands from fd 3 and writes replies to fd 4 (--remote-debugging-pipe).
_ON_FDS_3_AND_4 = 'exec "$@" 3<&0 4>&1 </dev/null >/dev/null'


class BrowserError(RuntimeError):
    pass


def chromium() -> str | None:
    return next(
        (found for name in ("chromium", "chromium-browser", "google-chrome") if (found := shutil.which(name))), None
    )


def page_url(page: Path, fragment: str = "") -> str:
    return page.resolve().as_uri() + (f"#{fragment}" if fragment else "")


class Browser:
    """One headless Chromium; `dump_dom` loads a page in a fresh tab and returns its serialised DOM."""

    def __init__(self) -> None:
        binary = chromium()
        assert binary, "no Chromium on PATH"
        self._profile = tempfile.TemporaryDirectory()
        self._log = (Path(self._profile.name) / "stderr.log").open("wb")
        commands_read, self._commands = os.pipe()
        self._replies, replies_written = os.pipe()
        self._process = subprocess.Popen(
            [
                "sh",
                "-c",
                _ON_FDS_3_AND_4,
                "sh",
                binary,
                *FLAGS,
                f"--window-size={WINDOW_SIZE}",
                f"--user-data-dir={self._profile.name}/profile",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            stdin=commands_read,
            stdout=replies_written,
            stderr=self._log,
        )
        os.close(commands_read)
        os.close(replies_written)
        self._unread = b""
        self._events: list[dict[str, Any]] = []
        self._last_id = 0

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self._send("Browser.close")
            self._process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self._process.kill()
            self._process.wait(timeout=10)
        finally:
            os.close(self._commands)
            os.close(self._replies)
            self._log.close()
            self._profile.cleanup()

    def dump_dom(self, page: Path, fragment: str = "", timeout: float = 120) -> tuple[str, float]:
        """The serialised DOM once the page fired its load event (its script ran), and the seconds it
        took: what `chromium --dump-dom` prints, read from a new tab instead of a new browser."""
        (html,), seconds = self.run(page, ["document.documentElement.outerHTML"], fragment, timeout, size=(1000, 900))
        return html, seconds

    def run(
        self,
        page: Path,
        expressions: list[str],
        fragment: str = "",
        timeout: float = 120,
        screenshot: Path | None = None,
        size: tuple[int, int] = (1400, 1000),
    ) -> tuple[list[Any], float]:
        """Load the page in a new tab of `size` (CSS pixels), then evaluate each JavaScript expression
        in turn (a user's click is `element.click()`); their values, and the seconds the load took.
        `screenshot`: a PNG of the viewport after the last expression."""
        with self.tab(page, fragment, timeout, size) as tab:
            values = [tab.evaluate(expression) for expression in expressions]
            if screenshot is not None:
                tab.screenshot(screenshot)
            return values, tab.loaded

    @contextmanager
    def tab(
        self, page: Path, fragment: str = "", timeout: float = 120, size: tuple[int, int] = (1400, 1000)
    ) -> Iterator[Tab]:
        """The page loaded in a new tab of `size`, to evaluate in, capture and reload; closed after."""
        deadline = time.monotonic() + timeout
        began = time.perf_counter()
        target = self._call("Target.createTarget", deadline, url="about:blank")["targetId"]
        session = self._call("Target.attachToTarget", deadline, targetId=target, flatten=True)["sessionId"]
        try:
            self._call("Page.enable", deadline, session=session)
            width, height = size
            self._call(
                "Emulation.setDeviceMetricsOverride",
                deadline,
                session=session,
                width=width,
                height=height,
                deviceScaleFactor=1,
                mobile=False,
            )
            navigated = self._call("Page.navigate", deadline, session=session, url=page_url(page, fragment))
            if "errorText" in navigated:
                raise BrowserError(f"{page_url(page, fragment)}: {navigated['errorText']}")
            self._wait_for_event("Page.loadEventFired", session, deadline)
            yield Tab(self, session, deadline, time.perf_counter() - began)
        finally:
            self._call("Target.closeTarget", deadline, targetId=target)
            self._events.clear()  # the closed tab's; nothing waits for them

    def _send(self, method: str, session: str | None = None, **params: Any) -> int:
        self._last_id += 1
        message: dict[str, Any] = {"id": self._last_id, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        return self._last_id

    def _call(self, method: str, deadline: float, session: str | None = None, **params: Any) -> dict[str, Any]:
        sent = self._send(method, session, **params)
        while True:
            message = self._receive(deadline)
            if message.get("id") != sent:
                self._events.append(message)
                continue
            if "error" in message:
                raise BrowserError(f"{method}: {message['error']}")
            return message["result"]

    def _wait_for_event(self, method: str, session: str, deadline: float) -> dict[str, Any]:
        while True:
            for index, event in enumerate(self._events):
                if event.get("method") == method and event.get("sessionId") == session:
                    return self._events.pop(index)
            self._events.append(self._receive(deadline))

    def _receive(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._unread:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._replies], [], [], left)[0]:
                raise BrowserError(f"Chromium did not answer in time; its log:\n{self._log_tail()}")
            chunk = os.read(self._replies, 1 << 20)
            if not chunk:
                raise BrowserError(f"Chromium exited ({self._process.poll()}); its log:\n{self._log_tail()}")
            self._unread += chunk
        message, self._unread = self._unread.split(b"\0", 1)
        return json.loads(message)

    def _log_tail(self) -> str:
        self._log.flush()
        return (Path(self._profile.name) / "stderr.log").read_text(errors="replace")[-2000:]


@dataclass
class Tab:
    """One loaded page: JavaScript evaluated in it, screenshots of it, its reloads waited for."""

    browser: Browser
    session: str
    deadline: float
    loaded: float  # seconds the first load took

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        """A DevTools command in this tab, e.g. `Input.dispatchMouseEvent`: input as a user's, not a script's."""
        return self.browser._call(method, self.deadline, session=self.session, **params)

    def evaluate(self, expression: str) -> Any:
        evaluated = self.browser._call(
            "Runtime.evaluate", self.deadline, session=self.session, expression=expression, returnByValue=True
        )
        if "exceptionDetails" in evaluated:
            raise BrowserError(f"{expression}: {evaluated['exceptionDetails']}")
        return evaluated["result"].get("value")

    def screenshot(self, out: Path | None = None, clip: tuple[float, float, float, float] | None = None) -> bytes:
        """A PNG of the viewport, or of `clip` (x, y, width, height in CSS pixels of the viewport)."""
        params: dict[str, Any] = {"format": "png"}
        if clip is not None:
            x, y, width, height = clip
            params["clip"] = {"x": x, "y": y, "width": width, "height": height, "scale": 1}
        shot = base64.b64decode(
            self.browser._call("Page.captureScreenshot", self.deadline, session=self.session, **params)["data"]
        )
        if out is not None:
            out.write_bytes(shot)
        return shot

    def reloaded_by(self, expression: str) -> None:
        """Evaluate `expression`, which makes the page load again, and wait until the new document loaded."""
        self.browser._events.clear()
        self.evaluate(expression)
        self.browser._wait_for_event("Page.loadEventFired", self.session, self.deadline)


def screenshot(page: Path, out: Path, fragment: str = "", width: int = 1000, height: int = 2200) -> Path:
    binary = chromium()
    assert binary, "no Chromium on PATH"
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                binary,
                *FLAGS,
                f"--user-data-dir={profile}",
                f"--window-size={width},{height}",
                f"--screenshot={out}",
                "--hide-scrollbars",
                page_url(page, fragment),
            ],
            capture_output=True,
            timeout=120,
            check=True,
        )
    return out
