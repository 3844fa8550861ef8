"""Generate a query set for a corpus with any OpenAI-compatible chat model.

The method is the one of Chroma's report (see ``prompts.py``): each attempt shows the
model a random ~4000-character window of one document plus up to 50 earlier
questions about that document, and asks for a JSON answer with one question and the
sentences of the window that answer it. An answer is accepted only if every
reference is found in the document, exactly or up to whitespace (optionally: by a
fuzzy match above a high threshold, marked ``approximate``); its spans are stored.

Robustness:

- each accepted query is appended to the JSONL output at once (flushed and fsynced),
  so a crash or Ctrl-C loses nothing;
- running the same command again resumes: the header must match (corpus hash,
  model, prompt version, settings), the attempt counter continues, and with the
  same seed the windows are the same ones an uninterrupted run would have used
  (attempt ``k`` draws from an RNG seeded by ``(seed, k)``);
- malformed answers, refusals, non-verbatim references and duplicates are counted
  and skipped; 429 / 5xx are retried by the ``openai`` client with backoff; the API
  key is only handed to the client, never stored or printed.

See ``docs/generate.md``.
"""

from __future__ import annotations

import os
import secrets
import warnings
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from pytest_chunkeval.core.locate import preview
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import read_queries
from pytest_chunkeval.data.query_formats import (
    append_query,
    repair_query_log,
    write_header,
)
from pytest_chunkeval.data.query_types import Query, stable_query_id
from pytest_chunkeval.generation.answers import DUPLICATE, question_key, validate_answer
from pytest_chunkeval.generation.asking import Asker
from pytest_chunkeval.generation.chat import openai_client
from pytest_chunkeval.generation.harder import (
    check_leakage,
    check_references,
    pick_examples,
    style_digest,
)
from pytest_chunkeval.generation.prompts import PROMPT_VERSION, build_messages
from pytest_chunkeval.generation.settings import (
    ATTEMPTS_PER_QUERY,
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    GENERATOR_NAME,
    RESUME_KEYS,
    GenerationError,
    GenerationSettings,
    ResumeMismatch,
)
from pytest_chunkeval.generation.stopping import RejectionStreaks
from pytest_chunkeval.generation.windows import attempt_rng, choose_window
from pytest_chunkeval.llm.chat import Rejection
from pytest_chunkeval.util.progress import progress_bar

if TYPE_CHECKING:
    from pytest_chunkeval.generation.answers import Candidate
    from pytest_chunkeval.generation.windows import Window
    from pytest_chunkeval.llm.answers import AnswerCache


@dataclass
class GenerationStats:
    """Counts of one run (``existing`` came from an earlier run of the same file)."""

    target: int
    existing: int = 0
    accepted: int = 0
    attempts: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    approximate_excerpts: int = 0
    cached: int = 0
    """Answers the answer cache gave (no request sent)."""
    stopped: str = "not started"

    @property
    def total(self) -> int:
        """Queries in the file now."""
        return self.existing + self.accepted

    @property
    def complete(self) -> bool:
        return self.total >= self.target


def _package_version() -> str:
    try:
        from importlib.metadata import version

        return version("pytest-chunkeval")
    except Exception:  # not installed (a source checkout)
        return "unknown"


