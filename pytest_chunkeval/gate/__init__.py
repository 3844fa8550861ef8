"""The regression gate: a result checked against its committed baseline.

Stage: after the engine, before the reports. It reads as its flow:

- ``files/``: the baseline file, what it holds (:class:`Baseline`,
  ``files/baseline.py``), where it is (``paths.py``, ``names.py``,
  ``lookup.py``), the files no test used (``owners.py``);
- ``comparison/``: a result against a baseline, metric by metric
  (:func:`compare` / :class:`GateReport`, ``comparison/compare.py``), with the
  question set paired, noise measured by repeats, float drift, the anchor;
- ``outcome/``: what one check did (:class:`CheckOutcome`), its messages, and
  a report row's verdict (``outcome/rows.py``);
- ``check.py``: one check, top to bottom (the one function to read first),
  reading the baseline for it (``reading.py``) or, in update mode, writing the
  result as the baseline (``writing.py``);
  ``store.py``: the session's checks (:class:`BaselineStore`), on what they
  recorded (``records.py``, merged from xdist workers);
  ``tolerances.py``: what the gate allows (:class:`GateSettings`). The
  ``assert_*_at_least`` helpers are the public module ``pytest_chunkeval.assertions``.

Inside, imports point down: ``files/`` <- ``comparison/`` <- ``outcome/`` <-
the top-level modules (tests/test_gate_layout.py).

May import: ``config/``, ``core/``, ``tokenizers/``, ``data/``, ``engine/``,
``util/`` and ``errors`` (see docs/architecture.md#layering).
"""
