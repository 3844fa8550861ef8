"""A five-paragraph manual and two questions: one only BM25 answers (a part
number), one only a dense model does (a paraphrase), with a tiny "semantic"
embedder that maps words to concepts (docs/retrieval.md)."""

from __future__ import annotations

import numpy as np

from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.data.query_types import Excerpt, Query

PARAGRAPHS = [
    "Error codes are listed in the manual. Every error has a code and a fault.",
    "ZX-4471 appears when the coolant pump stalls.",
    "Automobiles need regular oil changes to keep engines healthy.",
    "A fault in the error log means the code was recorded twice.",
    "Parrots can imitate human speech and live for decades.",
]
TEXT = "\n\n".join(PARAGRAPHS)

# A tiny "semantic" embedder: words map to concepts, so synonyms share a vector and
# unknown words (such as a part number) add nothing, as with a real dense model.
CONCEPTS = {
    "error": "error",
    "errors": "error",
    "fault": "error",
    "code": "code",
    "codes": "code",
    "automobiles": "car",
    "vehicle": "car",
    "car": "car",
    "oil": "service",
    "serviced": "service",
    "changes": "service",
    "parrots": "bird",
    "speech": "bird",
}
AXES = sorted(set(CONCEPTS.values()))


def concept_embedder(texts: list[str]) -> np.ndarray:
    out = np.zeros((len(texts), len(AXES)), dtype=np.float32)
    for i, text in enumerate(texts):
        for word in text.lower().replace(".", " ").replace("?", " ").split():
            if word in CONCEPTS:
                out[i, AXES.index(CONCEPTS[word])] += 1
    return out


def paragraphs(text: str) -> list[str]:
    return text.split("\n\n")


def make_data() -> tuple[Corpus, QuerySet]:
    corpus = Corpus.from_mapping({"manual.md": TEXT})

    def q(qid: str, question: str, paragraph: int) -> Query:
        excerpt = PARAGRAPHS[paragraph]
        start = TEXT.index(excerpt)
        return Query(
            qid,
            question,
            (Excerpt(excerpt, "manual.md", start, start + len(excerpt)),),
            "manual.md",
        )

    return corpus, QuerySet(
        [
            # Only BM25 sees the part number; the dense model sees "error".
            q("rare", "What does error ZX-4471 mean?", 1),
            # No word in common with the answer: only the dense model links them.
            q("paraphrase", "How often should a vehicle get serviced?", 2),
        ]
    )
