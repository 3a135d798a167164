"""numba's on-disk cache of the package's kernels, keyed by the sources of their folder.

numba files a cached kernel under the file that defines it, and loads the machine code
again as long as that file is unchanged. A kernel that calls a compiled function of
another module (the pursuit's loop calls the pieces of ``pursuit_loops``, the split
checks call ``two_means``) holds that function's code too, yet its cache entry does not
notice a change to the other module. After such an edit, or an upgrade that changed only
the other module (pip leaves numba's files in ``__pycache__`` when it removes a version),
numba would load the old machine code and run it beside the new Python.

:func:`cached_njit` compiles a kernel with ``cache=True`` under a name that carries a
fingerprint of every module of its ``compiled/`` folder (numba names its cache files
after the function), so that a change to any of them compiles that folder's kernels
again. Entries of other fingerprints are removed from the folder's ``__pycache__``.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import types
from pathlib import Path

import numba

#: Hex digits of the folder's SHA-256 in a kernel's cached name.
FINGERPRINT_DIGITS = 12
#: numba's cache files: an index and the machine code of each compiled signature.
CACHE_SUFFIXES = (".nbi", ".nbc")


@functools.lru_cache(maxsize=None)
def sources_fingerprint(folder: str) -> str:
    """The first :data:`FINGERPRINT_DIGITS` hex digits of the SHA-256 of the ``*.py``
    files of ``folder`` (names and contents, in name order): it changes with any of
    them, and only with them (not with their modification times)."""
    digest = hashlib.sha256()
    for path in sorted(Path(folder).glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:FINGERPRINT_DIGITS]


@functools.lru_cache(maxsize=None)
def remove_stale_entries(folder: str, fingerprint: str) -> int:
    """Remove the numba cache files in ``folder/__pycache__`` whose names do not carry
    ``fingerprint`` (entries of earlier sources); return how many. Once per folder and
    process; a file that cannot be removed (a read-only install, where numba caches
    elsewhere) is left, as it will not be loaded."""
    removed = 0
    cache = Path(folder) / "__pycache__"
    if not cache.is_dir():
        return removed
    for path in cache.iterdir():
        if path.suffix in CACHE_SUFFIXES and f"_{fingerprint}-" not in path.name:
            try:
                path.unlink()
                removed += 1
            except OSError:
                pass
    return removed


def renamed(func: types.FunctionType, suffix: str) -> types.FunctionType:
    """A copy of ``func`` named ``<name><suffix>`` (qualified name too), for numba to cache
    under that name (its cache files are named after the function); ``func`` itself is
    left as it is."""
    copy = types.FunctionType(func.__code__, func.__globals__, func.__name__ + suffix,
                              func.__defaults__, func.__closure__)
    copy.__kwdefaults__ = func.__kwdefaults__
    copy.__doc__, copy.__module__ = func.__doc__, func.__module__
    copy.__qualname__ = func.__qualname__ + suffix
    return copy


def fingerprinted(func: types.FunctionType) -> types.FunctionType:
    """``func`` :func:`renamed` ``<name>_<fingerprint>`` (:func:`sources_fingerprint` of
    the folder of the file that defines it), the folder's stale entries removed."""
    folder = os.path.dirname(os.path.abspath(inspect.getfile(func)))
    fingerprint = sources_fingerprint(folder)
    remove_stale_entries(folder, fingerprint)
    return renamed(func, f"_{fingerprint}")


def cached_njit(**options):
    """``numba.njit(cache=True, **options)`` for a kernel of a ``compiled/`` folder,
    cached under its :func:`fingerprinted` name. A decorator, ``@cached_njit(nogil=True)``,
    or a call, ``cached_njit(nogil=True)(func)``."""
    def compile_cached(func):
        return numba.njit(cache=True, **options)(fingerprinted(func))
    return compile_cached
