"""Tokenizers: the token axis of the ``token`` unit and of chunk sizes.

Stage: a component below ``core/`` (the unit map counts tokens with it). Central
types: the :class:`Tokenizer` protocol, ``TOKENIZERS`` / :func:`get_tokenizer`
(``base.py``).

May import: ``config/``, ``util/`` and ``errors`` (see docs/architecture.md#layering).
"""
