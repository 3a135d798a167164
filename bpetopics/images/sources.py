"""What an image data argument names: a data set of Table 1 or a folder of images.

``bpetopics images train DATASET`` and ``bpetopics images encode RUN IMAGES`` take
either a data set name (``mnist``, ``scaled_mnist``, ``binary_mnist``, ``cifar10``, read
from ``data_root``) or a folder of PNG/JPEG images of one size. :func:`load_images`
returns the images as rows of a float32 matrix in [0, 1] (scaled MNIST: [-s, s]) and a
JSON-safe record (:meth:`ImageData.record`) that an image run keeps in its config.json
under ``"data"``, so that the same images can be read again (resuming a training, or
encoding a data set's test split with a loaded run).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bpetopics.images.loading import ImageSourceError

__all__ = ["DATASET_SHAPES", "ImageData", "ImageSourceError", "load_images", "load_recorded"]

#: Data set name -> (image shape, value range).
DATASET_SHAPES = {"mnist": (28, 28), "scaled_mnist": (28, 28), "binary_mnist": (28, 28),
                  "cifar10": (3, 32, 32)}
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")


@dataclass
class ImageData:
    """Images as rows: ``X`` float32 (N, D), ``labels`` int64 (N,) or None, ``shape``
    the image shape ((H, W) or (C, H, W), channel-major), ``names`` (N,) for a folder."""

    X: np.ndarray
    labels: np.ndarray | None
    shape: tuple
    source: str
    data_root: str | None
    split: str
    limit: int | None
    seed: int
    names: list | None = None

    def fingerprint(self) -> str:
        """sha256 of the image matrix: a resumed training checks it reads the same images."""
        return hashlib.sha256(np.ascontiguousarray(self.X).tobytes()).hexdigest()

    def record(self) -> dict:
        """JSON-safe: what to read again (source, data root, split, limit, seed) and what
        was read (number of images, image shape, value range, fingerprint)."""
        return {"source": self.source, "data_root": self.data_root, "split": self.split,
                "limit": self.limit, "seed": self.seed, "n_images": int(self.X.shape[0]),
                "image_shape": list(self.shape), "min": float(self.X.min()) if self.X.size else 0.0,
                "max": float(self.X.max()) if self.X.size else 0.0, "sha256": self.fingerprint()}


def _read_folder(folder: Path, limit, seed) -> tuple[np.ndarray, tuple, list]:
    from PIL import Image

    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
    if not files:
        raise ImageSourceError(f"{folder} holds no PNG or JPEG image: give a folder of images or a data set "
                               f"({', '.join(DATASET_SHAPES)})")
    if limit is not None and limit < len(files):
        keep = np.sort(np.random.default_rng(seed).choice(len(files), size=limit, replace=False))
        files = [files[i] for i in keep]
    rows, shape = [], None
    for path in files:
        try:
            with Image.open(path) as img:
                arr = np.asarray(img.convert("L") if img.mode in ("1", "L", "LA", "I", "I;16") else
                                 img.convert("RGB"), dtype=np.uint8)
        except OSError as exc:
            raise ImageSourceError(f"{path} is not a readable image ({exc}): remove it from the folder") from None
        arr = arr if arr.ndim == 2 else arr.transpose(2, 0, 1)  # HWC -> CHW
        if shape is None:
            shape = arr.shape
        elif arr.shape != shape:
            raise ImageSourceError(f"{path} has shape {arr.shape} but {files[0].name} has {shape}: "
                                   "the images of a folder must all have one size and mode")
        rows.append(arr.reshape(-1))
    return np.stack(rows).astype(np.float32) / np.float32(255.0), tuple(shape), [p.name for p in files]


def _load_split(name, split, root, limit, seed):
    from bpetopics.images import datasets as ds

    if name == "scaled_mnist":
        return ds.load_scaled_mnist(split, root, limit=limit, random_state=seed)[:2]
    loader = {"mnist": ds.load_mnist, "binary_mnist": ds.load_binarized_mnist, "cifar10": ds.load_cifar10}[name]
    return loader(split, root, limit=limit, random_state=seed)


def load_images(source, data_root=None, *, split="train", limit=None, seed=0) -> ImageData:
    """The images ``source`` names: a data set name (its ``split``, a class-balanced
    seeded subset of ``limit`` images) or a folder of PNG/JPEG images of one size (all of
    them, or ``limit`` drawn with ``seed``; ``split`` is ignored). ImageSourceError (one
    line) when they cannot be read."""
    from bpetopics.images.loading import default_data_root

    if limit is not None and int(limit) < 1:
        raise ImageSourceError(f"--limit must be at least 1, got {limit}")
    name = str(source)
    if name in DATASET_SHAPES:
        root = default_data_root(data_root)
        try:
            X, y = _load_split(name, split, root, limit, seed)
        except FileNotFoundError as exc:
            where = str(exc).splitlines()[0].split("; pass download=True")[0]
            raise ImageSourceError(f"{where}; give --data-root FOLDER where they are (or set $BPETOPICS_DATA)") from None
        return ImageData(np.ascontiguousarray(X, dtype=np.float32), y, DATASET_SHAPES[name], name,
                         str(Path(root).resolve()), split, limit, int(seed))
    folder = Path(source)
    if not folder.is_dir():
        raise ImageSourceError(f"{source} is neither a data set ({', '.join(DATASET_SHAPES)}) nor a folder of "
                               "images")
    X, shape, names = _read_folder(folder, limit, seed)
    return ImageData(X, None, shape, str(folder.resolve()), None, "folder", limit, int(seed), names)


def load_recorded(record: dict, split: str | None = None) -> ImageData:
    """The images a run's ``"data"`` record names again (``split`` replaces its split)."""
    return load_images(record["source"], record.get("data_root"), split=split or record.get("split", "train"),
                       limit=record.get("limit"), seed=record.get("seed", 0))