class QueryGenerator:
    """Fill a JSONL query set up to ``settings.n`` queries; see the module docstring.

    ``client`` is an ``openai.OpenAI`` (or compatible) object; ``echo`` receives
    one-line notes (resuming, skipped lines, why a run stopped). :attr:`stats` is
    live, so a caller can report it even if :meth:`run` is interrupted.
    """

    def __init__(
        self,
        corpus: Corpus,
        out: str | os.PathLike[str],
        settings: GenerationSettings,
        *,
        client: Any,
        overwrite: bool = False,
        progress: bool | None = None,
        echo: Callable[[str], None] | None = None,
        cache: AnswerCache | None = None,
    ) -> None:
        self.corpus = corpus
        self.out = Path(out)
        self.settings = settings
        self.client = client
        self.asker = Asker(
            client, settings.model, settings.temperature, settings.json_mode, cache
        )
        self.overwrite = overwrite
        self.progress = progress
        self.echo = echo or (lambda message: None)
        self.stats = GenerationStats(target=settings.n)
        self.seed: int | None = settings.seed
        self.last_rejection: Rejection | None = None

    def header(self, seed: int) -> dict[str, Any]:
        """The metadata written in the output's header line."""
        s = self.settings
        return {
            "generator": GENERATOR_NAME,
            "generator_version": _package_version(),
            "model": s.model,
            "prompt_version": PROMPT_VERSION,
            "seed": seed,
            "corpus_hash": self.corpus.content_hash,
            "corpus_name": self.corpus.name,
            "documents": len(self.corpus),
            "window_chars": s.window_chars,
            "max_previous": s.max_previous,
            "max_references": s.max_references,
            "approximate": s.approximate,
            "temperature": s.temperature,
            "max_leakage": s.max_leakage,
            "multi_excerpt": True if s.multi_excerpt else None,  # as in old files
            "style_examples": style_digest(s.style_examples),
        }

    def _check_resume(self, metadata: Mapping[str, Any]) -> int:
        """The seed to continue with, after checking the file fits this run."""
        if metadata.get("generator") != GENERATOR_NAME:
            raise ResumeMismatch(
                f"{self.out} exists but was not written by {GENERATOR_NAME}; give "
                "another --out, or --overwrite to replace it"
            )
        expected = self.header(0)
        diffs = [
            f"{key}: file has {metadata.get(key)!r}, this run {expected[key]!r}"
            for key in RESUME_KEYS
            if metadata.get(key) != expected[key]
        ]
        seed = metadata.get("seed")
        if not isinstance(seed, int) or isinstance(seed, bool):
            diffs.append(f"seed: file has {seed!r}, expected an integer")
        elif self.settings.seed is not None and seed != self.settings.seed:
            diffs.append(f"seed: file has {seed!r}, this run {self.settings.seed!r}")
        if diffs:
            hint = (
                "the corpus changed since the file was generated; "
                if any(d.startswith("corpus_hash") for d in diffs)
                else ""
            )
            raise ResumeMismatch(
                f"cannot resume {self.out}: it was generated with other settings "
                f"({'; '.join(diffs)}). {hint}Re-run with the file's settings, or "
                "write to another --out (or pass --overwrite to start again)"
            )
        return int(seed)  # type: ignore[arg-type]  # checked above

    def _open(self) -> list[Query]:
        """Existing queries of a resumed file ([] for a new one)."""
        if self.out.exists() and not self.overwrite:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                repair_query_log(self.out)  # a torn last append is cut, noted
                existing = read_queries(self.out)
            for w in caught:
                self.echo(f"note: {w.message}")
            self.seed = self._check_resume(existing.metadata)
            return list(existing)
        self.seed = (
            self.settings.seed if self.settings.seed is not None else _fresh_seed()
        )
        write_header(self.out, self.header(self.seed), overwrite=self.overwrite)
        return []

    def run(self) -> GenerationStats:
        """Generate until the file holds ``n`` queries or the attempt cap is hit."""
        s = self.settings
        existing = self._open()
        assert self.seed is not None
        stats = self.stats
        stats.existing = len(existing)
        ids = {q.id for q in existing}
        keys = {question_key(q.text) for q in existing}
        by_doc: dict[str, list[str]] = {}
        for q in existing:
            by_doc.setdefault(q.doc_id, []).append(q.text)
        attempt = 1 + max(
            (a for q in existing if isinstance(a := q.metadata.get("attempt"), int)),
            default=-1,
        )
        remaining = s.n - stats.existing
        if remaining <= 0:
            stats.stopped = "complete"
            self.echo(f"{self.out} already holds {stats.existing} queries (>= {s.n})")
            return stats
        if existing:
            self.echo(
                f"resuming {self.out}: {stats.existing} of {s.n} queries present, "
                f"continuing at attempt {attempt} (seed {self.seed})"
            )
        cap = s.max_attempts or ATTEMPTS_PER_QUERY * remaining
        bar = _progress_bar(s.n, stats.existing, self.progress)
        streaks = RejectionStreaks(s.model, s.max_unusable)
        stats.stopped = "interrupted"
        try:
            while not stats.complete:
                if stats.attempts >= cap:
                    stats.stopped = "max attempts"
                    self.echo(
                        f"stopped after {stats.attempts} attempts (the cap; raise it "
                        "with --max-attempts) with "
                        f"{stats.total} of {s.n} queries"
                    )
                    break
                result = self._attempt(attempt, by_doc, keys)
                attempt += 1
                stats.attempts += 1
                if isinstance(result, Rejection):
                    stats.rejected[result.reason] += 1
                    self.last_rejection = result
                    stop = streaks.rejected(result, f"{stats.total} of {s.n}")
                    if stop is not None:
                        stats.stopped = stop[0]
                        raise GenerationError(stop[1])
                else:
                    streaks.accepted()
                    self._keep(
                        self._to_query(result, ids, attempt - 1), ids, keys, by_doc
                    )
                    if bar is not None:
                        bar.update(1)
                if bar is not None:
                    bar.set_postfix_str(
                        f"attempted {stats.attempts}, rejected "
                        f"{sum(stats.rejected.values())}",
                        refresh=False,
                    )
            else:
                stats.stopped = "complete"
        finally:
            if bar is not None:
                bar.close()
        return stats

    def _keep(
        self,
        query: Query,
        ids: set[str],
        keys: set[str],
        by_doc: dict[str, list[str]],
    ) -> None:
        """Append an accepted query to the file (its warnings echoed) and count it."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            append_query(self.out, query)
        for w in caught:
            self.echo(f"note: {w.message}")
        ids.add(query.id)
        keys.add(question_key(query.text))
        by_doc.setdefault(query.doc_id, []).append(query.text)
        self.stats.accepted += 1
        self.stats.approximate_excerpts += sum(e.approximate for e in query.excerpts)

    def _attempt(
        self, attempt: int, by_doc: Mapping[str, list[str]], keys: set[str]
    ) -> _Accepted | Rejection:
        s = self.settings
        assert self.seed is not None
        rng = attempt_rng(self.seed, attempt)
        window = choose_window(rng, self.corpus, s.window_chars)
        previous = by_doc.get(window.doc_id, [])
        if len(previous) > s.max_previous:
            previous = rng.sample(previous, s.max_previous)
        text = self.corpus[window.doc_id].text
        messages = build_messages(
            window.doc_id,
            text[window.start : window.end],
            previous,
            max_references=s.max_references,
            multi_excerpt=s.multi_excerpt,
            style_examples=pick_examples(rng, s.style_examples),
        )
        cached = self.asker.cached
        reply = self.asker.ask(self.seed, attempt, messages)
        if self.asker.cached > cached:
            self.stats.cached += 1
        else:
            self.stats.requests += 1
        self.stats.prompt_tokens += reply.prompt_tokens
        self.stats.completion_tokens += reply.completion_tokens
        if reply.rejection is not None:
            return reply.rejection
        assert reply.content is not None
        checked = validate_answer(
            reply.content,
            self.corpus,
            window,
            max_references=s.max_references,
            approximate=s.approximate,
        )
        if isinstance(checked, Rejection):
            return checked
        harder = check_references(len(checked.excerpts), s.multi_excerpt) or (
            check_leakage(
                checked.question, [e.text for e in checked.excerpts], s.max_leakage
            )
        )
        if harder is not None:
            return harder
        if question_key(checked.question) in keys:
            return Rejection(DUPLICATE, preview(checked.question))
        return _Accepted(checked, window)

    def _to_query(self, accepted: _Accepted, ids: set[str], attempt: int) -> Query:
        window, candidate = accepted.window, accepted.candidate
        path = PurePosixPath(window.doc_id)
        prefix = str(path.with_suffix("")) if path.suffix else window.doc_id
        base = stable_query_id(prefix, candidate.question)
        qid, n = base, 1
        while qid in ids:  # a hash collision of two different questions
            n += 1
            qid = f"{base}-{n}"
        metadata: dict[str, Any] = {
            "window": [window.start, window.end],
            "attempt": attempt,
        }
        if candidate.approximate:
            metadata["approximate_references"] = list(candidate.approximate)
        return Query(
            qid, candidate.question, candidate.excerpts, window.doc_id, metadata
        )


@dataclass(frozen=True)
class _Accepted:
    candidate: Candidate
    window: Window


def _fresh_seed() -> int:
    return secrets.randbelow(2**32)


def _progress_bar(total: int, initial: int, progress: bool | None) -> Any:
    return progress_bar(
        total,
        progress=progress,
        initial=initial,
        desc="accepted",
        unit="q",
        dynamic_ncols=True,
    )


def generate_queries(
    corpus: Corpus,
    out: str | os.PathLike[str],
    *,
    model: str,
    n: int,
    seed: int | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    client: Any = None,
    max_retries: int = DEFAULT_MAX_RETRIES,
    timeout: float = DEFAULT_TIMEOUT,
    overwrite: bool = False,
    progress: bool | None = None,
    echo: Callable[[str], None] | None = None,
    cache: AnswerCache | None = None,
    **options: Any,
) -> GenerationStats:
    """Generate (or resume) a query set of ``n`` queries for ``corpus`` into ``out``.

    ``options`` are further :class:`GenerationSettings` fields (``window_chars``,
    ``max_attempts``, ``approximate``, ``temperature``, ``json_mode``,
    ``max_leakage``, ``multi_excerpt``, ``style_examples``...). ``cache``: an
    :class:`~pytest_chunkeval.llm.answers.AnswerCache` for the answers. Without
    ``client``, one is built by :func:`openai_client` from ``base_url`` /
    ``api_key`` (or ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``).
    """
    settings = GenerationSettings(model=model, n=n, seed=seed, **options)
    if client is None:
        client = openai_client(
            base_url=base_url, api_key=api_key, max_retries=max_retries, timeout=timeout
        )
    generator = QueryGenerator(
        corpus,
        out,
        settings,
        client=client,
        overwrite=overwrite,
        progress=progress,
        echo=echo,
        cache=cache,
    )
    return generator.run()
