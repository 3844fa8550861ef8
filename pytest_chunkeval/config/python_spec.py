"""``python:MODULE:ATTR``: a component (extractor, judge) named by where its code
is, for the command line, where no ``conftest.py`` registers it. Standard
library only."""

from __future__ import annotations

import importlib
import os
import sys

from pytest_chunkeval.errors import ConfigError

__all__ = ["load_python"]


def load_python(module_name: str, attr: str) -> object:
    """``MODULE.ATTR`` of an importable module (the current directory is searched
    too, as ``python -m`` would); a one-line :class:`ConfigError` when it cannot
    be loaded."""
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"cannot load {module_name}:{attr} ({exc})") from None
