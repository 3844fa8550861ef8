"""The extractor registry: ``llm:MODEL``, ``python:MODULE:ATTR`` and the ones a
``pytest_chunkeval_register_extractors`` hook adds, and :func:`get_extractor`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pytest_chunkeval.config.registry import Param, Registry, Signature
from pytest_chunkeval.relationships.extractors import CallableExtractor, Extractor

EXTRACTORS: Registry[Extractor] = Registry("extractor")


def _llm(model: str) -> Extractor:
    from pytest_chunkeval.relationships.llm import LLMExtractor

    return LLMExtractor(model=model)


def _python(module_name: str, attr: str) -> Extractor:
    """``python:MODULE:ATTR``: an extractor object or function of an importable
    module (the current directory is searched too, as ``python -m`` would)."""
    from pytest_chunkeval.config.python_spec import load_python

    target = load_python(module_name, attr)
    if isinstance(target, Extractor):
        return target
    if not callable(target):
        raise ValueError(
            f"python:{module_name}:{attr} is a {type(target).__name__}, not an "
            "extractor or a function text -> relationships"
        )
    # cached only under its cache_version (or version) attribute, read when used
    return CallableExtractor(target, name=f"{module_name}.{attr}")


EXTRACTORS.register("llm", _llm, signature=Signature((Param("model", rest=True),)))
EXTRACTORS.register(
    "python",
    _python,
    signature=Signature((Param("module"), Param("attr"))),
)


def get_extractor(extractor: str | Extractor | Callable[[str], Any]) -> Extractor:
    """An extractor from a spec string, an extractor object, or a function (named
    after it; cached only under its ``cache_version`` attribute, else computed
    every time; :class:`CallableExtractor` sets both)."""
    if isinstance(extractor, str):
        return EXTRACTORS.create(extractor)
    if isinstance(extractor, Extractor):
        return extractor
    if callable(extractor):
        return CallableExtractor(extractor)
    raise TypeError(
        "an extractor is a spec such as 'llm:gpt-4o-mini', an object with identity "
        f"and extract(text), or a function; got {type(extractor).__name__}"
    )
