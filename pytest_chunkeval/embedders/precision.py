"""Numeric precision of local embedding models: float32 (default) or bfloat16.

``dtype=bfloat16`` runs the model under ``torch.autocast``: matrix products in bf16,
accumulation and outputs in float32. It is opt-in because its vectors differ from
float32 ones in the last digits and because bf16 support differs by machine: the
default must give the same numbers everywhere.

Where the hardware has no native bf16 (a CPU without AVX-512 BF16 or AMX, a GPU
without bf16), emulated bf16 is slower than float32, so the model runs in float32,
a warning says so once, and the embedder's identity records float32: the cache and
the baselines always name the precision that was actually used.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from pytest_chunkeval.errors import ChunkevalWarning

FLOAT32 = "float32"
BFLOAT16 = "bfloat16"
_ALIASES = {"float32": FLOAT32, "fp32": FLOAT32, "bfloat16": BFLOAT16, "bf16": BFLOAT16}
CPU_BF16_FLAGS = ("avx512_bf16", "amx_bf16")
CPUINFO = Path("/proc/cpuinfo")


class PrecisionWarning(ChunkevalWarning):
    """A requested precision is not available here; another one is used."""


def parse_dtype(value: str) -> str:
    """``float32`` or ``bfloat16`` (also ``fp32`` / ``bf16``); else ``ValueError``."""
    text = value.strip().lower()
    if text not in _ALIASES:
        raise ValueError("expected float32 or bfloat16")
    return _ALIASES[text]


@functools.lru_cache(maxsize=1)
def cpu_has_native_bf16() -> bool:
    """True when the CPU flags (``/proc/cpuinfo``) include AVX-512 BF16 or AMX BF16.

    Read from a file, so that computing an identity never imports torch; where the
    file does not exist (macOS, Windows) the answer is False.
    """
    try:
        text = CPUINFO.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    for line in text.splitlines():
        if line.startswith("flags"):
            flags = set(line.partition(":")[2].split())
            return any(flag in flags for flag in CPU_BF16_FLAGS)
    return False


def _cuda_has_bf16() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())


def native_bf16(device: str | None) -> bool:
    """Whether ``device`` (``None``/``cpu``/``cuda[:N]``) computes bf16 natively."""
    if device is not None and device.startswith("cuda"):
        return _cuda_has_bf16()
    if device in (None, "cpu"):
        return cpu_has_native_bf16()
    return False  # mps, npu, xpu: not checked, so not trusted


_warned: set[tuple[str, str]] = set()


def effective_dtype(requested: str, device: str | None, *, who: str) -> str:
    """The precision that will actually run: ``requested`` if the device supports
    it natively, else float32 (with a warning, once per model and device)."""
    if requested == FLOAT32 or native_bf16(device):
        return requested
    key = (who, device or "cpu")
    if key not in _warned:
        _warned.add(key)
        warnings.warn(
            f"{who}: dtype=bfloat16 was requested but {device or 'this CPU'} has no "
            f"native bf16 (CPU flags {' / '.join(CPU_BF16_FLAGS)}); running and "
            "recording float32",
            PrecisionWarning,
            stacklevel=3,
        )
    return FLOAT32


def autocast(dtype: str, device: str | None) -> Any:
    """A context that runs a torch model in ``dtype`` (nothing to do for float32)."""
    if dtype == FLOAT32:
        return nullcontext()
    return _bf16_autocast(device)


@contextmanager
def _bf16_autocast(device: str | None) -> Iterator[None]:
    import torch

    kind = "cuda" if device is not None and device.startswith("cuda") else "cpu"
    with torch.autocast(device_type=kind, dtype=torch.bfloat16):
        yield
