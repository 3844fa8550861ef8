"""Session reports: JSON, a Markdown table, and one self-contained HTML page.

Everything in this package is text from plain data: results in their JSON form
(``EvalResult.to_json``, what xdist workers send) and history records (see
``history.py``; the git commit each names, ``git_info.py``). The HTML page draws
its plots as inline SVG built here, so it needs no network, no CDN and no
JavaScript to show them; a small inline script makes the table sortable and marks
the page as drawn (``#chunkeval-status``) for tests. The
question explorer (``explorer.py``, ``explorer.js``, ``explorer.css``) is rendered
by script from one JSON blob in the page.

Stage: after the gate. Central types: :class:`ReportEntry` (``rows.py``),
:func:`results_table` (``table.py``), :func:`markdown_report`, :func:`html_report`,
:func:`json_report`, :func:`append_history`.

May import: ``config/``, ``core/``, ``tokenizers/``, ``chunkers/``, ``engine/``,
``gate/``, ``quality/``, ``util/`` and ``errors`` (see docs/architecture.md#layering).
"""
