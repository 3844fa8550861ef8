"""The regression gate: baselines, tolerances, paired comparison, assertions.

Stage: after the engine; compares an :class:`EvalResult` with its baseline.
Central types: :class:`Baseline` (``baseline.py``), :class:`BaselineStore`
(``store.py``), :class:`GateSettings` (``tolerances.py``), :func:`compare` /
:class:`GateReport` (``compare.py``), the ``assert_*_at_least`` helpers
(``assertions.py``).

May import: ``config/``, ``core/``, ``data/``, ``engine/``, ``util/`` and ``errors``
(see docs/architecture.md#layering).
"""
