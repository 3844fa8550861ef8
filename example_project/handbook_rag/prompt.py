"""The generation half's input: the prompt an LLM answers from."""

from __future__ import annotations

from collections.abc import Sequence

from .ingest import Chunk

INSTRUCTIONS = (
    "You answer questions from Tallowmere employees using only the handbook "
    "passages below. Cite the chapter of every fact you use. If the passages do "
    "not contain the answer, say so and suggest asking in #ask-people."
)


def build_prompt(question: str, passages: Sequence[Chunk]) -> str:
    """The instructions, the numbered passages with their source, the question."""
    blocks = [
        f'[{i}] {p.doc_id}, section "{p.section}"\n{p.text}'
        for i, p in enumerate(passages, 1)
    ]
    return "\n\n".join([INSTRUCTIONS, *blocks, f"Question: {question}"])
