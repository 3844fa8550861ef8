"""The names a project's rootdir ``conftest.py`` registers (its
``pytest_chunkeval_register_*`` hooks), for the ``chunkeval`` command: inside a
configured project, ``chunkeval eval`` resolves ``handbook:600`` as ``pytest`` does.

Only the rootdir ``conftest.py`` is read (where hooks must live to be registered
before the plugin checks the configured names, docs/hooks.md), with the
``pythonpath`` ini entries and the rootdir on ``sys.path`` as pytest puts them.
Installed plugins' hooks are not loaded here.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pytest_chunkeval.config.project import Project


@contextmanager
def project_registrations(project: Project) -> Iterator[None]:
    """The names of the project's conftest hooks registered while the command
    runs, and taken back after it (the registries are the process's)."""
    conftest = project.rootdir / "conftest.py"
    if not conftest.is_file():
        yield
        return
    added = [str(p) for p in (project.rootdir, *project.pythonpath)]
    before = list(sys.path)
    sys.path[:0] = [p for p in added if p not in sys.path]
    try:
        module = _load(conftest)
        if module is None:
            yield
            return
        restore = _register_all(_hooks(module))
        try:
            yield
        finally:
            for undo in restore:
                undo()
    finally:
        sys.path[:] = before


def _register_all(register: Any) -> list[Any]:
    """Call ``register(kind, registry)`` for every kind of name a hook may add (as
    the plugin's session does); the functions that take the names back."""
    from pytest_chunkeval.chunkers import CHUNKERS
    from pytest_chunkeval.embedders.registry import EMBEDDERS
    from pytest_chunkeval.judging.specs import JUDGES
    from pytest_chunkeval.relationships.specs import EXTRACTORS
    from pytest_chunkeval.stores import STORES
    from pytest_chunkeval.tokenizers.base import TOKENIZERS

    restore = []
    for kind, registry in (
        ("chunkers", CHUNKERS),
        ("embedders", EMBEDDERS),
        ("stores", STORES),
        ("tokenizers", TOKENIZERS),
        ("judges", JUDGES),
        ("extractors", EXTRACTORS),
    ):
        restore.append(registry.snapshot())
        register(kind, registry)
    return restore


def _load(path: Path) -> Any:
    """The conftest module, or None (with a warning) when it cannot be imported."""
    name = f"_chunkeval_conftest_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:  # pragma: no cover - a .py file
        return None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # a user's file: any error is theirs, say which
        print(
            f"chunkeval: warning: {path} could not be imported "
            f"({type(exc).__name__}: {exc}); the names its hooks register are not "
            "available",
            file=sys.stderr,
        )
        return None
    return module


def _hooks(module: Any) -> Any:
    """A function calling ``module``'s ``pytest_chunkeval_register_KIND`` hooks,
    as :class:`~pytest_chunkeval.run.components.Components` expects."""
    import pluggy

    from pytest_chunkeval import hookspecs

    class Manager(pluggy.PluginManager):
        # pytest takes every ``pytest_*`` function as a hook, marked or not
        def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
            opts = super().parse_hookimpl_opts(plugin, name)
            if opts is None and name.startswith("pytest_chunkeval_register_"):
                return {}
            return opts

    manager = Manager("pytest")
    manager.add_hookspecs(hookspecs)
    manager.register(module)

    def register(kind: str, registry: Any) -> None:
        getattr(manager.hook, f"pytest_chunkeval_register_{kind}")(registry=registry)

    return register
