"""Where baselines live: file names from test ids (safe on every OS) and the
``__chunkeval__/<module>/`` layout next to the tests, or under an override."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

BASELINE_DIRNAME = "__chunkeval__"
_MAX_STEM_BYTES = 150
_UNSAFE = re.compile(r"[^\w.\-\[\]=,+@()]")
_WINDOWS_RESERVED = frozenset(
    {"CON", "PRN", "AUX", "NUL"}
    | {f"COM{i}" for i in range(1, 10)}
    | {f"LPT{i}" for i in range(1, 10)}
)


def sanitize_name(name: str) -> str:
    """A test id as a portable, readable file name stem, one per id.

    ``TestA::test_b[recursive:200:0]`` -> ``TestA.test_b[recursive_200_0]-1a2b3c4d``:
    characters that some file system rejects become ``_``, and whenever that
    changed the id, a short hash of the original id is appended, so two ids never
    share a file (``[a:b]`` and ``[a_b]``). ``::`` before the parameters becomes
    ``.`` (no hash: a test name holds no ``.``); a stem too long for a file name
    keeps its start and a hash of the full id.
    """
    safe = legacy_sanitize_name(name)
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()
    if safe == _readable(name) or safe.endswith(f"-{digest[:12]}"):
        return safe  # unchanged, or already carrying a hash of the whole id
    return f"{safe}-{digest[:8]}"


def _readable(name: str) -> str | None:
    """``name`` with only the reversible change, ``::`` before its parameters
    becoming ``.`` (None when the name already has a ``.`` there)."""
    head, bracket, params = name.partition("[")
    if "." in head:
        return None
    return head.replace("::", ".") + bracket + params


def legacy_sanitize_name(name: str) -> str:
    """The file name stem of a test id before names were injective (two ids could
    share one); :mod:`pytest_chunkeval.gate.files.legacy` finds files named so."""
    safe = _UNSAFE.sub("_", name.replace("::", "."))
    safe = safe.strip(" .") or "_"
    if safe.split(".")[0].upper() in _WINDOWS_RESERVED:
        safe = "_" + safe
    if len(safe.encode("utf-8")) > _MAX_STEM_BYTES:
        digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:12]
        head = safe.encode("utf-8")[: _MAX_STEM_BYTES - 13].decode("utf-8", "ignore")
        safe = f"{head}-{digest}"
    return safe


def nodeid_name(nodeid: str) -> str:
    """The part of a pytest node id after the file: ``TestA::test_b[x]``."""
    _, sep, rest = nodeid.partition("::")
    return rest if sep else nodeid


@dataclass(frozen=True)
class NodeRef:
    """A test as the store knows it: pytest node id and the test file's path."""

    nodeid: str
    path: Path

    @property
    def name(self) -> str:
        return nodeid_name(self.nodeid)

    @classmethod
    def from_nodeid(cls, nodeid: str, rootdir: str | os.PathLike[str]) -> NodeRef:
        """From a rootdir-relative node id alone (what xdist reports carry)."""
        file_part = nodeid.partition("::")[0]
        return cls(nodeid, Path(rootdir, file_part))


