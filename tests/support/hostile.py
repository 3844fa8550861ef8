"""A dataset of untrusted text: a document holding a ``<script>`` and an
``<img onerror=...>``, a document id holding another (each would mark
``<body data-pwned>`` if it ran), and a question holding ``</script>``,
``<!--``, ``|``, ``<b>`` and a newline."""

from __future__ import annotations

from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.data.query_types import Excerpt, Query

FILLER = " ".join(f"word{i}" for i in range(400))
HOSTILE = (
    "<script>document.body.setAttribute('data-pwned','script')</script> "
    "<img src=x onerror=\"document.body.setAttribute('data-pwned','img')\"> "
)
EVIL_ID = "<img src=y onerror=\"document.body.setAttribute('data-pwned','id')\">.md"
DOCS = {
    "a.md": f"{FILLER}\nCats sleep all day. {HOSTILE}\n{FILLER}",
    "b.md": f"Mars is red.\n{FILLER}\nThe Moon has craters.\n{FILLER}",
    EVIL_ID: f"{FILLER}\nOwls hunt at night.",
}
QUESTIONS = [
    ("q1", "Do cats </script><!-- sleep | <b>all</b>\nday?", "a.md", "Cats sleep"),
    ("q2", "What does the Moon have?", "b.md", "The Moon has craters."),
    ("q3", "What colour is Mars?", "b.md", "Mars is red."),
    ("q4", "When do owls hunt?", EVIL_ID, "Owls hunt at night."),
]


def hostile_dataset() -> tuple[Corpus, QuerySet]:
    corpus = Corpus.from_mapping(DOCS)
    queries = []
    for qid, question, doc, sentence in QUESTIONS:
        start = DOCS[doc].index(sentence)
        excerpt = Excerpt(sentence, doc, start, start + len(sentence))
        queries.append(Query(qid, question, (excerpt,), doc))
    return corpus, QuerySet(queries).validated(corpus)
