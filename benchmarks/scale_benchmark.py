"""The bundled benchmark copied N times: the data of the 10x and 100x figures.

Run: .venv/bin/python benchmarks/scale_benchmark.py [--copies 10 100]
         [--variant verbatim distinct] [--out /tmp/chunkeval-scaled]

Writes ``OUT/<variant>-<N>x/corpora/<doc>-cNNN.md`` (5 documents per copy) and
``OUT/<variant>-<N>x/questions_df.csv`` (472 questions per copy, the bundled file's
format, each question pointing at its own copy of its document), then checks that
every excerpt is its document's text at its offsets. Evaluate it with::

    chunkeval eval --corpus OUT/verbatim-100x/corpora \\
        --queries OUT/verbatim-100x/questions_df.csv \\
        --embedder hashing --chunker recursive:200:0 --store exact --k 5

Two variants:

- ``verbatim``: every copy is the bundled text unchanged. Every chunk text and every
  question appears N times: the worst case for ties at the k-th place (and for any
  rule about identical texts).
- ``distinct``: copy ``c`` (from 1; copy 0 is the bundled text) replaces a few
  frequent words by a copy-specific word of the same length (``the`` -> ``t07``,
  ``that`` -> ``th07``, capital kept), in documents, excerpts and questions alike.
  The substitution keeps every length, so the excerpts' offsets stay valid and
  each excerpt is still its document's text at its offsets.

The data is generated, never committed: the default output is under /tmp.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import shutil
from importlib import resources
from pathlib import Path

DATA = Path(str(resources.files("pytest_chunkeval").joinpath("data", "general")))
VARIANTS = ("verbatim", "distinct")
# Frequent English words (at least 3 letters, so two digits fit in their place).
WORDS = (
    "the", "and", "that", "for", "with", "this", "are", "was", "from", "have",
    "not", "which", "were", "their", "has", "but", "can", "will", "been", "they",
)  # fmt: skip
_WORD_RE = re.compile(r"\b(" + "|".join(WORDS) + r")\b", re.IGNORECASE)


def substitute(text: str, copy: int) -> str:
    """``text`` with each of :data:`WORDS` replaced by its copy-``copy`` variant of
    the same length; copy 0 is the text unchanged."""
    if copy == 0:
        return text
    tag = f"{copy:02d}"
    if len(tag) > 2:
        raise ValueError(f"copy {copy}: at most 100 distinct copies")

    def variant(match: re.Match[str]) -> str:
        word = match.group(0)
        return word[: len(word) - 2] + tag

    return _WORD_RE.sub(variant, text)


def write_copies(out: Path, copies: int, variant: str) -> tuple[int, int]:
    """Write one scaled benchmark; returns (documents, questions)."""
    if out.exists():
        shutil.rmtree(out)
    corpora = out / "corpora"
    corpora.mkdir(parents=True)
    originals = {
        p.stem: p.read_text(encoding="utf-8") for p in (DATA / "corpora").glob("*.md")
    }
    with (DATA / "questions_df.csv").open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    texts: dict[str, str] = {}
    out_rows: list[dict[str, str]] = []
    for c in range(copies):
        n = c if variant == "distinct" else 0
        for stem, text in originals.items():
            texts[f"{stem}-c{c:03d}"] = substitute(text, n)
        for row in rows:
            doc_id = f"{row['corpus_id']}-c{c:03d}"
            refs = [
                {**ref, "content": texts[doc_id][ref["start_index"] : ref["end_index"]]}
                for ref in json.loads(row["references"])
            ]
            out_rows.append(
                {
                    "question": substitute(row["question"], n),
                    "references": json.dumps(refs),
                    "corpus_id": doc_id,
                }
            )
    for doc_id, text in texts.items():
        (corpora / f"{doc_id}.md").write_text(text, encoding="utf-8", newline="")
    with (out / "questions_df.csv").open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["question", "references", "corpus_id"])
        writer.writeheader()
        writer.writerows(out_rows)
    check(out)
    return len(texts), len(out_rows)


def check(out: Path) -> None:
    """Every excerpt is its document's text at its offsets (the loader's rule)."""
    from pytest_chunkeval.data.corpus import Corpus
    from pytest_chunkeval.data.queries import QuerySet

    corpus = Corpus.from_paths([out / "corpora"])
    queries = QuerySet.load(out / "questions_df.csv", corpus)
    for query in queries:
        for excerpt in query.excerpts:
            text = corpus[excerpt.doc_id].text
            if text[excerpt.start : excerpt.end] != excerpt.text:
                raise SystemExit(f"{out}: query {query.id}: excerpt off its document")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, nargs="+", default=[10, 100])
    parser.add_argument("--variant", nargs="+", choices=VARIANTS, default=VARIANTS)
    parser.add_argument("--out", type=Path, default=Path("/tmp/chunkeval-scaled"))
    args = parser.parse_args()
    for variant in args.variant:
        for copies in args.copies:
            if variant == "distinct" and copies > 100:
                parser.error("distinct copies: at most 100")
            target = args.out / f"{variant}-{copies}x"
            docs, questions = write_copies(target, copies, variant)
            print(f"{target}: {docs} documents, {questions} questions")


if __name__ == "__main__":
    main()
