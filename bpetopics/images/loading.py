"""What the image loaders (:mod:`bpetopics.images.datasets`, :mod:`bpetopics.images.cifar`)
share: the data root, one seeded stream per split and use, class-balanced subsets,
downloads checked by md5, and the one error a data file raises."""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import shutil
import tarfile
import tokenize
import urllib.request
import zipfile
import zlib
from pathlib import Path

import numpy as np

from bpetopics.files import atomic_path

SPLITS = {"train": 0, "test": 1}


class ImageSourceError(ValueError):
    """An image data argument, or a data set's file, that cannot be read; the message is
    one line naming the file and the fix."""


#: What reading a damaged data file raises (gzip, zlib, tar, zip, pickle, numpy, PIL).
DAMAGE = (OSError, EOFError, ValueError, KeyError, TypeError, IndexError, AttributeError, OverflowError,
          MemoryError, SyntaxError, tokenize.TokenError, zlib.error, zipfile.BadZipFile, tarfile.TarError,
          pickle.UnpicklingError)


def first_line(exc: BaseException) -> str:
    """The first line of an error's message (its type when it has none)."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


@contextlib.contextmanager
def reading(path, fix: str):
    """Read the data file ``path``: any error doing so (a truncated gzip, random bytes, a
    refused pickle) becomes one :class:`ImageSourceError` line naming it and ``fix``."""
    try:
        yield
    except ImageSourceError:
        raise
    except FileNotFoundError:
        raise ImageSourceError(f"{path} is missing: {fix}") from None
    except DAMAGE as exc:
        raise ImageSourceError(f"{path} is damaged ({first_line(exc)}): {fix}") from None


def default_data_root(data_root=None) -> Path:
    """``data_root`` if given, else $BPETOPICS_DATA, else ``~/.cache/bpetopics``."""
    if data_root is not None:
        return Path(data_root).expanduser()
    env = os.environ.get("BPETOPICS_DATA")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "bpetopics"


def check_split(split: str) -> int:
    """The index of ``split`` ('train' 0, 'test' 1); ValueError for any other."""
    if split not in SPLITS:
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    return SPLITS[split]


def split_rng(random_state, split: str, use: int) -> np.random.Generator:
    """Independent stream per (seed, split, use); ``None`` gives fresh entropy."""
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    return np.random.default_rng([int(random_state), SPLITS[split], use])


def balanced_subset(labels, limit, random_state=0) -> np.ndarray:
    """Sorted indices of a class-balanced random subset of ``limit`` items.

    Each class gets ``limit // C`` items; the remainder goes one each to randomly
    chosen classes. A class with too few items gives all it has and the shortfall is
    drawn from the remaining items of the other classes. ``limit >= N`` keeps all.
    """
    labels = np.asarray(labels)
    n = labels.shape[0]
    if limit is None or limit >= n:
        return np.arange(n)
    if limit < 0:
        raise ValueError("limit must be non-negative")
    rng = random_state if isinstance(random_state, np.random.Generator) else (
        np.random.default_rng(random_state))
    classes = np.unique(labels)
    quota = np.full(classes.size, limit // classes.size)
    quota[rng.choice(classes.size, limit % classes.size, replace=False)] += 1
    chosen, rest = [], []
    for c, q in zip(classes, quota):
        idx = rng.permutation(np.flatnonzero(labels == c))
        chosen.append(idx[:q])
        rest.append(idx[q:])
    chosen = np.concatenate(chosen)
    short = limit - chosen.size
    if short > 0:
        chosen = np.concatenate([chosen, rng.choice(np.concatenate(rest), short, replace=False)])
    return np.sort(chosen)


def _md5(path: Path) -> str:
    h = hashlib.md5()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def download_file(urls, dest: Path, md5: str | None) -> Path:
    """Fetch the first URL that works into ``dest`` (atomically), checking md5."""
    errors = []
    for url in urls:
        try:
            with atomic_path(dest) as tmp:
                with urllib.request.urlopen(url, timeout=60) as resp, open(tmp, "wb") as out:
                    shutil.copyfileobj(resp, out)
                if md5 is not None and _md5(tmp) != md5:
                    raise OSError(f"md5 mismatch for {url}")
            return dest
        except Exception as exc:  # try the next mirror
            errors.append(f"{url}: {exc}")
    raise OSError("download failed:\n  " + "\n  ".join(errors))


def default_cache_dir(cache_dir=None) -> Path | None:
    """Where decoded arrays are cached: ``cache_dir`` if given (``False`` disables
    caching), else $BPETOPICS_CACHE, else ``~/.cache/bpetopics``."""
    if cache_dir is False:
        return None
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    env = os.environ.get("BPETOPICS_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "bpetopics"
