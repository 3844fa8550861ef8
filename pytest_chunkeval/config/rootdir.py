"""pytest's rootdir rule. The directory pytest would use as rootdir: the ``chunkeval``
command resolves its defaults (the embedding cache) against it, so that a command
run in a project shares the cache of the project's test runs; and the note that
explains a rootdir moved by a path flag written with a space. Standard library
only."""

from __future__ import annotations

import configparser
import itertools
import re
from collections.abc import Collection, Sequence
from pathlib import Path

# (file name, the section that makes it pytest's configuration; None: any file)
CONFIG_FILES: tuple[tuple[str, str | None], ...] = (
    ("pytest.ini", None),
    (".pytest.ini", None),
    ("pyproject.toml", "tool.pytest.ini_options"),
    ("tox.ini", "pytest"),
    ("setup.cfg", "tool:pytest"),
)


def _is_pytest_config(path: Path, section: str | None) -> bool:
    if not path.is_file():
        return False
    if section is None:
        return True
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    if path.suffix == ".toml":  # a text check: tomllib is Python 3.11+
        return re.search(r"^\s*\[tool\.pytest\.ini_options\]", text, re.M) is not None
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return False
    return parser.has_section(section)


def find_config(start: Path | None = None) -> Path | None:
    """The configuration file pytest would read for a run started in ``start``
    (default: the current directory) without path arguments: in the nearest
    directory upwards holding one, the first of :data:`CONFIG_FILES`; or None."""
    here = (start or Path.cwd()).resolve()
    for directory in [here, *here.parents]:
        for name, section in CONFIG_FILES:
            if _is_pytest_config(directory / name, section):
                return directory / name
    return None


def find_rootdir(start: Path | None = None) -> Path:
    """pytest's rootdir rule for a run started in ``start`` (default: the current
    directory) without path arguments: the directory of :func:`find_config`'s file;
    else the nearest holding ``pyproject.toml`` or ``setup.py``; else ``start``."""
    here = (start or Path.cwd()).resolve()
    config = find_config(here)
    if config is not None:
        return config.parent
    for directory in [here, *here.parents]:
        if (directory / "pyproject.toml").is_file() or (
            directory / "setup.py"
        ).is_file():
            return directory
    return here


def space_form_note(
    args: Sequence[str],
    path_flags: Collection[str],
    *,
    config_found: bool,
    rootdir: Path,
    cwd: Path,
) -> str:
    """Why pytest may have ignored the project's configuration, or "".

    pytest picks its rootdir and configuration file before it loads plugins, so
    it reads the value of ``--chunkeval-history /tmp/x/h.jsonl`` (a space, not
    ``=``) as a test path: an existing path outside the project moves the rootdir
    there, and the project's ``pyproject.toml`` is not read. ``args``: the
    command line; ``path_flags``: the plugin's path-valued flags.
    """
    if config_found:
        return ""
    for flag, value in itertools.pairwise(args):
        if flag in path_flags and (cwd / value).exists():
            return (
                f"\nNote: pytest found no configuration file (rootdir: {rootdir}). "
                f"'{flag} {value}' has a space where pytest expects '=': pytest "
                "chooses its rootdir and configuration before it knows chunkeval's "
                f"flags, so it took {value} for a test path and did not read the "
                f"project's pyproject.toml or pytest.ini. Write {flag}={value}."
            )
    return ""
