"""Chunk texts read from their documents (engine/chunk_texts.py) are the texts
the chunking lists, and the margins' text ids read only the rows they are given
(docs/performance.md, "Memory")."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from support.tiny_corpus import DOCS

from pytest_chunkeval.chunkers import get_chunker
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.engine.chunk_texts import ChunkTexts
from pytest_chunkeval.engine.chunking import Chunking
from pytest_chunkeval.engine.evidence import _TextsHash
from pytest_chunkeval.engine.margins import text_ids


def test_chunk_texts_are_the_chunkings_texts(tmp_path: Path) -> None:
    corpus = Corpus.from_mapping({**DOCS, "copy.md": DOCS["space.md"]})
    chunking = Chunking(get_chunker("recursive:12:4"), corpus, tmp_path)
    listed = chunking.texts()
    texts = ChunkTexts([d.text for d in corpus], chunking.doc, chunking.bounds)
    assert len(texts) == len(listed) > 10
    assert list(texts) == listed
    assert [texts[i] for i in range(len(listed))] == listed
    assert texts[-1] == listed[-1]
    assert texts[3:9:2] == listed[3:9:2]
    assert texts[::-1] == listed[::-1]


def _old_text_ids(texts: list[str], rows: np.ndarray) -> np.ndarray:
    """The definition before: ids over every text, then looked up per row."""
    ids: dict[str, int] = {}
    of_chunk = np.array([ids.setdefault(t, len(ids)) for t in texts], np.int64)
    safe = np.where(rows >= 0, rows, 0)
    return np.where(rows >= 0, of_chunk[safe], -1)


@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(st.sampled_from(["a", "b", "c", "", "ab"]), min_size=1, max_size=9),
    data=st.data(),
)
def test_text_ids_tell_the_same_texts_apart_as_before(
    texts: list[str], data: st.DataObject
) -> None:
    shape = data.draw(st.tuples(st.integers(0, 4), st.integers(0, 5)))
    cells = st.integers(-1, len(texts) - 1)
    flat = data.draw(st.lists(cells, min_size=shape[0] * shape[1], max_size=40))
    rows = np.array(flat[: shape[0] * shape[1]], dtype=np.int64).reshape(shape)
    new, old = text_ids(texts, rows), _old_text_ids(texts, rows)
    assert new.shape == rows.shape
    assert new.dtype == np.int64
    np.testing.assert_array_equal(new < 0, rows < 0)
    same_new = new.reshape(-1)[:, None] == new.reshape(-1)[None, :]
    same_old = old.reshape(-1)[:, None] == old.reshape(-1)[None, :]
    np.testing.assert_array_equal(same_new, same_old)


def _old_texts_hash(texts: list[str], rows: list[int]) -> str:
    """The definition before: every row's bytes joined, then hashed."""
    blobs = []
    for row in rows:
        text = texts[row] if row >= 0 else ""
        blobs.append(len(text).to_bytes(8, "little") + text.encode("utf-8", "replace"))
    return hashlib.sha256(b"".join(blobs)).hexdigest()[:12]


@settings(max_examples=100, deadline=None)
@given(
    texts=st.lists(st.text(max_size=6), min_size=1, max_size=6),
    data=st.data(),
)
def test_the_found_hash_is_the_one_baselines_hold(
    texts: list[str], data: st.DataObject
) -> None:
    rows = data.draw(st.lists(st.integers(-1, len(texts) - 1), max_size=8))
    assert _TextsHash(texts)(rows) == _old_texts_hash(texts, rows)
