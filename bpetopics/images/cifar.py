"""CIFAR-10 loader: python batches, a class-per-folder image tree, or the JPEG tarball.

``load_cifar10`` returns (X, y): X float32 (N, 3072) in [0, 1], y int64 (N,), with
train 50,000 and test 10,000 images. Each row is channel-major, as in the original
python batches and in torch (``X.reshape(-1, 3, 32, 32)``): 1024 red values, then
1024 green, then 1024 blue, each plane row by row.

Sources, searched in this order under ``data_root`` and its sub-folders ``cifar10``,
``CIFAR10``, ``cifar-10`` (the first found wins):

1. ``cifar-10-batches-py/`` (``data_batch_1..5``, ``test_batch``), the exact original.
   These are pickles. Unpickling untrusted data can run arbitrary code, so they are
   read with :class:`RestrictedUnpickler`, which only resolves the few globals needed
   to rebuild numpy arrays and refuses every other one.
2. A class-per-folder image tree ``<split>/<class>/*.{png,jpg,jpeg}`` (the layout of
   torchvision's ImageFolder), decoded with PIL. Folder names must be CIFAR-10 class
   names; labels follow :data:`CIFAR10_CLASSES`.
3. ``cifar10-jpeg.tar.gz`` (the shared lossy JPEG copy, same tree inside). Members are
   decoded straight from the tar, never extracted to disk. A full split, once decoded,
   is cached as a uint8 ``.npz`` in ``cache_dir`` (default $BPETOPICS_CACHE or
   ``~/.cache/bpetopics``; ``cache_dir=False`` disables it); with ``limit`` and no
   cache yet, only the chosen members are decoded.

``download=True`` (only when none of the above is present) fetches the python batches
from the standard URL into ``data_root`` and extracts them safely.
"""

from __future__ import annotations

import gzip
import importlib
import io
import itertools
import os
import pickle
import tarfile
from pathlib import Path

import numpy as np

from bpetopics.files import atomic_path

from bpetopics.images.loading import (
    DAMAGE, ImageSourceError, balanced_subset, check_split, default_cache_dir, default_data_root,
    download_file, reading, split_rng,
)

__all__ = ["CIFAR10_CLASSES", "load_cifar10", "RestrictedUnpickler"]

CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer",
                   "dog", "frog", "horse", "ship", "truck")
CIFAR10_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
CIFAR10_MD5 = "c58f30108f718f92721af3b95e74349a"
BATCHES = {"train": [f"data_batch_{i}" for i in range(1, 6)], "test": ["test_batch"]}
JPEG_TAR = "cifar10-jpeg.tar.gz"
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")
_CLASS_INDEX = {c: i for i, c in enumerate(CIFAR10_CLASSES)}


# ------------------------------------------------------------- restricted unpickling
class RestrictedUnpickler(pickle.Unpickler):
    """An Unpickler that only rebuilds plain containers and numpy arrays.

    ``find_class`` is the only way a pickle can reach code; here it resolves numpy's
    array-reconstruction helpers, ``numpy.ndarray``/``numpy.dtype``, ``_codecs.encode``
    (how Python 3 protocol-2 pickles store bytes) and a few builtin containers, and
    raises ``pickle.UnpicklingError`` for anything else (``os.system``, ``eval``...).
    """

    ALLOWED = frozenset({
        ("numpy", "ndarray"), ("numpy", "dtype"),
        ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
        ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
        ("numpy.core.numeric", "_frombuffer"), ("numpy._core.numeric", "_frombuffer"),
        ("_codecs", "encode"),
        ("builtins", "list"), ("builtins", "dict"), ("builtins", "tuple"),
        ("builtins", "set"), ("builtins", "frozenset"), ("builtins", "bytearray"),
        ("__builtin__", "list"), ("__builtin__", "dict"), ("__builtin__", "tuple"),
        ("__builtin__", "set"), ("__builtin__", "frozenset"), ("__builtin__", "bytearray"),
    })

    def find_class(self, module, name):
        if (module, name) not in self.ALLOWED:
            raise pickle.UnpicklingError(f"global {module}.{name} is not allowed")
        if module == "__builtin__":
            module = "builtins"
        if module.startswith("numpy.core."):  # numpy >= 2 moved numpy.core to numpy._core
            try:
                return getattr(importlib.import_module("numpy._core." + module[11:]), name)
            except ImportError:
                pass
        return getattr(importlib.import_module(module), name)


def _restricted_load(path: Path):
    with open(path, "rb") as fh:
        # latin1 is what numpy arrays pickled by Python 2 need (numpy's own advice).
        return RestrictedUnpickler(fh, encoding="latin1").load()


#: What a message about a damaged CIFAR-10 file tells the user to do.
CIFAR_FIX = ("replace it with the published file: delete cifar-10-batches-py and load with download=True "
             "(bpetopics.images.load_cifar10), or copy intact files there")
