"""Pixels of the PNG screenshots Chromium writes, read with zlib alone (8-bit RGB or RGBA, not interlaced).

The browser tests look at what was drawn, not only at the DOM: a state's fill at its place on the
screen, the events table's details where the page shows them.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@dataclass(frozen=True)
class Image:
    width: int
    height: int
    channels: int
    rows: list[bytes]

    def pixel(self, x: int, y: int) -> tuple[int, int, int]:
        at = x * self.channels
        r, g, b = self.rows[y][at : at + 3]
        return r, g, b

    def share_near(self, box: tuple[float, float, float, float], colour: str, tolerance: int = 24) -> float:
        """The share of pixels inside `box` (left, top, right, bottom, CSS px at scale 1) within
        `tolerance` of `colour` (#rrggbb) on every channel."""
        want = tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))
        left, top = max(int(box[0]), 0), max(int(box[1]), 0)
        right, bottom = min(int(box[2]), self.width), min(int(box[3]), self.height)
        total = near = 0
        for y in range(top, bottom):
            for x in range(left, right):
                total += 1
                near += all(abs(a - b) <= tolerance for a, b in zip(self.pixel(x, y), want, strict=True))
        return near / total if total else 0.0


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def read_png(path: Path) -> Image:
    data = path.read_bytes()
    assert data.startswith(_SIGNATURE), f"{path}: not a PNG"
    at, chunks, header = len(_SIGNATURE), [], b""
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
        at += 12 + length
    width, height, depth, colour_type, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and colour_type in (2, 6) and interlace == 0, f"{path}: an unexpected PNG layout"
    channels = 3 if colour_type == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                line[i] = (line[i] + _paeth(left, up, corner)) & 0xFF
        rows.append(bytes(line))
        previous = line
    return Image(width, height, channels, rows)
