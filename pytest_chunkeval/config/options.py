"""Every setting of the pytest plugin in one table (its values are parsed by the pure
functions of :mod:`pytest_chunkeval.config.values`).

Each :class:`Option` is both an ini key (``chunkeval_k`` in
``[tool.pytest.ini_options]``) and a command-line flag (``--chunkeval-k``) that
overrides it. ``plugin.py`` registers the table with pytest; a docs generator can
render it. Parsing raises :class:`~pytest_chunkeval.errors.ConfigError` with a message
that says what is allowed; for flags, the table hands it to argparse as the usage
error pytest reports at startup (``option.argparse_type``).

Names such as ``recursive:200:0`` are only checked for form here; whether a chunker,
embedder or store of that name exists is checked once the registries are loaded
(``session.ChunkevalSession.validate``), because loading them costs numpy.

This module imports neither pytest nor numpy.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_chunkeval.config.defaults import CACHE_DIR_ENV
from pytest_chunkeval.config.defaults import DEFAULT_EMBEDDER as DEFAULT_EMBEDDER
from pytest_chunkeval.config.defaults import DEFAULT_K as DEFAULT_K
from pytest_chunkeval.config.defaults import DEFAULT_STORE as DEFAULT_STORE
from pytest_chunkeval.config.defaults import DEFAULT_UNIT as DEFAULT_UNIT
from pytest_chunkeval.config.defaults import K as K
from pytest_chunkeval.config.gate_options import GATE_OPTIONS
from pytest_chunkeval.config.option import IniType as IniType
from pytest_chunkeval.config.option import MarkerValue
from pytest_chunkeval.config.option import Option as Option
from pytest_chunkeval.config.option import Where as Where
from pytest_chunkeval.config.quality_options import QUALITY_OPTIONS
from pytest_chunkeval.config.rerank_option import RERANK_OPTION
from pytest_chunkeval.config.scoring import COPIES_OPTION
from pytest_chunkeval.config.values import (
    parse_bool,
    parse_budget,
    parse_chunker_list,
    parse_k,
    parse_locate,
    parse_name,
    parse_path,
    parse_unit,
    spec_parser,
)
from pytest_chunkeval.errors import ConfigError


def add_options(
    addoption: Callable[..., object],
    names: Iterable[str] | None = None,
    *,
    where: Where = "pytest",
    changes: Mapping[str, Mapping[str, Any]] | None = None,
) -> None:
    """Register options of the table with ``addoption`` (pytest's
    ``group.addoption`` or argparse's ``add_argument``), as pytest-benchmark shares
    its ``add_*_options`` between plugin and CLI: same names, validation, help and
    defaults. ``changes`` adapts a flag to one command: fields of :class:`Option`
    (``multiple=True`` for a sweep, ``default_text`` for a command's own default)
    or ``addoption`` arguments (``nargs="+"``); the parser and the dest stay the
    table's."""
    chosen = OPTIONS if names is None else [OPTIONS_BY_NAME[n] for n in names]
    fields = {f.name for f in dataclasses.fields(Option)}
    for option in chosen:
        change = dict((changes or {}).get(option.name, {}))
        own = {key: change.pop(key) for key in list(change) if key in fields}
        adapted = dataclasses.replace(option, **own) if own else option
        kwargs = {**adapted.argparse_kwargs(where), **change}
        addoption(option.flag if where == "pytest" else option.cli_flag, **kwargs)


OPTIONS: tuple[Option, ...] = (
    Option(
        "corpus",
        "Corpus files, directories or glob patterns, {relative}.",
        parse_path,
        ini_type="args",
        metavar="PATH",
        multiple=True,
        marker=MarkerValue(
            (str, os.PathLike), "a path, a glob or a list of them", many=True
        ),
    ),
    Option(
        "queries",
        "Query set file (.jsonl, .json or the reference questions_df.csv), {relative}.",
        parse_path,
        metavar="FILE",
        marker=MarkerValue((str, os.PathLike), "a path"),
    ),
    Option(
        "benchmark",
        "Use a bundled benchmark (corpus and queries), e.g. 'general'.",
        parse_name,
        metavar="NAME",
        marker=MarkerValue((str,), "a bundled benchmark name such as 'general'"),
    ),
    Option(
        "embedder",
        "Embedder spec, e.g. 'sentence-transformers:all-MiniLM-L6-v2' or "
        "'openai:text-embedding-3-large'.",
        spec_parser("embedder"),
        metavar="SPEC",
        default_text=DEFAULT_EMBEDDER,
        default=DEFAULT_EMBEDDER,
        marker=MarkerValue((str,), "a spec string naming the embedder"),
    ),
    Option(
        "store",
        "Store spec: 'chroma', 'chroma:PATH', 'chroma+http://HOST:PORT', "
        "'exact', 'bm25', 'hybrid', 'faiss', 'pgvector', 'lancedb', 'qdrant', "
        "each with its settings (docs/stores.md).",
        spec_parser("store"),
        metavar="SPEC",
        default_text=DEFAULT_STORE,
        default=DEFAULT_STORE,
        marker=MarkerValue((str,), "a spec string naming the store"),
    ),
    Option(
        "k",
        "Chunks retrieved per query: a positive integer, or 'min'.",
        parse_k,
        metavar="K",
        default_text=str(DEFAULT_K),
        default=DEFAULT_K,
        marker=MarkerValue((int, str), "a positive integer or 'min'"),
    ),
    Option(
        "budget",
        "Token budget per query (in the metric unit): score the ranks whose summed "
        "length fits it, whole chunks only, so that chunkers of different sizes "
        "compare at equal context.",
        parse_budget,
        metavar="B",
        default_text="none (k ranks are scored)",
        marker=MarkerValue((int, str), "a positive whole number of tokens"),
    ),
    Option(
        "unit",
        "Unit the metrics count: 'token' or 'char'.",
        parse_unit,
        metavar="UNIT",
        default_text=DEFAULT_UNIT,
        default=DEFAULT_UNIT,
        marker=MarkerValue((str,), "'token' or 'char'"),
    ),
    Option(
        "tokenizer",
        "Tokenizer for unit=token: a tiktoken encoding or 'hf:MODEL'.",
        spec_parser("tokenizer"),
        metavar="SPEC",
        default_text="cl100k_base",
        marker=MarkerValue((str,), "a spec string naming the tokenizer"),
    ),
    Option(
        "locate",
        "How text a retriever returns is placed in the corpus: 'exact' (verbatim, "
        "else with whitespace ignored) or 'normalized' (also ignoring case, "
        "punctuation and Unicode compatibility forms, for retrievers that clean "
        "text). Where a text is found more than once, chunkeval_copies decides.",
        parse_locate,
        metavar="MODE",
        default_text="exact",
        default="exact",
        marker=MarkerValue((str,), "'exact' or 'normalized'"),
    ),
    COPIES_OPTION,
    RERANK_OPTION,
    Option(
        "cache_dir",
        "Embedding cache directory, {relative} ($"
        + CACHE_DIR_ENV
        + " overrides the default and the ini value; the flag overrides both).",
        parse_path,
        metavar="DIR",
        default_text="<rootdir>/.chunkeval/cache",
    ),
    Option(
        "chunkers",
        "Chunker specs to evaluate, e.g. 'recursive:200:0 fixed:400:200' (the "
        "flag takes commas too); in pytest the chunkeval_chunker fixture is "
        "parametrized over them.",
        parse_chunker_list,
        ini_type="args",
        metavar="SPECS",
        multiple=True,
        cli_name="chunker",
    ),
    # -- judged context relevance (docs/judged.md)
    Option(
        "judge",
        "Judge of context relevance for questions without excerpts: 'llm:MODEL' "
        "or a name registered by pytest_chunkeval_register_judges.",
        spec_parser("judge"),
        metavar="SPEC",
        default_text="none (judged metrics are not measured)",
        marker=MarkerValue((str,), "a spec string naming the judge"),
    ),
    Option(
        "judgments",
        "Committed judgments file, relative to rootdir: read before judging, "
        "written with --chunkeval-update.",
        parse_path,
        metavar="FILE",
        default_text="__chunkeval__/judgments.json",
    ),
    *GATE_OPTIONS,
    # -- history and reports
    Option(
        "history",
        "Append one JSON line per evaluated configuration (with git commit, "
        "branch and metric means) to this history file, {relative}.",
        parse_path,
        metavar="FILE",
    ),
    Option(
        "json",
        "Write every result of the session, per-query detail included, to this JSON "
        "file, {relative}.",
        parse_path,
        ini_type=None,
        metavar="PATH",
    ),
    Option(
        "md",
        "Write a Markdown table of the session's results to this file, {relative} "
        "(also appended to $GITHUB_STEP_SUMMARY when that is set).",
        parse_path,
        ini_type=None,
        metavar="PATH",
    ),
    Option(
        "html",
        "Write a self-contained HTML report (table and plots; with the history "
        "file, metrics over commits) to this file, {relative}.",
        parse_path,
        ini_type=None,
        metavar="PATH",
    ),
    # -- query-set tools (docs/query-quality.md)
    *QUALITY_OPTIONS,
)

OPTIONS_BY_NAME: dict[str, Option] = {o.name: o for o in OPTIONS}


@dataclass(frozen=True)
class Settings:
    """The plugin's settings after ini, environment and flags are combined.

    Plain, serializable values only; ``None`` means "not set" (the engine default).
    """

    rootdir: str
    corpus: tuple[str, ...] = ()
    queries: str | None = None
    benchmark: str | None = None
    embedder: str | None = None
    store: str | None = None
    k: K | None = None
    budget: int | None = None
    unit: str | None = None
    tokenizer: str | None = None
    locate: str | None = None
    copies: str | None = None
    rerank: str | None = None
    cache_dir: str = ""
    chunkers: tuple[str, ...] = field(default=())
    judge: str | None = None
    judgments: str = ""
    update: bool = False
    baseline_dir: str | None = None
    tolerance: str | None = None
    gate_mode: str | None = None
    gate_confidence: float | None = None
    max_left_out: float | None = None
    gate_by: str | None = None
    fail_unused: bool = False
    repeats: int | None = None
    # Output files, as absolute paths (resolved against rootdir).
    history: str | None = None
    json: str | None = None
    md: str | None = None
    html: str | None = None
    beir: str | None = None
    beir_split: str | None = None
    inspect: bool = False
    trec_run: str | None = None
    qrels: str | None = None

    @property
    def configured(self) -> bool:
        """True when anything names a component or a dataset (worth validating)."""
        return any(getattr(self, name) for name in _COMPONENT_FIELDS)

    @property
    def session_end_work(self) -> bool:
        """True when the end of the session has something to do even if no test
        used the plugin: update or police baselines, write history or reports."""
        return bool(
            self.update
            or self.fail_unused
            or self.history
            or self.json
            or self.md
            or self.html
            or self.trec_run
            or self.qrels
        )


_COMPONENT_FIELDS = (
    "corpus",
    "queries",
    "benchmark",
    "embedder",
    "store",
    "k",
    "budget",
    "unit",
    "tokenizer",
    "rerank",
    "chunkers",
    "judge",
    "beir",
)
# Output files: resolved against rootdir when the settings are read.
_OUTPUT_PATHS = ("history", "json", "md", "html", "trec_run", "qrels")


class SettingsError(ConfigError):
    """A setting's value is invalid; the message names the ini key or flag."""


def _parse_ini(option: Option, raw: object) -> Any:
    if option.ini_type == "bool":
        return parse_bool(raw if isinstance(raw, bool) else str(raw))
    if option.ini_type == "args":
        items = list(raw) if isinstance(raw, (list, tuple)) else str(raw).split()
        if option.name == "chunkers":
            return parse_chunker_list(items)
        return tuple(option.parse(str(i)) for i in items)
    return option.parse(str(raw))


def _flag_value(option: Option, value: Any) -> Any:
    """Combine a repeated flag's already-parsed values."""
    if not option.multiple:
        return value
    merged: list[str] = []
    for item in value:
        for part in item if isinstance(item, tuple) else (item,):
            if part not in merged:
                merged.append(part)
    return tuple(merged)


def resolve_settings(
    rootdir: str | os.PathLike[str],
    ini: Mapping[str, object],
    flags: Mapping[str, object],
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Combine ini values, flags (already parsed by argparse) and the environment.

    ``ini`` maps ini keys to what pytest read (empty string or list when unset);
    ``flags`` maps option dests to values (``None`` when not given). Raises
    :class:`SettingsError` naming the ini key whose value is invalid.
    """
    environ = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    from_flag: set[str] = set()
    for option in OPTIONS:
        flag = flags.get(option.dest)
        if flag is not None and flag != []:
            values[option.name] = _flag_value(option, flag)
            from_flag.add(option.name)
            continue
        if option.ini is None:
            continue
        raw = ini.get(option.ini)
        where = option.ini
        if option.name == "cache_dir" and environ.get(CACHE_DIR_ENV):
            raw, where = environ[CACHE_DIR_ENV], f"${CACHE_DIR_ENV}"
        if raw in (None, "", [], ()):
            continue
        try:
            values[option.name] = _parse_ini(option, raw)
        except ConfigError as exc:
            raise SettingsError(f"{where}: {exc}") from None
    _one_dataset(values, from_flag)
    root = Path(rootdir)
    cache = values.pop("cache_dir", None)
    cache_dir = (
        root / Path(cache).expanduser() if cache else root / ".chunkeval" / "cache"
    )
    for name in _OUTPUT_PATHS:
        if values.get(name):
            values[name] = str(root / Path(values[name]).expanduser())
    judgments = values.pop("judgments", None) or "__chunkeval__/judgments.json"
    values["judgments"] = str(root / Path(judgments).expanduser())
    return Settings(rootdir=str(root), cache_dir=str(cache_dir), **values)


def _one_dataset(values: dict[str, Any], from_flag: set[str]) -> None:
    """A flag naming a dataset (a corpus, a benchmark, a BEIR folder) replaces the
    ini's and vice versa; two at the same level are an error. (``queries`` may go
    with a benchmark or a BEIR folder: its corpus, your questions.)"""
    given = [name for name in _DATASETS if values.get(name)]
    if len(given) < 2:
        return
    flagged = [name for name in given if name in from_flag]
    if len(flagged) == 1:
        for name in given:
            if name != flagged[0]:
                values.pop(name)
        if flagged[0] != "corpus" and "queries" not in from_flag:
            values.pop("queries", None)  # they were for the ini corpus
        return
    names = flagged or given
    how = " and ".join(
        f"--chunkeval-{name}" if flagged else f"chunkeval_{name}" for name in names
    )
    raise SettingsError(
        f"{how} are exclusive: a benchmark or a BEIR folder brings its own corpus "
        "and queries; set one of them"
    )


_DATASETS = ("benchmark", "corpus", "beir")
