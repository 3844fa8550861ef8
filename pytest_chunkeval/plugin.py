"""pytest entry point of pytest-chunkeval: options, the marker, fixtures and hooks.

The only module that imports pytest. Each hook hands off to
:class:`~pytest_chunkeval.run.session.ChunkevalSession` (state of the run),
:mod:`~pytest_chunkeval.config.options` (the option table) or
:mod:`~pytest_chunkeval.run.summary` (report text). Nothing heavy is imported until a
test uses a fixture, or a chunkeval setting is configured: a suite that never uses
the plugin does not notice it.

Fixtures: ``chunkeval`` (the evaluator), ``chunkeval_chunker`` (parametrized over
``chunkeval_chunkers``), ``chunkeval_corpus``, ``chunkeval_queries``,
``chunkeval_embedder``, ``chunkeval_store``. Marker: ``@pytest.mark.chunkeval(...)``.
Hookspecs: :mod:`~pytest_chunkeval.hookspecs`.

Baselines (docs/baselines.md): each process notes which tests it collected, which
passed and which test files the command line selected by node id; at the end, xdist
workers send that with their results and baseline checks, and the controller (or
the only process) finds unused baselines, appends the history and writes the
reports, once.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import pytest

from pytest_chunkeval import hookspecs
from pytest_chunkeval.config.options import (
    OPTIONS,
    Settings,
    add_options,
    resolve_settings,
)
from pytest_chunkeval.errors import ChunkevalError
from pytest_chunkeval.run.collection import (
    end_has_work,
    parametrized_by_user,
    question_group,
    selected_by_nodeid,
    write_progress,
)

if TYPE_CHECKING:
    from pytest_chunkeval.chunkers import Chunker
    from pytest_chunkeval.config.registry import Registry
    from pytest_chunkeval.data.corpus import Corpus
    from pytest_chunkeval.data.queries import QuerySet
    from pytest_chunkeval.embedders.base import Embedder
    from pytest_chunkeval.run.evaluator import Evaluator
    from pytest_chunkeval.run.marker import MarkerOptions
    from pytest_chunkeval.run.session import ChunkevalSession
    from pytest_chunkeval.stores import AnyStore

T = TypeVar("T")

SETTINGS_KEY = pytest.StashKey[Settings]()
SESSION_KEY: pytest.StashKey[ChunkevalSession] = pytest.StashKey()
MARKER_KEY: pytest.StashKey[MarkerOptions] = pytest.StashKey()
EVALUATOR_KEY: pytest.StashKey[Evaluator] = pytest.StashKey()
COLLECTED_KEY = pytest.StashKey[list[str]]()
"""Node ids collected in this process, deselected ones included."""
PASSED_KEY = pytest.StashKey[dict[str, bool]]()
"""Node id -> every phase so far passed (tests run in this process)."""
SKIPPED_KEY = pytest.StashKey[set[str]]()
"""Node ids pytest skipped in this process (the reports say skipped, not failed)."""
ROOTDIR_NOTE_KEY = pytest.StashKey[str]()
"""Why the project's configuration may have been ignored (config/rootdir.py)."""
PROGRESS_KEY = pytest.StashKey["Callable[[str], None] | None"]()
"""The progress writer this session replaced (put back at its end)."""
WORKER_OUTPUT_KEY = "chunkeval"


def _fail(message: str, config: pytest.Config | None = None) -> NoReturn:
    """Fail the test; with ``config``, explain a configuration pytest ignored."""
    __tracebackhide__ = True
    note = config.stash.get(ROOTDIR_NOTE_KEY, "") if config is not None else ""
    pytest.fail(message + note, pytrace=False)


def _session(config: pytest.Config) -> ChunkevalSession:
    """The run's session, created on first use: a suite that uses no fixture never
    imports the session module (nor anything it loads)."""
    session = config.stash.get(SESSION_KEY, None)
    if session is None:
        from pytest_chunkeval.run.session import ChunkevalSession

        session = ChunkevalSession(
            config.stash[SETTINGS_KEY],
            register=functools.partial(_register, config),
            worker_id=getattr(config, "workerinput", {}).get("workerid", ""),
            distributed=bool(getattr(config.option, "numprocesses", None)),
        )
        collected: list[str] | None = config.stash.get(COLLECTED_KEY, None)
        if collected is not None:  # made after collection
            session.note_collected(collected, selected_by_nodeid(config, collected))
        config.stash[SESSION_KEY] = session
    return session


