"""The ``chunkeval`` command line: one module per subcommand.

Stage: an entry point beside ``plugin.py``, at the top. Central function:
:func:`main` (``main.py`` dispatches to one module per subcommand).

May import: every folder but ``run/`` (see docs/architecture.md#layering).
"""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    """Run ``chunkeval`` with ``argv`` (default ``sys.argv[1:]``); the exit code."""
    from pytest_chunkeval.cli.main import main as run

    return run(argv)
