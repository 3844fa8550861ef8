"""Judge specs: ``llm:MODEL`` and names registered for Python callables.

``llm:gpt-4o-mini`` is any model of the OpenAI-compatible endpoint
(``OPENAI_BASE_URL``, key from ``OPENAI_API_KEY``). A callable is registered with a
name and a version, in code (:func:`register_judge`) or from a ``conftest.py``
through the ``pytest_chunkeval_register_judges`` hook.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pytest_chunkeval.config.registry import Param, Registry, Signature
from pytest_chunkeval.judging.judge import CallableJudge, Judge, JudgeError, LLMJudge

JUDGES: Registry[Judge] = Registry("judge")
JUDGES.register("llm", LLMJudge, signature=Signature((Param("model", rest=True),)))


def register_judge(
    name: str, fn: Callable[[str, str], Sequence[str]], *, version: str
) -> CallableJudge:
    """Register ``fn(question, context) -> sentences`` as the judge ``name``;
    ``version`` is its identity (change it when ``fn`` changes)."""
    if ":" in name or not name.strip():
        raise JudgeError(f"judge name {name!r}: expected a plain name without ':'")
    judge = CallableJudge(fn, name=name, version=version)
    JUDGES.register(name, lambda rest: judge, name)
    return judge


def get_judge(spec: str | Judge | Any) -> Judge:
    """A judge from a spec string, or the judge object itself."""
    if isinstance(spec, str):
        return JUDGES.create(spec)
    if hasattr(spec, "identity") and hasattr(spec, "compute"):
        return spec
    if callable(spec):
        raise JudgeError(
            f"{spec!r}: a plain function has no identity for the judgment cache; "
            "register it with register_judge(name, fn, version=...) or wrap it as "
            "CallableJudge(fn, name=..., version=...)"
        )
    raise JudgeError(f"not a judge: {spec!r} (expected 'llm:MODEL' or a name)")