TAR_FIX = f"replace {JPEG_TAR} with an intact copy"
IMAGE_FIX = "remove the file or replace it with a 32x32 RGB image"


def _load_python_batches(folder: Path, split: str):
    images, labels = [], []
    for name in BATCHES[split]:
        with reading(folder / name, CIFAR_FIX):
            batch = _restricted_load(folder / name)
            batch = {k.decode() if isinstance(k, bytes) else k: v for k, v in batch.items()}
            data = np.asarray(batch["data"], dtype=np.uint8).reshape(-1, 3072)
            numbers = np.asarray(batch["labels"], dtype=np.int64).reshape(-1)
        if numbers.shape[0] != data.shape[0] or (numbers.size and not 0 <= numbers.min() <= numbers.max() <= 9):
            raise ImageSourceError(f"{folder / name} holds {data.shape[0]:,} images and {numbers.shape[0]:,} "
                                   f"labels, which must be as many and in 0-9: {CIFAR_FIX}")
        images.append(data)
        labels.append(numbers)
    return np.concatenate(images), np.concatenate(labels)


# ------------------------------------------------------------- image tree / tarball
def _decode(data_or_path) -> np.ndarray:
    from PIL import Image

    src = io.BytesIO(data_or_path) if isinstance(data_or_path, bytes) else data_or_path
    with Image.open(src) as img:
        arr = np.asarray(img.convert("RGB"), dtype=np.uint8)
    if arr.shape != (32, 32, 3):
        raise ValueError(f"expected a 32x32 RGB image, got shape {arr.shape}")
    return arr.transpose(2, 0, 1).reshape(-1)  # HWC -> CHW, flattened


def _decode_file(path: Path) -> np.ndarray:
    """A tree's image decoded; ImageSourceError naming the file when it is not one."""
    with reading(path, IMAGE_FIX):
        return _decode(path)


def _tree_files(split_dir: Path):
    names = sorted(p.name for p in split_dir.iterdir() if p.is_dir())
    unknown = [n for n in names if n not in _CLASS_INDEX]
    if unknown:
        raise ImageSourceError(f"{split_dir}: folders {unknown} are not CIFAR-10 classes: move them out")
    files, labels = [], []
    for cls in names:
        for p in sorted((split_dir / cls).iterdir()):
            if p.suffix.lower() in IMAGE_SUFFIXES:
                files.append(p)
                labels.append(_CLASS_INDEX[cls])
    return files, np.asarray(labels, dtype=np.int64)


def _member_label(name: str, split: str):
    parts = name.lstrip("./").split("/")
    if (len(parts) >= 3 and parts[-3] == split and parts[-2] in _CLASS_INDEX
            and parts[-1].lower().endswith(IMAGE_SUFFIXES)):
        return _CLASS_INDEX[parts[-2]]
    return None


