"""Graph-RAG relationship retrieval (docs/relationships.md#the-method): extract
``(subject, predicate, object)`` relationships with verbatim evidence from each chunk,
merge them into a graph, retrieve relationships per question and score them against gold
relationships that do not depend on the chunking.

Stage: beside ``engine/``, using it for chunking, embedding and search. Central types:
:class:`RelationshipGraph` (``graph.py``), :class:`Extractor` (``extractors.py``),
:func:`evaluate_relationships` (``evaluate.py``).

May import: every component folder and ``engine/`` (see
docs/architecture.md#layering).
"""
