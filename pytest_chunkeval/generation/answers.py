"""Reading a model's answer: its JSON, the question, and each reference placed in
the document (exactly, up to whitespace, or by an optional fuzzy match);
rejections with their reasons."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import TYPE_CHECKING, Any

from pytest_chunkeval.core.locate import find_normalized, preview
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.query_types import Excerpt
from pytest_chunkeval.generation.settings import DEFAULT_MAX_REFERENCES
from pytest_chunkeval.llm.chat import API_ERROR, MALFORMED, REFUSED, Rejection
from pytest_chunkeval.llm.parse import extract_json

if TYPE_CHECKING:
    from pytest_chunkeval.generation.windows import Window


# Rejection reasons, in the order the summary lists them (MALFORMED, REFUSED and
# API_ERROR are the ones every LLM role shares, from llm/chat.py).
NOT_VERBATIM = "not verbatim"
TOO_MANY_REFERENCES = "too many references"
COMPOUND = "compound question"
DUPLICATE = "duplicate"
LEAKY = "leaky"  # generation/harder.py
TOO_FEW_REFERENCES = "too few references"  # generation/harder.py
REASONS = (
    NOT_VERBATIM,
    MALFORMED,
    REFUSED,
    DUPLICATE,
    COMPOUND,
    TOO_MANY_REFERENCES,
    LEAKY,
    TOO_FEW_REFERENCES,
    API_ERROR,
)


@dataclass(frozen=True)
class Candidate:
    """A validated answer: the question and its located excerpts."""

    question: str
    excerpts: tuple[Excerpt, ...]
    approximate: tuple[dict[str, Any], ...] = ()  # what the model wrote, for audit


_REFUSAL = re.compile(
    r"^\W*(i'?m sorry|i am sorry|sorry|i can(?:no|')t|i am unable|i'?m unable|"
    r"i won'?t|i will not|as an ai)\b",
    re.IGNORECASE,
)


def parse_answer(
    content: str, max_references: int = DEFAULT_MAX_REFERENCES
) -> tuple[str, list[str]] | Rejection:
    """(question, references) from a model's answer, or why it is unusable."""
    try:
        obj = extract_json(content)
    except ValueError:
        if _REFUSAL.match(content.strip()):
            return Rejection(REFUSED, preview(content))
        return Rejection(MALFORMED, f"not JSON: {preview(content)}")
    if not isinstance(obj, dict):
        return Rejection(MALFORMED, f"JSON {type(obj).__name__}, not an object")
    question = obj.get("question")
    if "skip" in obj and not question:
        return Rejection(REFUSED, f"skipped: {preview(str(obj['skip']))}")
    if not isinstance(question, str) or not question.strip():
        return Rejection(MALFORMED, "no 'question' string")
    raw = obj.get("references")
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        return Rejection(MALFORMED, "no 'references' list")
    refs: list[str] = []
    for item in raw:
        if isinstance(item, dict):  # {"content": ...} as in the reference CSV
            item = item.get("content", item.get("text"))
        if not isinstance(item, str) or not item.strip():
            return Rejection(MALFORMED, "a reference is not a non-empty string")
        refs.append(item.strip())
    if len(refs) > max_references:
        return Rejection(
            TOO_MANY_REFERENCES, f"{len(refs)} references, at most {max_references}"
        )
    question = " ".join(question.split())
    if question.count("?") > 1:
        return Rejection(COMPOUND, preview(question))
    return question, refs


def place_reference(
    text: str, reference: str, window: Window
) -> tuple[int, int] | None:
    """Span of ``reference`` in the document ``text``: exact (in the window first,
    then anywhere), else whitespace-insensitive (window first)."""
    i = text.find(reference, window.start, window.end)
    if i >= 0:
        return i, i + len(reference)
    nearest = _nearest_exact(text, reference, window.start)
    if nearest is not None:
        return nearest, nearest + len(reference)
    found = find_normalized(text, reference, window.start)
    if found is not None and found[1] <= window.end:
        return found
    return find_normalized(text, reference)


def _nearest_exact(text: str, needle: str, pos: int) -> int | None:
    before = text.rfind(needle, 0, pos + len(needle))
    after = text.find(needle, pos)
    candidates = [i for i in (before, after) if i >= 0]
    return min(candidates, key=lambda i: abs(i - pos)) if candidates else None


_WORD = re.compile(r"\S+")
_EDGE_REFINE_MAX_CHARS = 600
_EDGE_PUNCT = re.compile(r"^\W+|\W+$")


def _word_key(word: str) -> str:
    folded = word.casefold()
    return _EDGE_PUNCT.sub("", folded) or folded


def _likely_offsets(keys: list[str], needle_keys: list[str], slack: int) -> list[int]:
    """The three alignments (window word index - needle word index) that most
    matching words vote for, votes within ``slack`` words counted together."""
    where: dict[str, list[int]] = {}
    for j, key in enumerate(needle_keys):
        where.setdefault(key, []).append(j)
    votes: Counter[int] = Counter()
    for i, key in enumerate(keys):
        for j in where.get(key, ()):
            votes[i - j] += 1
    smoothed = {
        o: sum(votes.get(o + d, 0) for d in range(-slack, slack + 1)) for o in votes
    }
    return sorted(smoothed, key=lambda o: (-smoothed[o], o))[:3]


