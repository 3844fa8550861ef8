"""What pytest collected and selected, read off its objects for the plugin (which
passes them in: this module does not import pytest): the test files a command
line named by node id, the items of one per-question test, a user's own
parametrization of ``chunkeval_chunker``, progress lines past the capture, and
whether the end of a run has work."""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_chunkeval.config.options import Settings


LIMITING_FLAGS = ("chunkeval_chunkers",)
"""Flags that run only some of a suite's configurations: its tests are
parametrized by them (docs/baselines.md, "An update never ratchets")."""


def selected_by_nodeid(config: Any, collected: Iterable[str] = ()) -> list[str]:
    """Test files a ``pytest.Config``'s command line named with a node id
    (``t.py::test_x[a]``, what a baseline failure's update command prints): only
    some of their tests were collected, so the other tests' baselines are not
    unused. With a flag of :data:`LIMITING_FLAGS` (``--chunkeval-chunkers=X``),
    every file of the ``collected`` node ids likewise: the tests of the other
    configurations were not collected, and an update must not delete their
    baselines."""
    files = []
    if any(config.getoption(flag, None) not in (None, []) for flag in LIMITING_FLAGS):
        root = Path(config.rootpath)
        files += sorted(
            {os.path.abspath(root / n.partition("::")[0]) for n in collected}
        )
    for arg in config.args:
        target, sep, _ = str(arg).partition("::")
        if not sep:
            continue
        path = config.invocation_params.dir / target
        if not path.exists() and config.option.pyargs:
            path = module_file(target) or path
        files.append(os.path.abspath(path))
    return files


def module_file(name: str) -> Path | None:
    """``--pyargs pkg.test_mod::test_x``: the module's file, if it can be found."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    return Path(spec.origin) if spec is not None and spec.origin else None


def question_group(item: Any) -> tuple[object, ...]:
    """What the items of one per-question test (a ``pytest.Function``) share: the
    test function and its other parameters (the objects themselves: ids may be
    escaped or repeated)."""
    params = item.callspec.params
    others = sorted((n, id(v)) for n, v in params.items() if n != "chunkeval")
    parent = item.parent.nodeid if item.parent is not None else ""
    return (parent, item.originalname, tuple(others))


def parametrized_by_user(parametrize_marks: Iterable[Any]) -> bool:
    """Whether one of a test's ``parametrize`` marks names ``chunkeval_chunker``."""
    for mark in parametrize_marks:
        names = mark.args[0] if mark.args else mark.kwargs.get("argnames", "")
        if isinstance(names, str):
            names = [n.strip() for n in names.split(",")]
        if "chunkeval_chunker" in names:
            return True
    return False


_PROGRESS_LOCK = threading.Lock()


def write_progress(pluginmanager: Any, line: str) -> None:
    """A progress line on the terminal, past pytest's capture (as live logging
    does); called from a progress thread too, hence the lock."""
    reporter = pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return
    capture = pluginmanager.get_plugin("capturemanager")
    with _PROGRESS_LOCK:
        if capture is None:
            _line_of_its_own(reporter, line)
            return
        with capture.global_and_fixture_disabled():
            _line_of_its_own(reporter, line)


def _line_of_its_own(reporter: Any, line: str) -> None:
    """``line`` on a line of its own: under ``-q`` the test dots have no file
    name before them, and pytest's ``write_line`` would continue their line."""
    writer = getattr(reporter, "_tw", None)
    if getattr(writer, "width_of_current_line", 0):
        reporter.write("\n")
    reporter.write_line(line)


def end_has_work(settings: Settings, collected: Sequence[str]) -> bool:
    """Whether the end of a run that made no session has work: options asking for
    history or reports, or collected tests whose baseline files may have gone
    unused."""
    if settings.session_end_work:
        return True
    if not collected:
        return False
    from pytest_chunkeval.gate.files.paths import baselines_exist

    return baselines_exist(collected, settings.rootdir, settings.baseline_dir)
