"""The gate's outcome: what one check did (:class:`CheckOutcome`,
``outcomes.py``), the comparison turned into it (``checking.py``), its text
(``messages.py``), what an update changed (``update_notes.py``), a report
row's verdict (``rows.py``) and the session's
``baselines:`` summary lines (``session_summary.py``).

Stage: the gate's last step, what the reports read (docs/baselines.md).

May import: what ``gate/`` may (docs/architecture.md#layering), and of the
gate only ``files/``, ``comparison/``, ``outcome/`` and ``gate/tolerances.py``.
"""
