"""Rerankers for tests of the rerank stage (docs/retrieval.md): one preferring the
longest chunk, and a tiny cross-encoder folder built on the spot."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from support.manual_corpus import TEXT


class ByLength:
    """Prefers the longest chunk: easy to predict, unlike any store's order."""

    identity = "test:by-length"

    def __init__(self, candidates: int = 5) -> None:
        self.candidates = candidates
        self.pairs: list[tuple[str, str]] = []

    def score(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        self.pairs.extend(pairs)
        return np.array([len(text) for _, text in pairs], dtype=np.float32)


def build_tiny_cross_encoder(path: Path, seed: int = 0) -> Path:
    """A 1-layer BERT with random weights and a one-logit head, as a CrossEncoder
    folder (config, weights, tokenizer)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    words += sorted(
        {w.strip(".?,").lower() for w in TEXT.split()}
        | {"what", "does", "mean", "how", "often", "should", "vehicle", "get"}
    )
    path.mkdir(parents=True)
    (path / "vocab.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    tokenizer = transformers.BertTokenizerFast(vocab_file=str(path / "vocab.txt"))
    torch.manual_seed(seed)
    config = transformers.BertConfig(
        vocab_size=len(words),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=128,
        num_labels=1,
    )
    model = transformers.BertForSequenceClassification(config)
    with torch.no_grad():  # spread the scores so that their order is clear
        model.classifier.weight.mul_(50.0)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
