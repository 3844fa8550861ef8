"""Helpers to compare a store's retrieved lists with exact search.

Reusable for the benchmark-with-real-embeddings comparison: feed
``Agreement.of(store_ids, exact_ids)`` any ``(q, k)`` id arrays.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[2]


def rotations(
    dim: int = 32,
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """One unit vector's components rotated, and a uniform query: the same
    cosine with every row, which float32 arithmetic (Chroma's distances) rounds
    apart; ranked by the plugin's float64 cosine, they tie (docs/stores.md)."""
    base = np.random.default_rng(7).normal(size=dim).astype(np.float32)
    rows = np.stack([np.roll(base / np.linalg.norm(base), s) for s in range(dim)])
    return rows, np.full((1, dim), dim**-0.5, dtype=np.float32)


def clustered_vectors(
    n: int,
    queries: int,
    *,
    dim: int = 384,
    clusters: int = 50,
    seed: int = 0,
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """L2-normalized ``(n, dim)`` vectors and ``(queries, dim)`` queries.

    Like sentence embeddings, they form topical clusters of different sizes and
    spreads, and queries fall near (not on) the documents of one topic, so that
    a query's neighbours are close competitors, as in real retrieval.
    """
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, dim)).astype(np.float32)
    sizes = rng.dirichlet(np.full(clusters, 2.0))
    spread = rng.uniform(0.6, 1.4, clusters).astype(np.float32)

    def sample(m: int) -> npt.NDArray[np.float32]:
        topic = rng.choice(clusters, size=m, p=sizes)
        noise = rng.standard_normal((m, dim)).astype(np.float32)
        vecs = centres[topic] + spread[topic, None] * noise
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        return vecs

    return sample(n), sample(queries)


@dataclass(frozen=True)
class Agreement:
    """How many retrieved lists of a store match exact search."""

    queries: int
    identical: int
    """Lists equal to the exact ones, rank for rank."""
    same_set: int
    """Lists holding the same ids as the exact ones, in any order."""
    recall: float
    """Mean fraction of the exact top-k ids that the store returned."""

    @classmethod
    def of(cls, got: npt.NDArray[np.int64], exact: npt.NDArray[np.int64]) -> Agreement:
        if got.shape != exact.shape:
            raise ValueError(f"shapes differ: {got.shape} vs {exact.shape}")
        identical = int((got == exact).all(axis=1).sum())
        same = 0
        hits = 0
        for mine, truth in zip(got.tolist(), exact.tolist(), strict=True):
            want = {i for i in truth if i >= 0}
            have = {i for i in mine if i >= 0}
            same += have == want
            hits += len(have & want)
        total = int((exact >= 0).sum())
        return cls(
            queries=got.shape[0],
            identical=identical,
            same_set=same,
            recall=hits / total if total else 1.0,
        )

    @property
    def differ(self) -> int:
        """Lists not identical to exact search."""
        return self.queries - self.identical

    def __str__(self) -> str:
        return (
            f"{self.identical}/{self.queries} lists identical to exact "
            f"({self.differ} differ), {self.same_set}/{self.queries} same set, "
            f"recall {self.recall:.4f}"
        )


def index_in_subprocess(
    spec: str, key: str, vectors: Path, timeout: float = 120
) -> str:
    """Index the ``.npy`` file ``vectors`` into store ``spec`` in a fresh process.

    Returns the process's stdout: ``reused=<bool>``. A persistent store built this
    way is what a later test run finds on disk.
    """
    code = textwrap.dedent(
        f"""
        import numpy as np
        from pytest_chunkeval.stores import get_store
        index = get_store({spec!r}).index({key!r}, np.load({str(vectors)!r}))
        print(f"reused={{index.reused}}")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        check=False,
    )
    if done.returncode:
        raise RuntimeError(f"indexing in a subprocess failed:\n{done.stderr}")
    return done.stdout.strip()
