"""Read and write the PNG files headless Chromium takes (screenshots), with numpy
alone: 8-bit RGB/RGBA, non-interlaced."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
import numpy.typing as npt


def read_png(path: Path) -> npt.NDArray[np.uint8]:
    """Decode an 8-bit RGB/RGBA non-interlaced PNG (what chromium writes)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(
                ">IIBBBBB", body
            )
            assert depth == 8
            assert color in (2, 6)
            assert interlace == 0
        elif kind == b"IDAT":
            idat += body
    bpp = 3 if color == 2 else 4
    stride = width * bpp
    raw = zlib.decompress(idat)
    out = np.zeros((height, stride), dtype=np.uint8)
    prev = np.zeros(stride, dtype=np.int32)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = np.frombuffer(raw, np.uint8, stride, y * (stride + 1) + 1).astype(
            np.int32
        )
        if kind == 0:
            row = line
        elif kind == 2:
            row = (line + prev) & 255
        elif kind == 1:  # Sub: a running sum per channel
            pixels = line.reshape(width, bpp)
            row = (np.cumsum(pixels, axis=0) & 255).reshape(-1)
        else:  # Average / Paeth depend on the left pixel: decode byte by byte
            cur = [0] * stride
            above = prev.tolist()
            scan = line.tolist()
            for i in range(stride):
                a = cur[i - bpp] if i >= bpp else 0
                b = above[i]
                if kind == 3:
                    cur[i] = (scan[i] + ((a + b) >> 1)) & 255
                else:
                    c = above[i - bpp] if i >= bpp else 0
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                    cur[i] = (scan[i] + pred) & 255
            row = np.array(cur, dtype=np.int32)
        out[y] = row
        prev = row
    return out.reshape(height, width, bpp)[:, :, :3]


def write_png(path: Path, image: npt.NDArray[np.uint8]) -> None:
    """Write an RGB image (height, width, 3) as a PNG (filter 0, best compression)."""
    height, width, _ = image.shape
    raw = b"".join(b"\x00" + image[y].astype(np.uint8).tobytes() for y in range(height))

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )
