"""Prompt text for query generation (``chunkeval generate``), versioned.

The version is recorded in every generated query set (``prompt_version`` in the
header) and checked when a run resumes, so questions written under two different
prompts never end up in one file. ANY change to the text below, however small,
must bump :data:`PROMPT_VERSION` (a test pins the text's digest to the version).

The method follows Chroma's report "Evaluating Chunking Strategies for Retrieval":
a ~4000-character window of one document, up to 50 earlier questions to avoid
repeats, a JSON answer with the question and verbatim references (at most 5), and a
pledge the model restates in its JSON (the report found that restating it made
models stop joining two topics with "and").
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

PROMPT_VERSION = 1
"""Bump on ANY change to the prompt text (system prompt, pledge, user message).
The optional parts below (:data:`MULTI_EXCERPT_RULE`, the style examples) are
recorded in the output's header by their own settings (``multi_excerpt``,
``style_examples``), which a resumed run must repeat, so adding one leaves the
default prompt, and this version, as they were."""

PLEDGE = (
    "My question asks about one single thing; I do not use the word 'and' to join "
    "two topics or two questions."
)
"""The sentence the model copies into the ``pledge`` field of its answer."""

SYSTEM_PROMPT = f"""\
You write test questions for a document search engine. You are shown one passage \
of a document. Write ONE question that a user of the search engine could ask and \
that the passage answers, and copy the sentences of the passage that hold the answer.

Rules for the question:
- It must make sense to someone who has not seen the passage: never refer to "the \
passage", "the text", "this document" or "the author".
- It asks about one single thing. Do not join two topics or two questions with \
"and" (the word is fine only inside a name, such as "Johnson and Johnson").
- It is short and specific, and it is not a repeat or a rewording of any earlier \
question listed.

Rules for the references:
- Each reference is copied from the passage exactly, character for character: \
whole sentences (or whole lines of a list or table), with no change, no \
abbreviation, no "...", and nothing added or removed.
- Give 1 to {{max_references}} references, only those needed to answer the question.

Answer with ONE JSON object and nothing else, in this form:
{{{{"pledge": "{PLEDGE}", "question": "<your question>", "references": \
["<exact sentence>", "<exact sentence>"]}}}}
Copy the pledge exactly as given. If the passage holds nothing worth asking about \
(for example only numbers, links or boilerplate), answer {{{{"skip": "<reason>"}}}}.\
"""

MULTI_EXCERPT_RULE = """

The question must need TWO OR MORE separate parts of the passage to be answered \
(for example a figure from one paragraph and its cause or comparison from another): \
give at least two references, from different places of the passage, each needed \
for the answer."""
"""Appended to the system message with ``multi_excerpt`` (``--multi-excerpt``)."""

STYLE_INTRO = (
    "Real users of the search engine ask questions like these. Imitate their "
    "style (length, wording, how much they already know, typos and all), NOT "
    "their topics: your question must still be about the passage."
)

PASSAGE_OPEN = "<passage>"
PASSAGE_CLOSE = "</passage>"


def system_prompt(max_references: int = 5, *, multi_excerpt: bool = False) -> str:
    """The system message, asking for at most ``max_references`` references (and
    with ``multi_excerpt``, for a question that needs several of them)."""
    text = SYSTEM_PROMPT.format(max_references=max_references)
    return text + MULTI_EXCERPT_RULE if multi_excerpt else text


def user_prompt(
    doc_id: str,
    window: str,
    previous: Sequence[str],
    style_examples: Sequence[str] = (),
) -> str:
    """The user message: real users' questions (a style to imitate), earlier
    questions (to avoid), then the passage."""
    parts: list[str] = []
    if style_examples:
        listed = "\n".join(f"- {q}" for q in style_examples)
        parts.append(f"{STYLE_INTRO}\n{listed}\n")
    if previous:
        listed = "\n".join(f"- {q}" for q in previous)
        parts.append(
            "Earlier questions about this document (do not repeat or reword "
            f"them):\n{listed}\n"
        )
    parts.append(
        f'Passage from the document "{doc_id}":\n'
        f"{PASSAGE_OPEN}\n{window}\n{PASSAGE_CLOSE}"
    )
    return "\n".join(parts)


def build_messages(
    doc_id: str,
    window: str,
    previous: Sequence[str] = (),
    *,
    max_references: int = 5,
    multi_excerpt: bool = False,
    style_examples: Sequence[str] = (),
) -> list[dict[str, str]]:
    """Chat messages for one generation attempt."""
    system = system_prompt(max_references, multi_excerpt=multi_excerpt)
    user = user_prompt(doc_id, window, previous, style_examples)
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": user},
    ]


def prompt_digest() -> str:
    """SHA-256 of the prompt templates (rendered with fixed inputs).

    Tests pin it to :data:`PROMPT_VERSION` so an edit cannot skip the bump."""
    sample = build_messages("doc.md", "WINDOW", ["Q1?", "Q2?"], max_references=5)
    blob = "\0".join(m["role"] + "\n" + m["content"] for m in sample)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()
