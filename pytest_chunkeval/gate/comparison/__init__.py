"""The gate's comparison: a result against its baseline, metric by metric
(:func:`~pytest_chunkeval.gate.comparison.compare.compare` gives a
:class:`~pytest_chunkeval.gate.comparison.report.GateReport`). Before it, the
question set is paired (``reworded.py``) and noisy components repeated
(``repeats.py``); inside it, what changed (``changes.py``,
``configuration.py``), whether a metric can be compared at all
(``integrity.py``), the paired values (``paired_values.py``), the noise of the
mean change (``noise.py``), float drift (``drift.py``), the sampling view
(``sampling.py``); after it, the anchor (``anchor.py``), the flipped questions
(``flips.py``) and the verdicts' words (``verdicts.py``).

Stage: the gate's second step (docs/baselines.md, "What a verdict means").

May import: what ``gate/`` may (docs/architecture.md#layering), and of the
gate only ``files/``, ``comparison/`` and ``gate/tolerances.py``.
"""
