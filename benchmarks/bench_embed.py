"""Embedding cache: cold overhead over raw sentence-transformers, warm lookup speed.

Texts: the bundled general benchmark's five corpora cut into token windows of
200/100, 250/125, 300/150 and 400/200 (about 10k chunk texts), plus its 472 queries.

    .venv/bin/python benchmarks/bench_embed.py            # full run (minutes on CPU)
    .venv/bin/python benchmarks/bench_embed.py --limit 2000
    .venv/bin/python benchmarks/bench_embed.py --warm-only  # no model: seconds

Prints, measured side by side in one run:
- cold: raw ``SentenceTransformer.encode`` of all texts vs ``EmbeddingCache.embed`` on
  an empty cache (model already loaded for both), and their ratio;
- warm, same process: memoized packs, then packs reloaded from disk;
- warm, fresh process: interpreter start, imports, identity, pack load and lookup,
  checking that torch was never imported.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
WINDOWS = [(200, 100), (250, 125), (300, 150), (400, 200)]


def benchmark_texts() -> tuple[list[str], list[str]]:
    """Chunk texts of the bundled benchmark under every window setting, and its questions."""
    from pytest_chunkeval.chunkers import FixedTokenChunker
    from pytest_chunkeval.data.benchmarks import load_benchmark

    corpus, queries = load_benchmark("general")
    chunks = [
        doc.text[start:end]
        for size, overlap in WINDOWS
        for doc in corpus
        for start, end in FixedTokenChunker(size, overlap)
        .chunk_spans(doc.text)
        .tolist()
    ]
    return chunks, [q.text for q in queries]


def timed(label: str, fn, *args, **kwargs):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    elapsed = time.perf_counter() - start
    print(f"  {label:<48} {elapsed:8.3f} s")
    return result, elapsed


class InstantEmbedder:
    """Random unit vectors under a real identity: isolates the cache's own cost."""

    def __init__(self, identity: str) -> None:
        self.identity = identity
        self.seconds = 0.0
        self._rng = np.random.default_rng(0)

    def embed(self, texts: list[str]) -> np.ndarray:  # type: ignore[type-arg]
        start = time.perf_counter()
        vectors = self._rng.standard_normal((len(texts), 384)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        self.seconds += time.perf_counter() - start
        return vectors


FRESH = textwrap.dedent(
    """
    import json, sys, time
    t0 = time.perf_counter()
    from pytest_chunkeval.embedders import cache as cache_module
    from pytest_chunkeval.embedders.registry import get_embedder
    t1 = time.perf_counter()
    texts = json.load(open(sys.argv[2]))
    emb = get_embedder()
    identity = emb.identity
    t2 = time.perf_counter()
    cache = cache_module.EmbeddingCache(sys.argv[1])
    store = cache._store(identity)
    store.refresh()
    t3 = time.perf_counter()
    vectors = cache.embed(emb, texts)
    t4 = time.perf_counter()
    print(json.dumps({
        "import": t1 - t0, "identity": t2 - t1, "load_packs": t3 - t2,
        "lookup": t4 - t3, "misses": cache.stats.misses, "shape": vectors.shape,
        "torch": "torch" in sys.modules,
    }))
    """
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="use the first N texts")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument(
        "--warm-only",
        action="store_true",
        help="skip the model: an instant fake model under the real identity "
        "measures the cache's own cold cost, then the warm paths",
    )
    args = parser.parse_args()

    import json
    import platform

    from pytest_chunkeval.embedders.cache import EmbeddingCache
    from pytest_chunkeval.embedders.sentence_transformers import (
        SentenceTransformerEmbedder,
    )

    chunks, queries = benchmark_texts()
    texts = chunks + queries
    if args.limit:
        texts = texts[: args.limit]
    print(f"{len(chunks)} chunk texts + {len(queries)} queries; using {len(texts)}")
    machine = platform.processor() or platform.machine()
    print(f"machine: {machine}, python {platform.python_version()}")

    emb = SentenceTransformerEmbedder(
        "all-MiniLM-L6-v2", batch_size=args.batch_size, device="cpu"
    )
    with tempfile.TemporaryDirectory() as tmp:
        cache_dir = Path(tmp) / "cache"
        cache = EmbeddingCache(cache_dir)
        print("cold")
        timed("identity (hash weights, no model)", lambda: emb.identity)
        if args.warm_only:
            fake = InstantEmbedder(emb.identity)
            cold, t_cold = timed(
                "EmbeddingCache.embed, empty cache, instant model",
                cache.embed,
                fake,
                texts,
                progress=False,
            )
            print(
                f"  cache overhead (all but the model): {t_cold - fake.seconds:.3f} s"
            )
        else:
            timed("load model", lambda: emb.model)
            import torch

            print(f"  torch threads: {torch.get_num_threads()}")
            raw, t_raw = timed(
                "raw SentenceTransformer.encode",
                emb.model.encode,
                texts,
                batch_size=args.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
            )
            cold, t_cold = timed(
                "EmbeddingCache.embed, empty cache",
                cache.embed,
                emb,
                texts,
                progress=False,
            )
            print(f"  ratio cached-cold / raw encode: {t_cold / t_raw:.3f}")
            print(f"  max |cached - raw|: {float(np.abs(cold - raw).max()):.2e}")
            print(f"  {cache.stats}")

        print("warm, same process")
        timed("embed, packs memoized", cache.embed, emb, texts)
        cache = EmbeddingCache(cache_dir)  # a new object loads the packs again
        again, _ = timed("embed, packs reloaded from disk", cache.embed, emb, texts)
        assert np.array_equal(again, cold)
        assert cache.stats.misses == 0
        info = cache.info()[emb.identity]
        size = f"{info['bytes'] / 1e6:.1f} MB"
        print(f"  cache: {info['entries']} entries, {info['files']} packs, {size}")

        print("warm, fresh process")
        texts_file = Path(tmp) / "texts.json"
        texts_file.write_text(json.dumps(texts))
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", FRESH, str(cache_dir), str(texts_file)],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        wall = time.perf_counter() - start
        fresh = json.loads(done.stdout)
        for key in ("import", "identity", "load_packs", "lookup"):
            print(f"  {key:<48} {fresh[key]:8.3f} s")
        print(f"  {'total wall time (interpreter included)':<48} {wall:8.3f} s")
        print(f"  misses={fresh['misses']} torch imported={fresh['torch']}")


if __name__ == "__main__":
    main()
