"""Write the suite's bytecode once, before `make unit` or `make compat` runs it.

Where PYTHONDONTWRITEBYTECODE is set (CI images often set it), nothing caches a
compiled module, and the suite pays for compiling again and again:

- pytest rewrites the asserts of every module of pytest_chunkeval (a pytest11
  plugin) and of each test module, in each xdist worker and again in every
  in-process pytester run, which drops the modules it imported;
- every child Python (the plugin's runs in a subprocess) compiles the package.

pytest and Python both read a cached file even when told not to write one, and
check it against its source's mtime and size. Neither the package nor tests/
changes while the suite runs, so writing their caches here, once, is safe; the
projects the tests write under /tmp are left alone (one could be rewritten at the
same size within the same second). Collecting the suite (``--co``) rewrites the
test modules; importing each package module rewrites the package. Measured on
tests/test_plugin_baseline.py: 38 s CPU with no cache, 20 s with these.

Usage: PYTHON .ci/write_bytecode.py [pytest args selecting what runs next]
"""

from __future__ import annotations

import compileall
import contextlib
import importlib
import io
import pkgutil
import sys

sys.dont_write_bytecode = False


class _ImportPackage:
    """Import every module of pytest_chunkeval under pytest's rewriting hook
    (one needing a package absent here is skipped: it is not run either)."""

    def pytest_configure(self) -> None:
        import pytest_chunkeval

        prefix = pytest_chunkeval.__name__ + "."
        for info in pkgutil.walk_packages(pytest_chunkeval.__path__, prefix):
            with contextlib.suppress(Exception):
                importlib.import_module(info.name)


def main(args: list[str]) -> int:
    # What runs next is `python -m pytest`, which puts the working directory first
    # on sys.path; a script's own folder (.ci) is first here instead.
    sys.path[0] = ""
    for folder in ("pytest_chunkeval", "tests"):
        compileall.compile_dir(folder, quiet=1)
    import pytest

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = pytest.main(
            ["-p", "no:cacheprovider", "--co", "-qq", *args],
            plugins=[_ImportPackage()],
        )
    if code in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        return 0
    sys.stdout.write(out.getvalue())
    return int(code)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
