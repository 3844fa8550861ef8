"""Shared test configuration: pytester for the plugin tests (nothing heavy here)."""

import ast
import inspect
import re
from collections.abc import Callable
from pathlib import Path

import pytest

pytest_plugins = "pytester"

# Plugins of other packages that inner pytest runs (a subprocess started by a test)
# would load from their entry points and never use: LangSmith's costs about 0.8 s of
# CPU per process, hypothesis' 0.2 s (and a pytest run under xdist is three).
_INNER_ADDOPTS = "-p no:langsmith_plugin -p no:hypothesispytest"


# Modules whose checks do not depend on the Python running them: the source tree's
# layout, and the HTML report as a browser renders it.
_ONCE = {"test_layout.py", "test_html_browser.py"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``pytester`` every test that runs pytest or Python in a child: one using
    the ``pytester`` fixture, or starting ``sys.executable`` itself or through a
    helper of tests/support (:func:`_starts_python`); and
    ``once`` the tests of ``_ONCE``. ``make compat`` leaves both out, except the
    ``compat_smoke`` ones (Makefile, compat)."""
    for item in items:
        if "pytester" in getattr(item, "fixturenames", ()) or _starts_python(item):
            item.add_marker(pytest.mark.pytester)
        if item.path.name in _ONCE:
            item.add_marker(pytest.mark.once)


def _starts_python(item: pytest.Item) -> bool:
    """The test's own code names ``sys.executable``, a helper of tests/support
    that starts it (``run_pytest``...), or it uses such a fixture."""
    if _STARTERS & set(getattr(item, "fixturenames", ())):
        return True
    function = getattr(item, "function", None)
    try:
        source = inspect.getsource(function) if function is not None else ""
    except (OSError, TypeError):
        return False
    names = set(re.findall(r"[A-Za-z_]\w*", source))
    return "sys.executable" in source or bool(names & _STARTERS)


def _python_starters() -> frozenset[str]:
    """The functions of tests/support whose code starts ``sys.executable``, or
    calls one of these (by name, to a fixpoint)."""
    bodies: dict[str, str] = {}
    for path in (Path(__file__).parent / "support").glob("*.py"):
        source = path.read_text()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef):
                bodies[node.name] = ast.get_source_segment(source, node) or ""
    found = {name for name, body in bodies.items() if "sys.executable" in body}
    while True:
        more = {
            name
            for name, body in bodies.items()
            if name not in found and found & set(re.findall(r"[A-Za-z_]\w*", body))
        }
        if not more:
            return frozenset(found)
        found |= more


_STARTERS = _python_starters()


@pytest.fixture
def chunkeval_cli() -> Callable[[list[str]], int]:
    """The ``chunkeval`` command's entry point, called in-process."""
    from pytest_chunkeval.cli.main import main

    return main


@pytest.fixture(scope="session", autouse=True)
def _public_api_loaded() -> None:
    """Every public name imported once, before any pytester in-process run
    snapshots ``sys.modules``: a module first imported inside such a run is
    dropped after it and imported again by the next, so one process would hold
    two ``Statistic`` classes and ``isinstance`` fail (seen under ``-n 2`` in
    test_docs_blocks, depending on the order of the tests)."""
    import pytest_chunkeval

    for name in pytest_chunkeval.__all__:
        getattr(pytest_chunkeval, name)


@pytest.fixture(autouse=True)
def _output_as_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    # pytest prints whole failure messages in its short summary when $CI or
    # $BUILD_NUMBER is set; the inner runs of the plugin tests must print the same
    # on a developer's machine and in CI, so their text checks mean the same.
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("BUILD_NUMBER", raising=False)
    # a CI job's own step summary must not receive the test projects' reports
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    # (pytester drops $PYTEST_ADDOPTS for its own runs: support.plugin_project.FAST)
    monkeypatch.setenv("PYTEST_ADDOPTS", _INNER_ADDOPTS)