def _session_at_end(config: pytest.Config) -> ChunkevalSession | None:
    """The session, if the end of the run has work (``end_has_work``); a run that
    never touched the plugin has none and loads nothing."""
    if SESSION_KEY in config.stash:
        return _session(config)
    settings = config.stash.get(SETTINGS_KEY, None)
    collected = config.stash.get(COLLECTED_KEY, [])
    if settings is None or not end_has_work(settings, collected):
        return None
    return _session(config)


def _or_fail(make: Callable[[], T], config: pytest.Config) -> T:
    __tracebackhide__ = True
    try:
        return make()
    except ChunkevalError as exc:
        message = str(exc)
    # Outside the except block: the failure needs no chained traceback.
    _fail(message, config)


# ---------------------------------------------------------------- configuration


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("chunkeval", "chunkeval (retrieval quality of chunking)")
    add_options(group.addoption)
    for option in OPTIONS:
        if option.ini is not None:
            parser.addini(
                option.ini,
                option.help_text(),
                type=option.ini_type,
                default=option.ini_default,
            )


def _register(config: pytest.Config, kind: str, registry: Registry[Any]) -> None:
    getattr(config.hook, f"pytest_chunkeval_register_{kind}")(registry=registry)


def pytest_configure(config: pytest.Config) -> None:
    # Standard library only (the marker's keywords and their validators).
    from pytest_chunkeval.run.marker import MARKER_HELP
    from pytest_chunkeval.util.progress import write_lines_with

    config.addinivalue_line("markers", MARKER_HELP)
    config.stash[ROOTDIR_NOTE_KEY] = _rootdir_note(config)
    # a session inside a session (pytester) puts the outer one's writer back
    config.stash[PROGRESS_KEY] = write_lines_with(
        functools.partial(write_progress, config.pluginmanager)
    )
    try:
        config.stash[SETTINGS_KEY] = resolve_settings(
            config.rootpath,
            {o.ini: config.getini(o.ini) for o in OPTIONS if o.ini is not None},
            {o.dest: config.getoption(o.dest) for o in OPTIONS},
        )
        if config.stash[SETTINGS_KEY].configured:  # a wrong name fails now
            _session(config).components.validate()
    except ChunkevalError as exc:
        note = config.stash[ROOTDIR_NOTE_KEY]
        raise pytest.UsageError(f"chunkeval: {exc}{note}") from None


def _rootdir_note(config: pytest.Config) -> str:
    from pytest_chunkeval.config.rootdir import space_form_note
    from pytest_chunkeval.config.values import parse_path

    params = config.invocation_params
    return space_form_note(
        params.args,
        {o.flag for o in OPTIONS if o.parse is parse_path},
        config_found=config.inipath is not None,
        rootdir=config.rootpath,
        cwd=params.dir,
    )


# --------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def chunkeval_corpus(pytestconfig: pytest.Config) -> Corpus:
    """The corpus configured by ``chunkeval_corpus`` / ``chunkeval_benchmark``."""
    session = _session(pytestconfig)
    return _or_fail(lambda: session.datasets.corpus(session.default_run), pytestconfig)


@pytest.fixture(scope="session")
def chunkeval_queries(pytestconfig: pytest.Config) -> QuerySet:
    """The query set configured by ``chunkeval_queries`` (validated against the
    corpus); a missing file fails with the ``chunkeval generate`` command."""
    session = _session(pytestconfig)
    return _or_fail(lambda: session.datasets.queries(session.default_run), pytestconfig)


