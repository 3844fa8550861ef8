"""Remote embedding throughput: texts per second with 1, 4 and 16 requests in flight.

Run: .venv/bin/python benchmarks/bench_remote_embed.py [--delay 0.1] [--batch 16]
         [--rounds 2]

The test suite's OpenAI-compatible server (``tests/support/openai_server.py``) runs
in a subprocess on 127.0.0.1 and sleeps ``--delay`` seconds per request before
answering, so the figure measures how many requests we keep in flight, not the
server's model. Each measurement embeds the bundled benchmark's recursive:200:0
chunk texts (2,386 chunks, 1,943 distinct) through ``EmbeddingCache`` with an empty
cache and ``openai:bench?batch_size=B&concurrency=N`` (the real ``openai``
client); the settings alternate within each round, so they share the machine's
load. The ideal is ``N * batch / delay`` texts per second.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_chunkeval.chunkers import get_chunker
from pytest_chunkeval.data.benchmarks import load_benchmark
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.embedders.registry import get_embedder
from pytest_chunkeval.engine.chunking import Chunking

TESTS = Path(__file__).resolve().parent.parent / "tests"
SERVER = """
import sys, time
from support.openai_server import OpenAIServer
server = OpenAIServer(embedding_dim=384).start()
server.embedding_delay = float(sys.argv[1])
print(server.base_url, flush=True)
sys.stdin.read()  # until the benchmark closes our stdin
server.stop()
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.1)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    args = parser.parse_args()
    corpus, _ = load_benchmark("general")
    texts = Chunking(get_chunker("recursive:200:0"), corpus).texts()
    distinct = len(set(texts))
    env = {**os.environ, "PYTHONPATH": str(TESTS)}
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(args.delay)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert server.stdout is not None
    assert server.stdin is not None
    os.environ["OPENAI_BASE_URL"] = server.stdout.readline().strip()
    os.environ["OPENAI_API_KEY"] = "sk-bench"
    rates: dict[int, list[float]] = {n: [] for n in args.concurrency}
    try:
        with tempfile.TemporaryDirectory(prefix="bench-remote-") as tmp:
            for r in range(args.rounds):
                for n in args.concurrency:
                    spec = f"openai:bench?batch_size={args.batch}&concurrency={n}"
                    embedder = get_embedder(spec)
                    cache = EmbeddingCache(Path(tmp) / f"r{r}-n{n}")
                    t0 = time.perf_counter()
                    cache.embed(embedder, texts, progress=False)
                    rates[n].append(distinct / (time.perf_counter() - t0))
    finally:
        server.stdin.close()
        server.wait(timeout=30)
    requests = -(-distinct // args.batch)
    print(
        f"{distinct} distinct texts, {requests} requests of {args.batch}, server "
        f"sleeping {args.delay * 1e3:.0f} ms per request"
    )
    base = max(rates[args.concurrency[0]])
    for n, got in rates.items():
        ideal = n * args.batch / args.delay
        print(
            f"{n:3d} in flight: {max(got):8.0f} texts/s (best of {len(got)}; "
            f"{max(got) / base:.1f}x {args.concurrency[0]} in flight; "
            f"ideal {ideal:.0f})"
        )


if __name__ == "__main__":
    main()
