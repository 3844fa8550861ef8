"""``chunkeval cache info`` and ``chunkeval cache clear``: the evaluation cache
(vectors, search results, token bounds, chunkings, evaluation results, LLM
answers)."""

from __future__ import annotations

import argparse
from typing import Any

from pytest_chunkeval.cli.common import add_command, settings
from pytest_chunkeval.config.options import add_options
from pytest_chunkeval.errors import ConfigError, FileAccessError, file_error


def register(subparsers: Any) -> None:
    """Add ``cache`` (with ``info`` and ``clear``) to ``chunkeval``'s subcommands."""
    p = add_command(
        subparsers,
        "cache",
        help="show or clear the caches (vectors, searches, tokens, chunkings, "
        "results, LLM answers)",
        description="The cache holds one vector per text and embedder, the stored "
        "search results that depend on them, each document's token bounds (per "
        "tokenizer) and chunks (per chunker), whole evaluation results, and the "
        "answers of every LLM role; "
        "by default under <rootdir>/.chunkeval/cache, shared with the project's "
        "pytest runs.",
        examples="""
        chunkeval cache info
        chunkeval cache clear --identity hashing:256@1
        chunkeval cache clear --role judge
        chunkeval cache info --cache-dir /tmp/chunkeval-cache
        """,
    )
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    info = add_command(
        actions,
        "info",
        help="list the cached embedders, search results, token bounds, chunkings, "
        "evaluation results and LLM answers",
        description="List each cached embedder identity with its number of "
        "vectors, dimension, size on disk and corrupt files set aside; the "
        "number of stored search results; the documents whose token bounds and "
        "chunkings are stored; the stored evaluation results; and the cached LLM "
        "answers per role and model.",
        examples="""
        chunkeval cache info
        CHUNKEVAL_CACHE_DIR=/tmp/chunkeval-cache chunkeval cache info
        """,
    )
    add_options(info.add_argument, ["cache_dir"], where="cli")
    info.set_defaults(func=run_info)
    clear = add_command(
        actions,
        "clear",
        help="delete cached vectors (all, or one embedder's) or LLM answers",
        description="Delete the cached vectors of every embedder, or of one "
        "(--identity), and every stored search and evaluation result (they "
        "depend on the vectors); without --identity, the stored token bounds and "
        "chunkings too. With --role: delete the cached answers of one LLM role instead "
        "(of one model or callable with --identity).",
        examples="""
        chunkeval cache clear
        chunkeval cache clear --identity hashing:256@1
        chunkeval cache clear --role judge --identity gpt-4o-mini
        """,
    )
    add_options(clear.add_argument, ["cache_dir"], where="cli")
    clear.add_argument(
        "--identity",
        default=None,
        metavar="IDENTITY",
        help="clear this embedder identity only, as `chunkeval cache info` lists "
        "it; with --role: one model or callable (default: every one)",
    )
    clear.add_argument(
        "--role",
        default=None,
        metavar="ROLE",
        help="clear the cached LLM answers of one role (chunker, generate, judge, "
        "relations, or another role `chunkeval cache info` lists) instead of "
        "vectors (default: vectors)",
    )
    clear.set_defaults(func=run_clear)


