"""The ``chunkeval`` command line: one module per subcommand."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    """Run ``chunkeval`` with ``argv`` (default ``sys.argv[1:]``); the exit code."""
    from pytest_chunkeval.cli.main import main as run

    return run(argv)
