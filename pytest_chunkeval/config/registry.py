"""Name -> factory registries behind spec strings such as ``recursive:200:0``.

Built-in chunkers, embedders, stores and tokenizers register here with a
:class:`Signature` (their positional arguments, ``?options`` and ``@`` spec, each with
its default), which gives every spec one canonical form (:meth:`Registry.canonical`):
``recursive:200`` and ``recursive:200:0`` are one chunker. The pytest hooks
``pytest_chunkeval_register_*`` add more (see ``hookspecs.py``). The core never needs
pluggy: a registry is a plain mapping. The syntax itself is in ``specs.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pytest_chunkeval.config.specs import Spec, SpecError, format_spec, parse

T = TypeVar("T")

Factory = Callable[..., T]
"""With a :class:`Signature`: called with the converted arguments (positional, then
options and the ``@`` spec as keywords). Without: called with everything after
``name:`` as one string (``""`` for a bare name), as hooks have always done."""


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()
"""The default of a parameter that must be given."""


class UnknownSpec(SpecError):
    """A spec string names nothing registered, or its arguments are wrong."""


@dataclass(frozen=True)
class Param:
    """One argument of a spec: positional (``SIZE``) or an option (``?window=N``)."""

    name: str
    """The keyword the factory receives (and the option's key)."""
    convert: Callable[[str], Any] = str
    """Text -> value; a ``ValueError`` says what is wrong (``must be >= 1``)."""
    default: Any = REQUIRED
    """The value when left out (``None``: absent, the factory decides)."""
    show_default: bool = False
    """Print the argument in the canonical form even at its default
    (``recursive:200:0``: the overlap is always shown)."""
    rest: bool = False
    """The last positional argument takes all remaining ``:``-separated parts
    (model names such as ``llama3:8b``, Windows paths)."""
    metavar: str = ""
    """Its name in forms and messages (default: ``NAME`` upper-cased)."""

    @property
    def shown_as(self) -> str:
        return self.metavar or self.name.upper()

    def value(self, text: str, *, option: bool = False) -> Any:
        try:
            return self.convert(text)
        except (TypeError, ValueError) as exc:
            what = f"option {self.name}={text!r}:" if option else self.name.upper()
            raise UnknownSpec(f"{what} {exc}") from None

    def is_default(self, value: Any) -> bool:
        return self.default is not REQUIRED and value == self.default


@dataclass(frozen=True)
class Nested:
    """The ``@SPEC`` part: a spec of another registry (a chunker's embedder)."""

    name: str
    registry: Registry[Any]
    default: str
    """The spec used when ``@`` is left out; ``@`` that spec is the same chunker."""
    metavar: str = ""

    @property
    def shown_as(self) -> str:
        return self.metavar or self.name.upper()


@dataclass(frozen=True)
class Signature:
    """What a registered name accepts, with defaults: the basis of its canonical
    form and of the form shown in errors and docs."""

    args: tuple[Param, ...] = ()
    options: tuple[Param, ...] = ()
    nested: Nested | None = None

    def form(self, name: str) -> str:
        """``recursive:SIZE[:OVERLAP]``, ``llm:MODEL[?attempts=N&window=N]``..."""
        out, closing = name, ""
        for param in self.args:
            if param.default is REQUIRED:
                out += f"{closing}:{param.shown_as}"
                closing = ""
            else:
                out += f"[:{param.shown_as}"
                closing += "]"
        out += closing
        if self.options:
            keys = "&".join(f"{p.name}={p.shown_as}" for p in self.options)
            out += f"[?{keys}]"
        if self.nested is not None:
            out += f"[@{self.nested.shown_as}]"
        return out


@dataclass(frozen=True)
class Bound:
    """A spec's converted values, defaults filled in."""

    args: tuple[Any, ...]
    options: dict[str, Any]
    nested: Spec | None
    """The canonical ``@`` spec, None when it is the default."""


def value_text(value: Any) -> str:
    """A value as the canonical form prints it: ``200``, ``92.5``, ``mean``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


class Registry(Generic[T]):
    """Factories by name, each with the spec forms it accepts.

    ``bare`` (tokenizers: ``"tiktoken"``) makes an unregistered bare name ``N``
    mean ``bare:N``, and ``bare:N`` print as ``N`` (``cl100k_base``).
    """

    def __init__(self, kind: str, *, bare: str | None = None) -> None:
        self.kind = kind
        self.bare = bare
        self._factories: dict[str, Factory[T]] = {}
        self._forms: dict[str, str] = {}
        self._signatures: dict[str, Signature] = {}
        self._on_change: list[Callable[[], None]] = []

    def on_change(self, forget: Callable[[], None]) -> None:
        """Call ``forget`` whenever a registration changes what a spec builds: a
        memo of built objects by spec (one model loaded once) must not hand out
        what an earlier factory built."""
        self._on_change.append(forget)

    def _changed(self) -> None:
        for forget in self._on_change:
            forget()

    def register(
        self,
        name: str,
        factory: Factory[T],
        form: str | None = None,
        *,
        signature: Signature | None = None,
    ) -> None:
        """Register ``factory`` for specs ``name`` or ``name:ARGS``.

        With a ``signature`` the factory receives converted values and the spec has
        a canonical form; without, it receives the text after ``name:``. ``form``
        documents the accepted spec (default: derived from the signature) and is
        listed in error messages. A later registration of a name replaces it.
        """
        Spec(name)  # the name must fit the grammar
        self._factories[name] = factory
        if signature is None:
            self._signatures.pop(name, None)
        else:
            self._signatures[name] = signature
        self._forms[name] = form or (
            signature.form(name) if signature is not None else name
        )
        # A new name changes what a memo may hold too: the stores remember by
        # name what a store object given under it declared (stores.portable_spec).
        self._changed()

    def snapshot(self) -> Callable[[], None]:
        """A function that puts back what is registered now (a pytest session's
        hook registrations must not outlive it in the process)."""
        factories, forms = dict(self._factories), dict(self._forms)
        signatures = dict(self._signatures)

        def restore() -> None:
            changed = self._factories != factories
            self._factories, self._forms = dict(factories), dict(forms)
            self._signatures = dict(signatures)
            if changed:
                self._changed()

        return restore

    def __contains__(self, name: object) -> bool:
        return name in self._factories

    def __iter__(self) -> Iterator[str]:
        return iter(self._factories)

    def forms(self) -> list[str]:
        """The documented spec forms, sorted."""
        return sorted(self._forms.values())

    def form(self, name: str) -> str:
        """The documented form of one registered name."""
        return self._forms[name]

    def signature(self, name: str) -> Signature | None:
        """The signature ``name`` was registered with (None: a free-form factory)."""
        return self._signatures.get(name)

    # -- canonical form ---------------------------------------------------------

    def _parsed(self, spec: str | Spec) -> Spec:
        try:
            parsed = parse(spec, self.kind) if isinstance(spec, str) else spec
        except SpecError as exc:
            raise UnknownSpec(
                f"{exc}; valid forms: {', '.join(self.forms())}"
            ) from None
        name = parsed.name
        if name not in self._factories:
            if self.bare in self._factories and parsed == Spec(name):
                return Spec(self.bare, (name,))
            raise UnknownSpec(
                f"unknown {self.kind} {_shown(spec)}; valid forms: "
                f"{', '.join(self.forms())}"
            )
        return parsed

    def bind(self, spec: str | Spec) -> tuple[Spec, Bound | None]:
        """The spec (bare names resolved) and its values, or None for a free-form
        factory; an :class:`UnknownSpec` says what is wrong and the valid form."""
        parsed = self._parsed(spec)
        signature = self._signatures.get(parsed.name)
        if signature is None:
            return parsed, None
        try:
            return parsed, _bind(signature, parsed)
        except UnknownSpec as exc:
            raise UnknownSpec(
                f"bad {self.kind} spec {_shown(spec)} ({exc}); expected "
                f"{self._forms[parsed.name]}"
            ) from None

    def canonical(self, spec: str | Spec) -> Spec:
        """The one spec of every equivalent spelling: defaults filled in where the
        signature shows them, left out elsewhere, options sorted."""
        parsed, bound = self.bind(spec)
        if bound is None:
            return parsed
        signature = self._signatures[parsed.name]
        texts = [value_text(v) for v in bound.args]
        shown = len(signature.args)
        # Trailing arguments at their default (and not always shown) are left out.
        while shown and _omitted(signature.args[shown - 1], bound.args[shown - 1]):
            shown -= 1
        # Spec arguments hold no ':': a value that has some (a model such as
        # llama3:8b) is printed as the parts it was written in.
        args = tuple(
            a
            for t in texts[:shown]
            for a in ([t] if t.startswith("//") else t.split(":"))
        )
        options = tuple(
            (p.name, value_text(bound.options[p.name]))
            for p in sorted(signature.options, key=lambda p: p.name)
            if bound.options[p.name] is not None
            and not p.is_default(bound.options[p.name])
        )
        out = Spec(parsed.name, args, options, bound.nested)
        if (
            self.bare == out.name
            and len(out.args) == 1
            and not out.options
            and out.inner is None
            and out.args[0] not in self._factories
            and _is_name(out.args[0])
        ):
            return Spec(out.args[0])
        return out

    def label(self, spec: str | Spec) -> str:
        """The canonical spec as text: display label, test id, baseline file name."""
        return format_spec(self.canonical(spec))

    # -- building ---------------------------------------------------------------

    def create(self, spec: str | Spec) -> T:
        """Build the object a spec string names, with a helpful error if it can't."""
        parsed, bound = self.bind(spec)
        factory = self._factories[parsed.name]
        try:
            if bound is None:
                text = format_spec(parsed)
                return factory(text[len(parsed.name) :].removeprefix(":"))
            signature = self._signatures[parsed.name]
            kwargs = dict(bound.options)
            if signature.nested is not None:
                kwargs[signature.nested.name] = (
                    None if bound.nested is None else format_spec(bound.nested)
                )
            return factory(*bound.args, **kwargs)
        except UnknownSpec:
            raise
        except (TypeError, ValueError) as exc:
            raise UnknownSpec(
                f"bad {self.kind} spec {_shown(spec)} ({exc}); expected "
                f"{self._forms[parsed.name]}"
            ) from exc


def _shown(spec: str | Spec) -> str:
    return repr(spec if isinstance(spec, str) else format_spec(spec))


def _is_name(text: str) -> bool:
    try:
        Spec(text)
    except SpecError:
        return False
    return True


def _omitted(param: Param, value: Any) -> bool:
    if value is None:
        return True
    return not param.show_default and param.is_default(value)


def _bind(signature: Signature, spec: Spec) -> Bound:
    params = signature.args
    given = list(spec.args)
    if params and params[-1].rest and len(given) > len(params):
        keep = len(params) - 1
        given = [*given[:keep], ":".join(given[keep:])]
    required = sum(1 for p in params if p.default is REQUIRED)
    if len(given) < required:
        missing = params[len(given)].name.upper()
        raise UnknownSpec(f"{missing} is required")
    if given and not params:
        raise UnknownSpec("takes no arguments")
    if len(given) > len(params):
        raise UnknownSpec(
            f"{len(given)} argument(s) given, at most {len(params)} accepted"
        )
    args = tuple(
        p.value(given[i]) if i < len(given) else p.default for i, p in enumerate(params)
    )
    by_key = {p.name: p for p in signature.options}
    options = {p.name: p.default for p in signature.options}
    for key, text in spec.options:
        param = by_key.get(key)
        if param is None:
            valid = ", ".join(sorted(by_key)) or "none"
            raise UnknownSpec(f"unknown option {key!r}; valid: {valid}")
        options[key] = param.value(text, option=True)
    nested = None
    if spec.inner is not None:
        if signature.nested is None:
            raise UnknownSpec("takes no '@' spec")
        inner = signature.nested.registry.canonical(spec.inner)
        default = signature.nested.registry.canonical(signature.nested.default)
        nested = None if inner == default else inner
    return Bound(args, options, nested)


# ------------------------------------------------------------------ converters


def parse_options(
    rest: str, allowed: dict[str, Callable[[str], Any]]
) -> tuple[str, dict[str, Any]]:
    """For free-form factories: split ``ARGS?key=value&...`` with the grammar and
    convert each value with ``allowed[key]``; an unknown key or a bad value is a
    ``ValueError``. Returns the positional text (``:``-joined) and the options."""
    spec = parse(f"x:{rest}" if rest and not rest.startswith("?") else f"x{rest}")
    options: dict[str, Any] = {}
    for key, value in spec.options:
        if key not in allowed:
            raise ValueError(
                f"unknown option {key!r}; valid: {', '.join(sorted(allowed))}"
            )
        try:
            options[key] = allowed[key](value)
        except ValueError as exc:
            raise ValueError(f"option {key}={value!r}: {exc}") from exc
    inner = "" if spec.inner is None else "@" + format_spec(spec.inner)
    return ":".join(spec.args) + inner, options


def integer(text: str) -> int:
    """An integer argument."""
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"must be an integer, got {text!r}") from None


def positive_int(value: str) -> int:
    """An integer >= 1 (a spec argument)."""
    number = integer(value)
    if number < 1:
        raise ValueError(f"must be >= 1, got {number}")
    return number


def non_negative_int(value: str) -> int:
    """An integer >= 0 (a spec argument)."""
    number = integer(value)
    if number < 0:
        raise ValueError(f"must be >= 0, got {number}")
    return number


def positive_float(value: str) -> float:
    """A finite number > 0 (a spec argument)."""
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"must be a number, got {value!r}") from None
    if not math.isfinite(number) or number <= 0:
        raise ValueError(f"must be a positive number, got {value!r}")
    return number


def choice(*values: str) -> Callable[[str], str]:
    """One of ``values``."""

    def convert(text: str) -> str:
        if text not in values:
            raise ValueError(f"must be {' or '.join(map(repr, values))}, got {text!r}")
        return text

    return convert