def run_clear(args: argparse.Namespace) -> int:
    """Run ``chunkeval cache clear``."""
    from pytest_chunkeval.embedders.base import identity_matches
    from pytest_chunkeval.engine.cache_dir import CacheDir

    cache = CacheDir(settings(args).cache_dir)
    vectors = cache.embeddings
    documents = ""
    try:
        if args.role is not None:
            answers = cache.answers()
            check_answers_filter(answers, args.role, args.identity)
            removed = answers.clear(args.role, args.identity)
            print(f"removed {removed} cached {args.role} answers from {answers.root}")
            return 0
        if args.identity is not None and not any(
            identity_matches(cached, args.identity) for cached in vectors.info()
        ):
            raise ConfigError(
                f"--identity {args.identity!r} matches no cached embedder in "
                f"{cache.directory}; {_listed(vectors.info())}"
            )
        removed = vectors.clear(args.identity)
        # retrieval results depend on the vectors: they go with them
        dropped = cache.search.clear()
        results = cache.store("results").clear()
        if args.identity is None:  # everything: the documents' tokens and chunks
            tokens = cache.store("tokens").clear()
            chunkings = cache.store("chunkings").clear()
            documents = f", {tokens} token bounds and {chunkings} chunkings"
    except OSError as exc:  # a read-only mount, a file in the way
        raise file_error(exc, "cannot clear the cache in", cache.directory) from None
    print(
        f"removed {removed} cache entries, {dropped} stored search results, "
        f"{results} stored evaluation results{documents} from {cache.directory}"
    )
    return 0


def check_answers_filter(answers: Any, role: str, identity: str | None) -> None:
    """Refuse a ``--role`` that is no role (neither one of the package's LLM
    roles nor one cached) and an ``--identity`` the role has no answers of: a
    typo would otherwise clear nothing and say "removed 0"."""
    from pytest_chunkeval.llm.answers import LLM_ROLES

    info = answers.info()
    roles = sorted(set(LLM_ROLES) | set(info))
    if role not in roles:
        raise ConfigError(f"unknown --role {role!r}; valid roles: {', '.join(roles)}")
    if identity is None:
        return
    identities = info[role]["identities"] if role in info else {}
    if identity not in identities:
        raise ConfigError(
            f"--identity {identity!r} matches no cached {role} answers in "
            f"{answers.root}; {_listed(identities)}"
        )


def _listed(identities: Any) -> str:
    """What ``cache info`` lists, for a message about an unmatched identity."""
    if not identities:
        return "nothing of that kind is cached"
    return "`chunkeval cache info` lists: " + ", ".join(sorted(identities))


def run_info(args: argparse.Namespace) -> int:
    """Run ``chunkeval cache info``."""
    from pytest_chunkeval.engine.cache_dir import CacheDir

    cache = CacheDir(settings(args).cache_dir)
    if cache.directory.exists() and not cache.directory.is_dir():
        raise FileAccessError(f"the cache directory {cache.directory} is a file")
    searches = cache.search
    info = cache.embeddings.info()
    print(f"embedding cache at {cache.directory}")
    if not info:
        print("  (empty)")
    print(f"  stored search results: {len(searches.entries())}")
    _print_documents(cache)
    for identity, entry in sorted(info.items()):
        corrupt = f", {entry['corrupt']} corrupt set aside" if entry["corrupt"] else ""
        print(
            f"  {identity}: {entry['entries']} vectors (dim {entry['dimension']}), "
            f"{entry['bytes'] / 1e6:.1f} MB in {entry['files']} file(s){corrupt}"
        )
    _print_answers(cache.answers())
    return 0


def _print_documents(cache: Any) -> None:
    """The stored token bounds, chunkings (documents) and evaluation results of
    a ``CacheDir``: entries, size, set aside."""
    for label, name, unit in (
        ("token bounds", "tokens", "documents"),
        ("chunkings", "chunkings", "documents"),
        ("evaluation results", "results", "evaluations"),
    ):
        kind = cache.store(name)
        count, size, aside = kind.size()
        note = f", {aside} corrupt set aside" if aside else ""
        print(f"  {label}: {count} {unit}, {size / 1e6:.1f} MB{note}")


def _print_answers(answers: Any) -> None:
    """The LLM answer cache, per role and answerer."""
    info = answers.info()
    print(f"LLM answers at {answers.root}")
    if not info:
        print("  (none)")
    if aside := answers.set_aside():
        print(f"  {aside} corrupt set aside")
    for role, entry in sorted(info.items()):
        print(f"  {role}: {entry['entries']} answers, {entry['bytes'] / 1e6:.1f} MB")
        for identity, count in sorted(entry["identities"].items()):
            print(f"    {identity}: {count}")