@pytest.fixture(scope="session")
def chunkeval_embedder(pytestconfig: pytest.Config) -> Embedder:
    """The embedder ``chunkeval_embedder`` names (default all-MiniLM-L6-v2)."""
    session = _session(pytestconfig)
    run = session.default_run
    return _or_fail(lambda: session.components.embedder(run.embedder), pytestconfig)


@pytest.fixture(scope="session")
def chunkeval_store(pytestconfig: pytest.Config) -> AnyStore:
    """The store ``chunkeval_store`` names (default in-process Chroma)."""
    session = _session(pytestconfig)
    run = session.default_run
    return _or_fail(lambda: session.components.store(run.store), pytestconfig)


@pytest.fixture
def chunkeval_chunker(request: pytest.FixtureRequest) -> Chunker:
    """Each chunker of ``chunkeval_chunkers`` in turn (test ids are the specs)."""
    if not hasattr(request, "param"):
        _fail(
            f"{request.node.nodeid}: chunkeval_chunker is parametrized by the "
            "chunkeval_chunkers setting; it cannot be requested dynamically"
        )
    config = request.config
    return _or_fail(lambda: _session(config).components.chunker(request.param), config)


@pytest.fixture
def chunkeval(request: pytest.FixtureRequest) -> Evaluator:
    """The evaluator for this test: ``chunkeval.evaluate(chunker)`` and
    ``chunkeval.score(retriever)`` return an ``EvalResult`` under the configured
    corpus, queries, embedder, store and k, with the test's
    ``@pytest.mark.chunkeval(...)`` on top; results are memoized per session."""
    item = request.node
    callspec = getattr(item, "callspec", None)
    chunker = callspec.params.get("chunkeval_chunker") if callspec else None
    marker = item.stash.get(MARKER_KEY, None)
    question = getattr(request, "param", None)
    if marker is not None and marker.per_question and question is None:
        _fail(
            f"{item.nodeid}: per_question=True parametrizes the chunkeval fixture "
            "by question; it cannot be requested dynamically"
        )
    from pytest_chunkeval.run.evaluator import Evaluator

    evaluator = Evaluator.for_test(
        _session(request.config),
        item.nodeid,
        marker,
        path=item.path,
        chunker=chunker,
        fail=functools.partial(_fail, config=request.config),
        question=question,
        group=question_group(item) if question is not None else (),
    )
    item.stash[EVALUATOR_KEY] = evaluator
    return evaluator


def _parametrize_questions(metafunc: pytest.Metafunc) -> None:
    """``per_question=True``: the chunkeval fixture over the query set's ids."""
    marks = [(m.args, m.kwargs) for m in metafunc.definition.iter_markers("chunkeval")]
    if not any(kwargs.get("per_question") for _, kwargs in marks):
        return
    from pytest_chunkeval.run.marker import parse_marker
    from pytest_chunkeval.run.per_question import question_ids

    nodeid = metafunc.definition.nodeid
    marker = _or_fail(lambda: parse_marker(marks, nodeid), metafunc.config)
    if "chunkeval" not in metafunc.fixturenames:
        _fail(
            f"{nodeid}: @pytest.mark.chunkeval(per_question=True) makes one item "
            "per question of the chunkeval fixture: request it"
        )
    config = metafunc.config
    ids = _or_fail(lambda: question_ids(_session(config), marker), config)
    metafunc.parametrize("chunkeval", ids, ids=ids, indirect=True)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    _parametrize_questions(metafunc)
    if "chunkeval_chunker" not in metafunc.fixturenames:
        return
    if parametrized_by_user(metafunc.definition.iter_markers("parametrize")):
        return
    session = _session(metafunc.config)
    specs = _or_fail(
        lambda: session.components.chunker_specs(metafunc.definition.nodeid),
        metafunc.config,
    )
    metafunc.parametrize("chunkeval_chunker", specs, ids=specs, indirect=True)


# ------------------------------------------------------------------------ tests


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    marks = [(m.args, m.kwargs) for m in item.iter_markers("chunkeval")]
    if not marks:
        return
    from pytest_chunkeval.run.marker import parse_marker

    try:
        item.stash[MARKER_KEY] = parse_marker(marks, item.nodeid)
        return
    except ChunkevalError as exc:
        message = str(exc)
    _fail(message)


