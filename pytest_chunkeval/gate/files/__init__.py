"""The gate's files: what a baseline records (:class:`Baseline`,
``baseline.py``; each document, ``documents.py``; each question,
``questions.py``; what makes one damaged, ``validity.py``), where a test's
baseline is (``paths.py``, ``names.py``, former names ``legacy.py``, a replaced
parameter's ``lookup.py``), the corpus table per-question items share
(``corpus_table.py``) and the files no test used (``owners.py``). Reading one
for a check and writing one in update mode are the check's steps
(gate/reading.py, gate/writing.py).

Stage: the gate's first step (docs/baselines.md, "What is in one").

May import: what ``gate/`` may (docs/architecture.md#layering), and of the
gate only ``files/`` and ``gate/tolerances.py``.
"""
