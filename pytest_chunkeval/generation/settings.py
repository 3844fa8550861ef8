"""A generation run's settings and defaults (the ones a resumed run must repeat),
and its errors."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_chunkeval.errors import UnavailableError

DEFAULT_WINDOW_CHARS = 4000
DEFAULT_MAX_PREVIOUS = 50
DEFAULT_MAX_REFERENCES = 5
DEFAULT_MAX_RETRIES = 5
DEFAULT_TIMEOUT = 120.0
ATTEMPTS_PER_QUERY = 5
"""Default attempt cap: this many attempts per query still missing."""
MAX_CONSECUTIVE_API_ERRORS = 3
"""Give up after this many requests in a row failed even after the client's retries."""
DEFAULT_MAX_UNUSABLE = 5
"""Give up after this many answers in a row that cannot be read at all (not JSON,
no question): a model or endpoint that answers garbage, not a bad window."""

# Settings that change what an accepted query looks like: a resumed run must use
# the same ones, or one file would mix two generations.
RESUME_KEYS = (
    "corpus_hash",
    "model",
    "prompt_version",
    "window_chars",
    "max_references",
    "approximate",
    "max_leakage",
    "multi_excerpt",
    "style_examples",
)
GENERATOR_NAME = "chunkeval generate"


class GenerationError(UnavailableError):
    """Generation cannot start or go on (bad settings, a file from another run,
    a server that keeps failing)."""


class ResumeMismatch(GenerationError):
    """The output file was generated with other settings than this run's."""


@dataclass(frozen=True)
class GenerationSettings:
    """What a generation run does; the header records the settings it depends on."""

    model: str
    n: int
    seed: int | None = None
    window_chars: int = DEFAULT_WINDOW_CHARS
    max_previous: int = DEFAULT_MAX_PREVIOUS
    max_references: int = DEFAULT_MAX_REFERENCES
    max_attempts: int | None = None
    max_unusable: int = DEFAULT_MAX_UNUSABLE
    approximate: float | None = None
    temperature: float | None = None
    json_mode: bool = False
    max_leakage: float | None = None
    """Reject a question whose lexical leakage is above this (generation/harder.py)."""
    multi_excerpt: bool = False
    """Ask for questions whose answer needs two or more passages."""
    style_examples: tuple[str, ...] = ()
    """Real users' questions whose style the prompt asks to imitate."""

    def __post_init__(self) -> None:
        if not self.model.strip():
            raise ValueError("model name is empty")
        if self.n < 1:
            raise ValueError(f"n must be >= 1, got {self.n}")
        if self.window_chars < 200:
            raise ValueError(f"window_chars must be >= 200, got {self.window_chars}")
        if self.max_previous < 0 or self.max_references < 1:
            raise ValueError("max_previous must be >= 0 and max_references >= 1")
        if self.max_attempts is not None and self.max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {self.max_attempts}")
        if self.max_unusable < 1:
            raise ValueError(f"max_unusable must be >= 1, got {self.max_unusable}")
        if self.approximate is not None and not 0 < self.approximate <= 1:
            raise ValueError(
                f"approximate must be a similarity in (0, 1], got {self.approximate}"
            )
        if self.max_leakage is not None and not 0 <= self.max_leakage <= 1:
            raise ValueError(
                f"max_leakage must be a share in [0, 1], got {self.max_leakage}"
            )
        if self.multi_excerpt and self.max_references < 2:
            raise ValueError("multi_excerpt needs max_references >= 2")
        if self.seed is not None and self.seed < 0:
            raise ValueError(f"seed must be >= 0, got {self.seed}")
