"""What the excerpts of a query set look like: their lengths, how many a question
has, and the excerpt texts that occur more than once (in the corpus, or among the
questions).

An excerpt whose text occurs several times in the corpus (a repeated table row, a
chat line, a quoted paragraph) is found by a retriever at any copy; the scoring
rules treat identical text as interchangeable (``docs/concepts.md``), and this
count says how much of a set depends on that rule.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.quality._stats import distribution
from pytest_chunkeval.tokenizers.base import Tokenizer


def occurrences(corpus: Corpus, text: str) -> int:
    """How many times ``text`` occurs in the corpus' documents, overlapping
    occurrences included."""
    count = 0
    for doc in corpus:
        pos = doc.text.find(text)
        while pos >= 0:
            count += 1
            pos = doc.text.find(text, pos + 1)
    return count


def excerpt_report(
    corpus: Corpus, queries: QuerySet, tokenizer: Tokenizer, *, show: int = 10
) -> dict[str, Any]:
    """Lengths (tokens of each excerpt's text, and characters), excerpts per
    question, texts occurring more than once in the corpus and texts shared by
    questions."""
    excerpts = [e for q in queries for e in q.excerpts]
    lengths = tokenizer.count_batch([e.text for e in excerpts]) if excerpts else []
    per_question = Counter(len(q.excerpts) for q in queries)
    found = {t: occurrences(corpus, t) for t in dict.fromkeys(e.text for e in excerpts)}
    repeated = [e for e in excerpts if found[e.text] > 1]
    askers: dict[str, set[str]] = {}
    for q in queries:
        for e in q.excerpts:
            askers.setdefault(e.text, set()).add(q.id)
    shared = {t: ids for t, ids in askers.items() if len(ids) > 1}
    most = sorted(found, key=lambda t: -found[t])[:show]
    return {
        "count": len(excerpts),
        "tokenizer": tokenizer.name,
        "length": distribution(lengths),
        "length_chars": distribution([e.end - e.start for e in excerpts]),
        "per_question": {str(n): per_question[n] for n in sorted(per_question)},
        "several": sum(c for n, c in per_question.items() if n > 1),
        "repeated_in_corpus": {
            "excerpts": len(repeated),
            "texts": sum(1 for c in found.values() if c > 1),
            "questions": len(
                {q.id for q in queries for e in q.excerpts if found[e.text] > 1}
            ),
            "most": [
                {"text": t, "occurrences": found[t]} for t in most if found[t] > 1
            ],
        },
        "shared_by_questions": {
            "texts": len(shared),
            "questions": len({i for ids in shared.values() for i in ids}),
        },
    }