def fuzzy_find(
    text: str, needle: str, start: int, end: int, threshold: float
) -> tuple[int, int, float] | None:
    """The word-aligned span of ``text[start:end]`` most similar to ``needle``.

    Similarity is difflib's ratio of the two strings, casefolded with whitespace
    collapsed; the best match is returned when it reaches ``threshold``. Fast on a
    window: matching words vote for an alignment, the span's ends are then adjusted
    word by word on the few best alignments, and only their final candidates are
    compared character by character.
    """
    spans = [m.span() for m in _WORD.finditer(text, start, end)]
    words = needle.split()
    if not spans or not words:
        return None
    keys = [_word_key(text[s:e]) for s, e in spans]
    needle_keys = [_word_key(w) for w in words]
    k = len(words)
    slack = min(10, max(2, k // 5))
    offsets = _likely_offsets(keys, needle_keys, slack)
    if not offsets:
        return None

    word_matcher = SequenceMatcher(None, autojunk=False)
    word_matcher.set_seq2(needle_keys)

    def word_ratio(i: int, j: int) -> float:
        word_matcher.set_seq1(keys[i:j])
        return word_matcher.ratio()

    target = " ".join(words).casefold()
    char_matcher = SequenceMatcher(None, autojunk=False)
    char_matcher.set_seq2(target)

    def char_ratio(i: int, j: int) -> float:
        char_matcher.set_seq1(" ".join(text[s:e] for s, e in spans[i:j]).casefold())
        return char_matcher.ratio()

    best: tuple[int, int, float] | None = None
    n = len(spans)
    for o in offsets:
        i = min(max(0, o), n - 1)
        j = min(n, max(i + 1, o + k))
        # Each end moves to where the word-level similarity is highest.
        i = max(
            range(max(0, i - slack), min(j, i + slack + 1)),
            key=lambda s: (word_ratio(s, j), -abs(s - i)),
        )
        j = max(
            range(max(i + 1, j - slack), min(n, j + slack) + 1),
            key=lambda e: (word_ratio(i, e), -abs(e - j)),
        )
        if len(target) <= _EDGE_REFINE_MAX_CHARS:
            # A misspelt first or last word counts as a miss at the word level;
            # the characters decide whether it belongs to the span. (Skipped for
            # long references, where a char-level ratio is slow and one edge word
            # matters little.)
            i = max(
                range(max(0, i - 2), min(j, i + 3)),
                key=lambda s: (char_ratio(s, j), -abs(s - i)),
            )
            j = max(
                range(max(i + 1, j - 2), min(n, j + 2) + 1),
                key=lambda e: (char_ratio(i, e), -abs(e - j)),
            )
        char_matcher.set_seq1(" ".join(text[s:e] for s, e in spans[i:j]).casefold())
        if char_matcher.real_quick_ratio() < threshold:
            continue
        if char_matcher.quick_ratio() < threshold:
            continue
        ratio = char_matcher.ratio()
        if best is None or ratio > best[2]:
            best = (spans[i][0], spans[j - 1][1], ratio)
    return best if best is not None and best[2] >= threshold else None


def validate_answer(
    content: str,
    corpus: Corpus,
    window: Window,
    *,
    max_references: int = DEFAULT_MAX_REFERENCES,
    approximate: float | None = None,
) -> Candidate | Rejection:
    """Check one answer: JSON shape, then every reference against the document.

    A reference not found exactly or up to whitespace rejects the whole question,
    unless ``approximate`` (a similarity in (0, 1]) is set and a fuzzy match inside
    the window reaches it; such an excerpt holds the document's text and is marked
    approximate.
    """
    parsed = parse_answer(content, max_references)
    if isinstance(parsed, Rejection):
        return parsed
    question, refs = parsed
    text = corpus[window.doc_id].text
    excerpts: list[Excerpt] = []
    audit: list[dict[str, Any]] = []
    seen: set[tuple[int, int]] = set()
    for n, ref in enumerate(refs, 1):
        found = place_reference(text, ref, window)
        is_approximate = False
        if found is None and approximate is not None:
            fuzzy = fuzzy_find(text, ref, window.start, window.end, approximate)
            if fuzzy is not None:
                found, is_approximate = fuzzy[:2], True
                audit.append(
                    {"excerpt": n, "model_text": ref, "similarity": round(fuzzy[2], 4)}
                )
        if found is None:
            return Rejection(
                NOT_VERBATIM,
                f"reference {n} {preview(ref)} is not in document {window.doc_id!r}",
            )
        if found in seen:
            continue
        seen.add(found)
        s, e = found
        excerpts.append(Excerpt(text[s:e], window.doc_id, s, e, is_approximate))
    return Candidate(question, tuple(excerpts), tuple(audit))


def question_key(question: str) -> str:
    """What makes two questions the same one: case, spacing, end punctuation."""
    return " ".join(question.casefold().split()).rstrip(" ?.!")
