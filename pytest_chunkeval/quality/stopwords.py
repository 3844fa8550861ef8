"""The English stop words that lexical leakage leaves out (shipped, no download).

A plain list in the spirit of the classic ones (NLTK's, Lucene's): function words,
auxiliaries, pronouns and the question words themselves, so that "What is the
capital of France?" has two content words, ``capital`` and ``france``. Words are
lower-cased word tokens, as :func:`pytest_chunkeval.quality.leakage.words` makes
them (so contractions appear split: ``don`` and ``t``).
"""

from __future__ import annotations

_LISTED = """
    a about above after again against all also am an and any are aren as at
    be because been before being below between both but by
    can cannot could couldn
    d did didn do does doesn doing don down during
    each either
    few for from further
    had hadn has hasn have haven having he her here hers herself him himself his
    how however
    i if in into is isn it its itself
    just
    ll
    m ma me might mightn more most much must mustn my myself
    need needn neither no nor not now
    o of off on once only or other ought our ours ourselves out over own
    re
    s same shall shan she should shouldn so some such
    t than that the their theirs them themselves then there these they this those
    through to too
    under until up upon us
    ve very
    was wasn we were weren what whatever when where whether which while who whom
    whose why will with won would wouldn
    y yet you your yours yourself yourselves
"""

STOP_WORDS: frozenset[str] = frozenset(_LISTED.split())
"""Lower-cased stop words (171 words)."""