def _record_properties(item: pytest.Item, evaluator: Evaluator | None) -> None:
    if evaluator is None:
        return
    from pytest_chunkeval.run.checks import recorded_properties

    properties, section = recorded_properties(evaluator)
    item.user_properties += properties
    if section is not None:
        item.add_report_section("call", "chunkeval", section)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    # --chunkeval-update records a test's baselines only if it passed otherwise.
    try:
        outcome = yield
    except BaseException as exc:
        evaluator = item.stash.get(EVALUATOR_KEY, None)
        if evaluator is not None:
            evaluator.comparisons.settle(exc)
        _record_properties(item, evaluator)
        raise
    evaluator = item.stash.get(EVALUATOR_KEY, None)
    marker = item.stash.get(MARKER_KEY, None)
    message = None
    try:
        if marker is not None and (
            marker.thresholds or marker.baseline or marker.per_question
        ):
            from pytest_chunkeval.run.checks import after_test

            message = after_test(item.nodeid, marker, evaluator)
        if evaluator is not None:
            message = evaluator.comparisons.settle(message)
    finally:  # with the verdicts of the checks (JUnit XML)
        _record_properties(item, evaluator)
    if message is not None:
        _fail(message)
    if evaluator is not None and evaluator.left_out is not None:
        pytest.skip(evaluator.left_out)
    return outcome


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    # tryfirst: before -k/-m/--lf deselect, whose tests keep their baselines.
    collected = config.stash[COLLECTED_KEY] = [item.nodeid for item in items]
    if SESSION_KEY in config.stash:  # else told when it is made (_session)
        config.stash[SESSION_KEY].note_collected(
            collected, selected_by_nodeid(config, collected)
        )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item,
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    # Only tests whose every phase passed may lose their unused baselines.
    report = yield
    passed = item.config.stash.setdefault(PASSED_KEY, {})
    passed[item.nodeid] = passed.get(item.nodeid, True) and report.passed
    skipped = item.config.stash.setdefault(SKIPPED_KEY, set())
    if report.skipped:
        skipped.add(item.nodeid)
    elif report.failed:  # e.g. a teardown error after the skip: a failure
        skipped.discard(item.nodeid)
    return report


# ---------------------------------------------------------------------- reports


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    chunkeval = _session_at_end(config)
    if chunkeval is None:
        return
    collected = config.stash.get(COLLECTED_KEY, [])
    passed = config.stash.get(PASSED_KEY, {})
    skipped: set[str] = config.stash.get(SKIPPED_KEY, set())
    chunkeval.note_tests(
        collected,
        [n for n, ok in passed.items() if ok],
        selected_by_nodeid(config, collected),
        sorted(skipped),
    )
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller finishes
        workeroutput[WORKER_OUTPUT_KEY] = json.dumps(chunkeval.worker_payload())
    elif chunkeval.finish().failed and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_unconfigure(config: pytest.Config) -> None:
    from pytest_chunkeval.util.progress import write_lines_with

    write_lines_with(config.stash.get(PROGRESS_KEY, None))
    session = config.stash.get(SESSION_KEY, None)
    if session is not None:
        session.components.close()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """pytest-xdist: a worker finished; merge the results it sent."""
    data = getattr(node, "workeroutput", {}).get(WORKER_OUTPUT_KEY)
    if data:
        _session(node.config).merge_payload(json.loads(data))


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    if SESSION_KEY not in config.stash:
        return
    from pytest_chunkeval.run.summary import render_end, render_summary

    session = _session(config)
    lines = render_summary(
        session.summary_rows(),
        verbosity=int(config.getoption("verbose")),
        evaluations=session.evaluations,
        reused=session.reused,
        cached=session.cached,
        extra=session.summary_metrics(),
        verdicts=session.end.verdicts if session.end else None,
    ) + render_end(session.end)
    if lines:
        terminalreporter.write_sep("-", "chunkeval")
        for line in lines:
            terminalreporter.write_line(line)
