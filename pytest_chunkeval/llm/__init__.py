"""The LLM client stack every LLM role shares (chunker, judge, generator, extractor).

Stage: a component, below chunkers, embedders, judging and generation. Central
types: :func:`openai_client` / :class:`LazyClient` (``client.py``),
:class:`ChatModel` (``chat.py``), :class:`AnswerCache` (``answers.py``),
:func:`run_batch` (``batch.py``).

May import: ``config/``, ``core/``, ``tokenizers/``, ``util/`` and ``errors`` (see
docs/architecture.md#layering).
"""
