"""Headless Chromium for the trace page: the DOM after the page's script ran, and screenshots."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

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


def chromium() -> str | None:
    return next(
        (found for name in ("chromium", "chromium-browser", "google-chrome") if (found := shutil.which(name))), None
    )


def _run(args: list[str], timeout: float) -> tuple[str, float]:
    binary = chromium()
    assert binary, "no Chromium on PATH"
    with tempfile.TemporaryDirectory() as profile:
        began = time.perf_counter()
        result = subprocess.run(
            [binary, *FLAGS, f"--user-data-dir={profile}", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        )
        return result.stdout, time.perf_counter() - began


def dump_dom(page: Path, fragment: str = "", width: int = 1000, timeout: float = 120) -> tuple[str, float]:
    """The serialised DOM once the page loaded (its script ran), and the seconds it took."""
    url = page.resolve().as_uri() + (f"#{fragment}" if fragment else "")
    return _run([f"--window-size={width},900", "--dump-dom", url], timeout)


def screenshot(page: Path, out: Path, fragment: str = "", width: int = 1000, height: int = 2200) -> Path:
    url = page.resolve().as_uri() + (f"#{fragment}" if fragment else "")
    _run([f"--window-size={width},{height}", f"--screenshot={out}", "--hide-scrollbars", url], 120)
    return out
