"""``python -m handbook_rag "How many vacation days do I get?"``: print the passages
(or, with ``--prompt``, the whole prompt) the app would send to its LLM."""

from __future__ import annotations

import argparse
from pathlib import Path

from .prompt import build_prompt
from .retriever import DEFAULT_K, HandbookRetriever

HANDBOOK = Path(__file__).resolve().parent.parent / "handbook"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m handbook_rag")
    parser.add_argument("question")
    parser.add_argument("--handbook", type=Path, default=HANDBOOK)
    parser.add_argument("--k", type=int, default=DEFAULT_K)
    parser.add_argument("--chroma-url", help="http://HOST:PORT of a Chroma server")
    parser.add_argument("--prompt", action="store_true", help="print the prompt")
    args = parser.parse_args()
    retriever = HandbookRetriever.from_directory(
        args.handbook, k=args.k, chroma_url=args.chroma_url
    )
    passages = retriever.retrieve(args.question)
    if args.prompt:
        print(build_prompt(args.question, passages))
        return
    for i, p in enumerate(passages, 1):
        print(f"[{i}] {p.doc_id}[{p.start}:{p.end}]  {p.section}")
        print("    " + p.text.replace("\n", "\n    "))


if __name__ == "__main__":
    main()
