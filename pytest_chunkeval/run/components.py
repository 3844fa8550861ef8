"""The components a session resolves from spec strings: chunkers, embedders,
stores and evaluation caches, one object per canonical spec per session, after the
``pytest_chunkeval_register_*`` hooks had their turn."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_chunkeval.config.options import (
    DEFAULT_STORE,
    DEFAULT_UNIT,
    Settings,
    SettingsError,
)
from pytest_chunkeval.errors import ChunkevalError, ConfigError

if TYPE_CHECKING:
    from pytest_chunkeval.chunkers import Chunker
    from pytest_chunkeval.config.registry import Registry
    from pytest_chunkeval.embedders.base import Embedder
    from pytest_chunkeval.engine.cache_dir import CacheDir
    from pytest_chunkeval.stores import AnyStore

Register = Callable[[str, "Registry[Any]"], None]


class Components:
    """What spec strings name in one session.

    ``register(kind, registry)`` is called once per kind (``chunkers``,
    ``embedders``, ``stores``, ``tokenizers``, ``judges``) before the first spec is
    resolved; the plugin passes a function calling the ``pytest_chunkeval_register_*``
    hooks.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        register: Register | None = None,
        distributed: bool = False,
    ) -> None:
        self.settings = settings
        self.distributed = distributed
        self._register = register
        self._registered = False
        self._restore: list[Callable[[], None]] = []
        self._chunkers: dict[str, Chunker] = {}
        self._chunker_specs: dict[int, str] = {}
        self._stores: dict[str, AnyStore] = {}
        self._caches: dict[str, CacheDir] = {}

    def ensure_registered(self) -> None:
        """Let hooks register names (once), before any spec is resolved."""
        if self._registered:
            return
        self._registered = True
        if self._register is None:
            return
        from pytest_chunkeval.chunkers import CHUNKERS
        from pytest_chunkeval.embedders.registry import EMBEDDERS
        from pytest_chunkeval.judging.specs import JUDGES
        from pytest_chunkeval.relationships.specs import EXTRACTORS
        from pytest_chunkeval.stores import STORES
        from pytest_chunkeval.tokenizers.base import TOKENIZERS

        registries: dict[str, Registry[Any]] = {
            "chunkers": CHUNKERS,
            "embedders": EMBEDDERS,
            "stores": STORES,
            "tokenizers": TOKENIZERS,
            "judges": JUDGES,
            "extractors": EXTRACTORS,
        }
        for kind, registry in registries.items():
            self._restore.append(registry.snapshot())
            self._register(kind, registry)

    def close(self) -> None:
        """Take back the names the hooks registered: the registries are the
        process's, and a later session in it (pytester's in-process runs, an IDE
        runner) must not see this one's; and close the stores it built (a
        server store drops the tables it created: docs/stores.md)."""
        while self._restore:
            self._restore.pop()()
        stores, self._stores = list(self._stores.values()), {}
        for store in stores:
            close = getattr(store, "close", None)
            if callable(close):
                close()

    def validate(self) -> None:
        """Check that every configured name exists; :class:`SettingsError` if not.

        Cheap when nothing is configured (nothing is imported then)."""
        s = self.settings
        if not s.configured:
            return
        self.ensure_registered()
        checks: list[tuple[str, str, Callable[[str], object]]] = [
            ("chunkeval_chunkers", spec, self.chunker) for spec in s.chunkers
        ]
        if s.embedder:
            checks.append(("chunkeval_embedder", s.embedder, _embedder))
        if s.store:
            checks.append(("chunkeval_store", s.store, self.store))
        if s.tokenizer and (s.unit or DEFAULT_UNIT) == "token":
            checks.append(("chunkeval_tokenizer", s.tokenizer, _tokenizer))
        if s.benchmark:
            checks.append(("chunkeval_benchmark", s.benchmark, _check_benchmark))
        if s.judge:
            checks.append(("chunkeval_judge", s.judge, resolve_judge))
        if s.rerank:
            checks.append(("chunkeval_rerank", s.rerank, _reranker))
        for where, spec, make in checks:
            try:
                make(spec)
            except ChunkevalError as exc:
                raise SettingsError(f"{where}: {exc}") from None

    def chunker(self, spec: object) -> Chunker:
        """The chunker a spec string names (one object per spec per session); any
        other object is adapted (a function ``str -> list[str]``, a splitter)."""
        self.ensure_registered()
        from pytest_chunkeval.chunkers import get_chunker

        if not isinstance(spec, str):
            return get_chunker(spec)
        label = self.chunker_label(spec)
        if label not in self._chunkers:
            chunker = get_chunker(label)
            self._chunkers[label] = chunker
            self._chunker_specs[id(chunker)] = label
        return self._chunkers[label]

    def chunker_label(self, spec: str) -> str:
        """The canonical form of a chunker spec (``recursive:200`` ->
        ``recursive:200:0``): one chunker, test id and baseline per component."""
        self.ensure_registered()
        from pytest_chunkeval.chunkers import CHUNKERS

        return CHUNKERS.label(spec)

    def chunker_specs(self, test: str) -> list[str]:
        """What ``chunkeval_chunker`` is parametrized over, canonical and without
        duplicates (an error if nothing is configured)."""
        if not self.settings.chunkers:
            raise ConfigError(
                f"{test} uses chunkeval_chunker but no chunker is configured: set "
                "chunkeval_chunkers (e.g. chunkeval_chunkers = "
                '["recursive:200:0", "fixed:400:0"] in [tool.pytest.ini_options]) '
                "or pass --chunkeval-chunkers recursive:200:0"
            )
        labels = [self.chunker_label(spec) for spec in self.settings.chunkers]
        return list(dict.fromkeys(labels))

    def embedder(self, spec: str | None = None) -> Embedder:
        """The embedder a spec names (default: all-MiniLM-L6-v2); one per spec."""
        self.ensure_registered()
        from pytest_chunkeval.embedders.registry import get_embedder

        return get_embedder(spec)

    def store(self, spec: str = DEFAULT_STORE) -> AnyStore:
        """The store a spec names (one client per spec per session)."""
        if spec not in self._stores:
            self.ensure_registered()
            from pytest_chunkeval.stores import get_store, xdist_problem

            store = get_store(spec)
            # what the store declares (docs/stores.md), checked before it is used
            problem = xdist_problem(store) if self.distributed else None
            if problem:
                raise ConfigError(f"{spec}: {problem}")
            self._stores[spec] = store
        return self._stores[spec]

    def cache(self, directory: str) -> CacheDir:
        """The evaluation cache in ``directory``, checked at its first use (before
        anything is embedded): one that cannot be created or used is an error
        naming the setting; a read-only one is read and never written. No
        directory (settings made in code): the default one, never the current
        directory."""
        if directory not in self._caches:
            from pytest_chunkeval.embedders.cache import default_cache_dir
            from pytest_chunkeval.engine.cache_dir import open_cache

            root = Path(self.settings.rootdir or ".")
            self._caches[directory] = open_cache(
                directory or str(default_cache_dir(root))
            )
        return self._caches[directory]

    def spec_of(self, chunker: object) -> str | None:
        """The spec a chunker object was made from here (None: not made here)."""
        return self._chunker_specs.get(id(chunker))


def _embedder(spec: str) -> object:
    from pytest_chunkeval.embedders.registry import get_embedder

    return get_embedder(spec)


def resolve_judge(spec: str) -> Any:
    from pytest_chunkeval.judging.specs import get_judge

    return get_judge(spec)


def _reranker(spec: str) -> object:
    from pytest_chunkeval.stores.rerank import get_reranker

    return get_reranker(spec)  # names and files checked; no model is loaded


def _tokenizer(spec: str) -> object:
    from pytest_chunkeval.tokenizers.base import get_tokenizer

    return get_tokenizer(spec)


def _check_benchmark(name: str) -> None:
    from pytest_chunkeval.data.benchmarks import benchmark_names

    names = benchmark_names()
    if name not in names:
        raise ConfigError(
            f"unknown benchmark {name!r}; available: {', '.join(names) or '(none)'}"
        )
