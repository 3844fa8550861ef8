"""One setting of the option table (:mod:`pytest_chunkeval.config.options`): an ini
key, a pytest flag and, where the ``chunkeval`` command takes it, a CLI flag.

Standard library only (the option table is read by ``chunkeval --help``).
"""

from __future__ import annotations

import argparse
import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pytest_chunkeval.errors import ConfigError

IniType = Literal["string", "args", "bool"]


Where = Literal["pytest", "cli", "docs"]
"""Who shows an option: the pytest plugin (``--chunkeval-NAME``, an ini key), the
``chunkeval`` command (``--NAME``), or the reference page (both)."""

_RELATIVE = {
    "pytest": "relative to rootdir",
    "cli": "relative to the current directory",
    "docs": "relative to rootdir (a `chunkeval` command flag: to the current "
    "directory)",
}


@dataclass(frozen=True)
class MarkerValue:
    """How ``@pytest.mark.chunkeval(NAME=value)`` takes an option: the Python
    types it accepts (checked before the option's own parser reads the value as
    its text) and what it expects, for the message that refuses another type."""

    types: tuple[type, ...]
    expects: str
    """``must be {expects}, got {type} {value!r}``."""
    many: bool = False
    """A value or a list of values (a tuple comes out)."""

    def read(self, parse: Callable[[str], Any], value: object) -> Any:
        """``value`` checked and parsed; :class:`ConfigError` says what was
        expected."""
        items = value if self.many and isinstance(value, (list, tuple)) else [value]
        if self.many and not items:
            raise self._refuse(value)
        parsed = []
        for item in items:
            if isinstance(item, bool) and bool not in self.types:
                raise self._refuse(value)
            if not isinstance(item, self.types):
                raise self._refuse(value)
            # a path as its text; a number as it is (its parser takes it too)
            given: Any = os.fspath(item) if isinstance(item, os.PathLike) else item
            parsed.append(parse(given))
        return tuple(parsed) if self.many else parsed[0]

    def _refuse(self, value: object) -> ConfigError:
        return ConfigError(
            f"must be {self.expects}, got {type(value).__name__} {value!r}"
        )


@dataclass(frozen=True)
class Option:
    """One setting: ini key ``chunkeval_<name>``, pytest flag ``--chunkeval-<name>``
    and, where the ``chunkeval`` command takes it, CLI flag ``--<name>``.

    ``parse`` is the option's validator: pytest, the CLI, the ini reader and the
    marker all call it, so a value is accepted or refused the same way everywhere.
    """

    name: str
    help: str
    """The description; ``{relative}`` becomes "relative to rootdir" in pytest and
    "relative to the current directory" in the CLI."""
    parse: Callable[[str], Any] = str
    """Parses and validates one command-line value (and one ini value, or each ini
    list item); raises :class:`~pytest_chunkeval.errors.ConfigError`."""
    ini_type: IniType | None = "string"
    """``args``: a list (TOML list, or whitespace-separated in ini files); ``bool``:
    ``true``/``false``; ``None``: a command-line flag only, no ini key."""
    metavar: str = "VALUE"
    multiple: bool = False
    """The flag may be repeated; the values are concatenated."""
    switch: bool = False
    """The flag takes no value (``--chunkeval-update``); its ini key is a bool."""
    default_text: str = ""
    """The default as shown in ``--help`` and the docs."""
    cli_name: str = ""
    """The CLI flag's name when it differs (``--chunker`` for ``chunkers``)."""
    default: Any = None
    """The value when nothing sets it (None: unset, the engine decides); the
    evaluation spec (``config/evaluation.py``) takes its defaults from here."""
    marker: MarkerValue | None = None
    """How ``@pytest.mark.chunkeval`` takes it; None: the marker does not."""

    def marker_value(self, value: object) -> Any:
        """A marker keyword's value, checked by the table's own parser."""
        if self.marker is None:
            raise ConfigError(f"{self.name} is not a marker keyword")
        return self.marker.read(self.parse, value)

    @property
    def ini(self) -> str | None:
        """The ini key, or None for a command-line-only flag."""
        return None if self.ini_type is None else f"chunkeval_{self.name}"

    @property
    def flag(self) -> str:
        """The pytest flag."""
        return "--chunkeval-" + self.name.replace("_", "-")

    @property
    def cli_flag(self) -> str:
        """The ``chunkeval`` command's flag."""
        return "--" + (self.cli_name or self.name).replace("_", "-")

    @property
    def dest(self) -> str:
        """The attribute the parsed value lands on, in pytest and in the CLI."""
        return f"chunkeval_{self.name}"

    def describe(self, where: Where = "pytest") -> str:
        """The description without the default."""
        return self.help.format(relative=_RELATIVE[where])

    def help_text(self, where: Where = "pytest") -> str:
        """The description and the default, as ``--help`` shows them."""
        default = self.default_text or ("off" if self.switch else "unset")
        return f"{self.describe(where)} Default: {default}."

    def argparse_kwargs(self, where: Where = "pytest") -> dict[str, Any]:
        """Keyword arguments of ``addoption`` / ``add_argument`` for the flag.

        The parsed value is None when the flag is not given: the default is applied
        where settings are combined (:func:`resolve_settings`), once for both."""
        # argparse %-formats help texts ("recall:-1%" would break --help).
        text = self.help_text(where).replace("%", "%%")
        if self.switch:
            return {
                "dest": self.dest,
                "action": "store_true",
                "default": None,
                "help": text,
            }
        return {
            "dest": self.dest,
            "metavar": self.metavar,
            "type": argparse_type(self.parse),
            "action": "append" if self.multiple else "store",
            "default": None,
            "help": text + (" Repeatable." if self.multiple else ""),
        }

    @property
    def ini_default(self) -> object:
        """What pytest returns for the ini key when it is not set."""
        return {"args": [], "bool": False}.get(self.ini_type or "", "")


def argparse_type(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """``parse`` as an argparse ``type``: the one place a validator's
    :class:`~pytest_chunkeval.errors.ConfigError` becomes the
    ``ArgumentTypeError`` argparse (and so pytest) reports as a usage error."""

    @functools.wraps(parse)  # argparse names the type in its messages
    def convert(value: str) -> Any:
        try:
            return parse(value)
        except ConfigError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    converter: Callable[[str], Any] = convert
    return converter
