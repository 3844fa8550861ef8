"""The pytest session's core: settings resolved into components, evaluations
memoized, gate verdicts and outputs, all without importing pytest.

Stage: the top of the pipeline, driven by ``plugin.py``. Central types:
:class:`ChunkevalSession` (``session.py``), :class:`Evaluator` (``evaluator.py``,
the ``chunkeval`` fixture) and its baseline comparisons
(``comparisons.py``), :class:`MarkerOptions` (``marker.py``: a test's
``EvaluationSpec``, ``config/evaluation.py``, is the settings with it on top), the
checks after a test (``checks.py``).

May import: every folder but ``cli/`` (see docs/architecture.md#layering).
"""
