"""Configuration: the spec grammar, the registries, the option table, defaults.

Stage: below every pipeline stage (chunkers, embedders, stores and tokenizers
register their specs here). Central types: :class:`Registry` / :class:`Signature`
(``registry.py``), the spec grammar (``specs.py``), ``OPTIONS`` / ``Settings``
(``options.py``), the defaults (``defaults.py``), the parsers of what the gate
allows (``tolerances.py``).

May import: ``core/`` (the unit and metric vocabularies), ``util/`` and
``errors`` (see docs/architecture.md#layering).
"""
