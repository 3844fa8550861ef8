"""The project's pytest configuration, read as pytest reads it, for the ``chunkeval``
command: the configuration file pytest would choose (``pytest.ini``,
``.pytest.ini``, ``pyproject.toml``'s ``[tool.pytest.ini_options]``, ``tox.ini``'s
``[pytest]``, ``setup.cfg``'s ``[tool:pytest]``, the nearest upwards from the current
directory), its rootdir, and its ``chunkeval_*`` values, path values resolved against
that rootdir (docs/reference/cli.md, "The project's configuration").

Standard library only (``tomli`` on Python 3.10, which pytest itself requires there).
"""

from __future__ import annotations

import configparser
import shlex
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_chunkeval.config.option import Option
from pytest_chunkeval.config.rootdir import CONFIG_FILES, find_config, find_rootdir
from pytest_chunkeval.config.values import parse_path
from pytest_chunkeval.errors import ConfigError


@dataclass(frozen=True)
class Project:
    """Where ``chunkeval`` runs: pytest's rootdir and configuration file."""

    rootdir: Path
    inifile: Path | None = None
    ini: dict[str, object] = field(default_factory=dict)
    """``chunkeval_*`` keys as pytest's ``getini`` gives them (a string, a list of
    strings for list options); path values absolute."""
    pythonpath: tuple[Path, ...] = ()
    """The ``pythonpath`` ini entries (pytest puts them on ``sys.path``)."""


def find_project(options: Iterable[Option], start: Path | None = None) -> Project:
    """The project the current directory (or ``start``) belongs to, with the
    values of ``options``' ini keys. A configuration file that cannot be read is
    a :class:`ConfigError` naming it."""
    here = (start or Path.cwd()).resolve()
    found = find_config(here)
    if found is None:
        return Project(find_rootdir(here))
    raw = _read(found)
    root = found.parent
    ini: dict[str, object] = {}
    for option in options:
        if option.ini is None or option.ini not in raw:
            continue
        value = _typed(raw[option.ini], option)
        if option.parse is parse_path:
            value = _absolute(value, root)
        ini[option.ini] = value
    paths = raw.get("pythonpath", [])
    items = shlex.split(paths) if isinstance(paths, str) else list(paths)
    return Project(root, found, ini, tuple(root / str(p) for p in items))


def _read(path: Path) -> dict[str, Any]:
    """Every key of pytest's section of ``path``."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    if path.suffix == ".toml":
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover - Python 3.10
            import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from None
        section = data.get("tool", {}).get("pytest", {}).get("ini_options", {})
        return dict(section) if isinstance(section, dict) else {}
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text, source=str(path))
    except configparser.Error as exc:
        raise ConfigError(f"{path}: {exc}") from None
    name = dict(CONFIG_FILES)[path.name] or "pytest"
    return dict(parser[name]) if parser.has_section(name) else {}


def _typed(value: object, option: Option) -> object:
    """What pytest's ``getini`` returns for the key: TOML scalars as strings, a list
    option's string split as a shell would."""
    if option.ini_type == "args":
        if isinstance(value, list):
            return [str(v) for v in value]
        return shlex.split(str(value))
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _absolute(value: object, root: Path) -> object:
    if isinstance(value, list):
        return [str(root / Path(v).expanduser()) for v in value]
    text = str(value).strip()
    return str(root / Path(text).expanduser()) if text else text
