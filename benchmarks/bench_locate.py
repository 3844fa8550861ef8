"""Placing retrieved text in the bundled benchmark's corpus (1.4 M characters).

Run: .venv/bin/python benchmarks/bench_locate.py

1. Normalizing a document with its offset map (core/normalize.py ``fold``: each
   distinct character folded once, the rest numpy counting and gathers) against a
   straightforward pure-Python loop building the same text and map, side by side;
   both must agree.
2. ``locate_results`` for the 472 questions, each answered with the 5 chunks of
   ``recursive:400`` (characters) around its first excerpt: exact placement of the
   chunks as they are, normalized placement of the same chunks lower-cased with
   punctuation removed, and the former rule (first occurrence, the question's own
   document first) on the original texts. Chunks whose text occurs more than once
   in the corpus are left out (the new rule refuses them).
"""

from __future__ import annotations

import string
import time
from collections.abc import Callable

from pytest_chunkeval.core.locate import locate
from pytest_chunkeval.core.normalize import fold, fold_char
from pytest_chunkeval.data.benchmarks import load_benchmark
from pytest_chunkeval.engine.locating import locate_results

REPEATS = 3


def python_fold(text: str) -> tuple[str, list[int]]:
    out: list[str] = []
    origin: list[int] = []
    for i, char in enumerate(text):
        piece = fold_char(char)
        out.append(piece)
        origin.extend([i] * len(piece))
    return "".join(out), origin


def best(fn: Callable[[], object], repeats: int = REPEATS) -> float:
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        fn()
        times.append(time.perf_counter() - began)
    return min(times)


def main() -> None:
    corpus, queries = load_benchmark("general")
    texts = [d.text for d in corpus]
    chars = sum(len(t) for t in texts)
    fold_char.cache_clear()
    cold = best(lambda: [fold(t) for t in texts], 1)
    vectorized = best(lambda: [fold(t) for t in texts])
    loop = best(lambda: [python_fold(t) for t in texts])
    for text in texts:
        folded, origin = python_fold(text)
        mine = fold(text)
        assert mine.text == folded
        assert mine.origin.tolist() == origin
    print(f"normalize {chars:,} characters with offset map:")
    print(f"  vectorized {vectorized * 1000:.0f} ms (first call {cold * 1000:.0f} ms)")
    print(f"  Python loop {loop * 1000:.0f} ms: {loop / vectorized:.1f}x slower")

    # Five 400-character chunks around each question's first excerpt.
    strip = str.maketrans("", "", string.punctuation)
    whole = "\n".join(texts)
    answers: dict[str, list[str]] = {}
    cleaned: dict[str, list[str]] = {}
    for q in queries:
        e = q.excerpts[0]
        doc = corpus[e.doc_id].text
        base = (e.start // 400) * 400
        chunks = [doc[s : s + 400] for s in range(max(0, base - 800), base + 1200, 400)]
        chunks = [c for c in chunks if c.strip() and whole.count(c) == 1]
        answers[q.id] = chunks
        cleaned[q.id] = [c.lower().translate(strip) for c in chunks]
    n = sum(len(v) for v in answers.values())

    def former() -> None:
        for q in queries:
            order = [q.doc_id] + [d for d in corpus.ids if d != q.doc_id]
            for chunk in answers[q.id]:
                for doc_id in order:
                    if locate(corpus[doc_id].text, chunk) is not None:
                        break

    exact = best(lambda: locate_results(answers, corpus, queries))
    normalized = best(
        lambda: locate_results(cleaned, corpus, queries, locate="normalized")
    )
    old = best(former)
    a = locate_results(answers, corpus, queries).per_query
    b = locate_results(cleaned, corpus, queries, locate="normalized").per_query

    # The normalized span is the exact one trimmed to its first and last letter
    # or digit (the punctuation and spaces the retriever dropped are not in it).
    def trimmed(span: tuple[str, int, int]) -> tuple[str, int, int]:
        doc, start, end = span
        text = corpus[doc].text
        while not fold_char(text[start]):
            start += 1
        while not fold_char(text[end - 1]):
            end -= 1
        return doc, start, end

    same = sum(
        trimmed(x) == y
        for xs, ys in zip(a, b, strict=True)
        for x, y in zip(xs, ys, strict=True)
    )
    print(f"place {n:,} retrieved chunks (472 questions):")
    print(f"  exact, every document searched: {exact * 1000:.0f} ms")
    print(f"  former rule (first occurrence, own document first): {old * 1000:.0f} ms")
    print(
        f"  normalized (lower-cased, punctuation removed): {normalized * 1000:.0f} ms "
        f"({normalized / exact:.1f}x exact); {same}/{n} equal to the exact "
        f"span trimmed to its letters and digits"
    )


if __name__ == "__main__":
    main()
