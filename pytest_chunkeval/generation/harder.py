"""Harder, more realistic generated questions (``docs/generate.md``):

- ``max_leakage``: a question whose lexical leakage (the share of its content
  words found in its excerpts, :mod:`pytest_chunkeval.quality.leakage`) is above
  it is rejected (reason :data:`LEAKY`), counted with the other rejections;
- ``multi_excerpt``: the prompt asks for a question that needs two or more
  passages of the window, and an answer with fewer references is rejected
  (:data:`TOO_FEW_REFERENCES`);
- style examples: a few real users' questions whose style (not content) the
  prompt asks the model to imitate; at most :data:`MAX_STYLE_EXAMPLES` per
  prompt, drawn by the attempt's own random generator (a resumed run draws the
  same ones).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from collections.abc import Sequence
from pathlib import Path

from pytest_chunkeval.core.locate import preview
from pytest_chunkeval.generation.answers import LEAKY, TOO_FEW_REFERENCES
from pytest_chunkeval.llm.chat import Rejection
from pytest_chunkeval.quality.leakage import leakage

MAX_STYLE_EXAMPLES = 10


def check_leakage(
    question: str, excerpts: Sequence[str], max_leakage: float | None
) -> Rejection | None:
    """A :data:`LEAKY` rejection when ``question`` leaks more than allowed."""
    if max_leakage is None:
        return None
    value = leakage(question, excerpts)
    if value == value and value > max_leakage:  # NaN (no content word) passes
        return Rejection(
            LEAKY,
            f"leakage {100 * value:.0f}% > {100 * max_leakage:.0f}%: "
            f"{preview(question)}",
        )
    return None


def check_references(count: int, multi_excerpt: bool) -> Rejection | None:
    """A :data:`TOO_FEW_REFERENCES` rejection for a single-passage answer when
    several passages were asked for."""
    if multi_excerpt and count < 2:
        return Rejection(
            TOO_FEW_REFERENCES, f"{count} distinct reference(s), at least 2 asked"
        )
    return None


def load_style_examples(path: str | os.PathLike[str]) -> tuple[str, ...]:
    """Real users' questions from a text file (one a line; blank lines and lines
    starting with ``#`` skipped) or a query set (``.jsonl`` / ``.json``: its
    questions). ``ValueError`` naming the file when it holds none or is
    unreadable."""
    source = Path(path)
    try:
        if source.suffix.lower() in (".jsonl", ".json"):
            from pytest_chunkeval.data.queries import read_queries

            found = [q.text for q in read_queries(source)]
        else:
            text = source.read_text(encoding="utf-8-sig")
            found = [
                line.strip()
                for line in text.splitlines()
                if line.strip() and not line.lstrip().startswith("#")
            ]
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"--style-examples {source}: {exc}") from None
    examples = tuple(dict.fromkeys(" ".join(q.split()) for q in found))
    if not examples:
        raise ValueError(f"--style-examples {source}: no question in the file")
    return examples


def style_digest(examples: Sequence[str]) -> str | None:
    """What the output header records of the style examples (None: none)."""
    if not examples:
        return None
    blob = json.dumps(list(examples), ensure_ascii=False).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:16]


def pick_examples(rng: random.Random, examples: Sequence[str]) -> list[str]:
    """The style examples one prompt shows (all of them when few enough)."""
    if len(examples) <= MAX_STYLE_EXAMPLES:
        return list(examples)
    return rng.sample(list(examples), MAX_STYLE_EXAMPLES)