@dataclass(frozen=True)
class BaselineLayout:
    """Where baselines live.

    Default: ``<test dir>/__chunkeval__/<module>/``. With ``directory`` (relative
    paths resolve against ``rootdir``): ``<directory>/<test file path relative to
    rootdir, without .py>/``, so same-named modules in two folders stay apart.
    """

    directory: Path | None = None
    rootdir: Path | None = None

    def _root_dir(self) -> Path:
        return Path(self.rootdir) if self.rootdir is not None else Path.cwd()

    def _override(self) -> Path | None:
        if self.directory is None:
            return None
        return absolute(self._root_dir() / self.directory)

    def module_dir(self, test_file: str | os.PathLike[str]) -> Path:
        """The directory holding one test module's baselines."""
        test_file = absolute(Path(test_file))
        override = self._override()
        if override is None:
            return test_file.parent / BASELINE_DIRNAME / test_file.stem
        try:
            rel = test_file.relative_to(absolute(self._root_dir()))
        except ValueError:
            rel = Path(test_file.name)
        return override / rel.with_suffix("")

    def path(
        self, test_file: str | os.PathLike[str], test: str, name: str | None = None
    ) -> Path:
        """The baseline file of ``test`` (its node id or name) in ``test_file``;
        ``name`` tells apart several baselines of one test."""
        stem = sanitize_name(nodeid_name(test))
        if name:
            stem = f"{stem}.{sanitize_name(name)}"
        return self.module_dir(test_file) / f"{stem}.json"

    def legacy_path(
        self, test_file: str | os.PathLike[str], test: str, name: str | None = None
    ) -> Path:
        """Where :meth:`path` put the file before names were injective."""
        stem = legacy_sanitize_name(nodeid_name(test))
        if name:
            stem = f"{stem}.{legacy_sanitize_name(name)}"
        return self.module_dir(test_file) / f"{stem}.json"

    def scan_root(self, test_file: str | os.PathLike[str]) -> Path:
        """The directory to scan for unused files next to ``test_file``."""
        override = self._override()
        return override if override is not None else self.module_dir(test_file).parent

    def test_file_of(self, module_dir: Path) -> Path:
        """The test file whose baselines ``module_dir`` holds (inverse mapping)."""
        override = self._override()
        if override is None:
            return module_dir.parent.parent / f"{module_dir.name}.py"
        rel = module_dir.relative_to(override)
        return absolute(self._root_dir()) / rel.parent / f"{rel.name}.py"

    def empty_candidates(self, file: Path) -> list[Path]:
        """Directories above a baseline file to remove once empty, innermost first:
        its module directory and ``__chunkeval__``, never the configured directory."""
        file = absolute(file)
        override = self._override()
        if override is None:
            module = file.parent
            return (
                [module, module.parent]
                if module.parent.name == BASELINE_DIRNAME
                else [module]
            )
        out = []
        for parent in file.parents:
            if parent == override or override not in parent.parents:
                break
            out.append(parent)
        return out

    def files_under(self, root: Path) -> list[Path]:
        """Baseline files below one scan root."""
        if not root.is_dir():
            return []
        pattern = "*/*.json" if self._override() is None else "**/*.json"
        return sorted(p for p in root.glob(pattern) if p.is_file())


def absolute(path: Path) -> Path:
    """``path`` made absolute without resolving symlinks (how the store keys files)."""
    return Path(os.path.abspath(path))


def real(path: Path) -> Path:
    """``path`` with symlinks resolved."""
    return Path(os.path.realpath(path))


def owns(test: str, stem: str) -> bool:
    """Whether a baseline file stem belongs to test id ``test`` (its first
    file, or a numbered or named one: ``<test>.2``, ``<test>.<name>``)."""
    for own in (sanitize_name(test), legacy_sanitize_name(test)):
        if stem == own or stem.startswith(own + "."):
            return True
    return False


def baselines_exist(
    nodeids: Iterable[str],
    rootdir: str | os.PathLike[str],
    directory: str | os.PathLike[str] | None = None,
) -> bool:
    """True when baseline files exist where the test files of ``nodeids`` keep
    theirs: a session in which no test checked a baseline must still look for
    unused ones then (one directory scan per baseline root)."""
    layout = BaselineLayout(
        None if directory is None else Path(directory), Path(rootdir)
    )
    files = {n.partition("::")[0] for n in nodeids}
    roots = {layout.scan_root(Path(rootdir, f)) for f in files}
    return any(layout.files_under(root) for root in roots)


def baseline_path(
    test_file: str | os.PathLike[str],
    test: str,
    *,
    name: str | None = None,
    directory: str | os.PathLike[str] | None = None,
    rootdir: str | os.PathLike[str] | None = None,
) -> Path:
    """``<test dir>/__chunkeval__/<module>/<test>.json`` (see :class:`BaselineLayout`).

    ``test`` is the node id or the test's name (``test_x[recursive:200:0]``).
    """
    layout = BaselineLayout(
        None if directory is None else Path(directory),
        None if rootdir is None else Path(rootdir),
    )
    return layout.path(test_file, test, name)