def _iter_tar_members(buf: bytes):
    """Yield (name, data) for the regular files of an uncompressed ustar/GNU archive.

    A direct header walk: much faster than ``tarfile`` on 60k tiny members. Each
    header's checksum is verified; archives using extensions this walk does not read
    (pax headers, GNU long names) are handed to ``tarfile`` instead.
    """
    off, view, done = 0, memoryview(buf), 0
    while off + 512 <= len(buf):
        header = buf[off:off + 512]
        if not any(header):
            return  # end-of-archive block
        stored = int(header[148:156].split(b"\0", 1)[0].strip() or b"0", 8)
        if stored != sum(header[:148]) + 256 + sum(header[156:]):
            raise ValueError(f"bad tar header checksum at byte {off}")
        kind = header[156:157]
        if kind not in (b"0", b"\0", b"5", b"1", b"2", b"3", b"4", b"6", b"7"):
            # pax / GNU long-name extensions: let tarfile read the rest
            yield from itertools.islice(_iter_tarfile(buf), done, None)
            return
        name = header[0:100].split(b"\0", 1)[0].decode("utf-8")
        if header[257:262] == b"ustar":
            prefix = header[345:500].split(b"\0", 1)[0].decode("utf-8")
            name = f"{prefix}/{name}" if prefix else name
        size = int(header[124:136].split(b"\0", 1)[0].strip() or b"0", 8)
        if kind in (b"0", b"\0", b"7"):
            yield name, view[off + 512: off + 512 + size]
            done += 1
        off += 512 + -(-size // 512) * 512


def _iter_tarfile(buf: bytes):
    with tarfile.open(fileobj=io.BytesIO(buf), mode="r:") as tf:
        for member in tf:
            if member.isfile():
                yield member.name, tf.extractfile(member).read()


def _tar_split(tar_path: Path, split: str):
    """(list of encoded images, labels) of the split's members, in archive order."""
    blobs, labels = [], []
    with reading(tar_path, TAR_FIX):
        with gzip.open(tar_path, "rb") as fh:
            buf = fh.read()
        for name, data in _iter_tar_members(buf):
            label = _member_label(name, split)
            if label is not None:
                blobs.append(data)
                labels.append(label)
    if not labels:
        raise ImageSourceError(f"{tar_path} holds no '{split}/<class>/<image>' members: {TAR_FIX}")
    return blobs, np.asarray(labels, dtype=np.int64)


def _cache_path(cache: Path | None, tar_path: Path, split: str) -> Path | None:
    if cache is None:
        return None
    return cache / f"cifar10-jpeg-{split}-{tar_path.stat().st_size}.npz"


def _save_cache(path: Path, images, labels) -> None:
    try:
        with atomic_path(path) as tmp, open(tmp, "wb") as fh:
            np.savez(fh, images=images, labels=labels)
    except OSError:  # a read-only cache only costs speed
        pass


def _load_from_tar(tar_path, split, limit, rng, cache):
    cpath = _cache_path(cache, tar_path, split)
    if cpath is not None and cpath.is_file():
        try:
            with np.load(cpath, allow_pickle=False) as z:
                images, labels = z["images"], z["labels"]
            usable = (images.dtype == np.uint8 and images.ndim == 2 and images.shape[1] == 3072
                      and labels.shape == (images.shape[0],) and labels.size and 0 <= labels.min() <= labels.max() <= 9)
        except DAMAGE:
            usable = False             # a damaged cache: decoded again below, and written again
        if usable:
            idx = balanced_subset(labels, limit, rng)
            return images[idx], labels[idx]
    blobs, labels = _tar_split(tar_path, split)
    idx = balanced_subset(labels, limit, rng)
    images = []
    for i in idx:
        with reading(tar_path, TAR_FIX):
            images.append(_decode(bytes(blobs[i])))
    images = np.stack(images) if images else np.zeros((0, 3072), np.uint8)
    if limit is None and cpath is not None:
        _save_cache(cpath, images, labels)
    return images, labels[idx]


# --------------------------------------------------------------------------- loader
def _candidate_dirs(root: Path):
    return [root, root / "cifar10", root / "CIFAR10", root / "cifar-10"]


def _download_cifar(root: Path) -> Path:
    archive = download_file([CIFAR10_URL], root / "cifar-10-python.tar.gz", CIFAR10_MD5)
    with tarfile.open(archive, "r:gz") as tf:
        if hasattr(tarfile, "data_filter"):
            tf.extractall(root, filter="data")
        else:  # Python < 3.11.4: refuse links and paths leaving root
            for m in tf.getmembers():
                target = (root / m.name).resolve()
                if not (m.isfile() or m.isdir()) or root.resolve() not in target.parents:
                    raise ValueError(f"unsafe member in {archive}: {m.name}")
            tf.extractall(root)
    return root / "cifar-10-batches-py"


def load_cifar10(split="train", data_root=None, *, limit=None, random_state=0,
                 download=False, cache_dir=None):
    """CIFAR-10 as (X, y): X float32 (N, 3072) in [0, 1] channel-major, y int64.

    See the module docstring for the sources searched, the pickle policy and caching.
    ``limit`` keeps a class-balanced subset seeded by ``random_state`` (original order).
    """
    check_split(split)
    root = default_data_root(data_root)
    rng = split_rng(random_state, split, 0)
    dirs = _candidate_dirs(root)
    images = labels = None
    batches = next((d / "cifar-10-batches-py" for d in dirs
                    if (d / "cifar-10-batches-py" / BATCHES[split][0]).is_file()), None)
    tree = next((d / split for d in dirs if (d / split).is_dir()
                 and any((d / split / c).is_dir() for c in CIFAR10_CLASSES)), None)
    tar = next((d / JPEG_TAR for d in dirs if (d / JPEG_TAR).is_file()), None)
    if batches is None and tree is None and tar is None:
        if not download:
            raise FileNotFoundError(
                f"no CIFAR-10 under {root}: looked for cifar-10-batches-py/, a "
                f"{split}/<class>/ image tree and {JPEG_TAR} in "
                f"{', '.join(str(d) for d in dirs)}; pass download=True, or set "
                "data_root / $BPETOPICS_DATA")
        batches = _download_cifar(root)
    if batches is not None:
        images, labels = _load_python_batches(batches, split)
    elif tree is not None:
        files, all_labels = _tree_files(tree)
        idx = balanced_subset(all_labels, limit, rng)
        images = np.stack([_decode_file(files[i]) for i in idx]) if len(idx) else np.zeros((0, 3072), np.uint8)
        labels, limit = all_labels[idx], None
    else:
        images, labels = _load_from_tar(tar, split, limit, rng, default_cache_dir(cache_dir))
        limit = None  # already applied
    idx = balanced_subset(labels, limit, rng)
    X = images[idx].astype(np.float32) / np.float32(255.0)
    return X, labels[idx]
