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


def _python(module_name: str, attr: str) -> Judge:
    """``python:MODULE:ATTR``: a judge object, or a function ``(question,
    context) -> sentences`` (its ``cache_version`` or ``version`` attribute is
    part of its identity: change it when the function changes; without one it
    is judged every time, nothing cached)."""
    from pytest_chunkeval.config.python_spec import load_python

    target = load_python(module_name, attr)
    if hasattr(target, "identity") and hasattr(target, "compute"):
        return target  # type: ignore[return-value]
    if not callable(target):
        raise JudgeError(
            f"python:{module_name}:{attr} is a {type(target).__name__}, not a judge "
            "or a function (question, context) -> sentences"
        )
    version = getattr(target, "cache_version", None) or getattr(target, "version", None)
    return CallableJudge(
        target,
        name=f"{module_name}.{attr}",
        version=None if version is None else str(version),
    )


JUDGES.register(
    "python", _python, signature=Signature((Param("module"), Param("attr")))
)


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
    raise JudgeError(
        f"not a judge: {spec!r} (expected 'llm:MODEL', 'python:MODULE:ATTR' or a "
        "registered name)"
    )
