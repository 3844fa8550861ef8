"""Opening the evaluation cache a setting names, for the plugin and the CLI alike:
one that cannot be created or used is a one-line error naming the setting; a
read-only one is read and never written (docs/troubleshooting.md, "The cache
directory cannot be written")."""

from __future__ import annotations

from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.errors import FileAccessError
from pytest_chunkeval.util.files import cache_dir_access
from pytest_chunkeval.util.unwritable import PLUGIN_CACHE_SETTING

__all__ = ["PLUGIN_SETTING", "open_cache"]

PLUGIN_SETTING = PLUGIN_CACHE_SETTING
"""How the pytest plugin's users set the cache directory."""


def open_cache(directory: str, setting: str = PLUGIN_SETTING) -> EmbeddingCache:
    """The cache in ``directory``, created if need be and checked before anything
    is embedded; ``setting`` is how the user chose it (named in the error)."""
    try:
        writable = cache_dir_access(directory)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise FileAccessError(
            f"the cache directory {directory} cannot be used ({reason}); set "
            f"{setting} to a writable directory"
        ) from None
    return EmbeddingCache(directory, read_only=not writable)
