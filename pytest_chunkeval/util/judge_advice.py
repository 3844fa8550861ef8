"""How the user of the running command gives a judge to a query set without
excerpts, named by the error that refuses such a set (engine/setup.py): the
plugin's ``judge=`` and ``chunkeval_judge`` setting, or, while the ``chunkeval``
command line runs (:func:`advice_named`), its ``chunkeval judge`` command, since
the other commands take no judge (docs/judged.md). The same pattern as the
cache directory's setting in util/unwritable.py. Standard library only."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["PLUGIN_JUDGE_ADVICE", "advice_named", "judge_advice"]

PLUGIN_JUDGE_ADVICE = (
    "give a judge to measure context relevance (docs/judged.md): 'llm:MODEL' or a "
    "registered name, as judge= (evaluate(), the chunkeval marker) or the "
    "chunkeval_judge setting"
)
"""What the pytest plugin's users do: ``{queries}`` is the query set."""

_advice = [PLUGIN_JUDGE_ADVICE]


def judge_advice(queries: str) -> str:
    """What the running command's user does about ``queries`` (the query set's
    name), a set whose questions have no excerpts."""
    return _advice[-1].replace("{queries}", queries)


@contextmanager
def advice_named(text: str) -> Iterator[None]:
    """Within: ``text`` says how to get a judged query set (``{queries}`` stands
    for the query set); the plugin's advice again after."""
    _advice.append(text)
    try:
        yield
    finally:
        _advice.pop()
