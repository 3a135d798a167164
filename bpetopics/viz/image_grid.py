"""Grids of images as PNG files, from plain arrays (numpy and PIL; no matplotlib).

Images are rows of a matrix (N, D) with values in [0, 1] and one shape, (H, W) for
grey or (C, H, W) channel-major for colour. :func:`tile_grid` lays them out in rows of
``ncols`` tiles, each pixel drawn as a ``scale`` x ``scale`` block, ``gap`` pixels of
mid-grey between tiles and around them, so a grid of n images of H x W has width
``ncols (scale W + gap) + gap`` and height ``rows (scale H + gap) + gap``.
"""

from __future__ import annotations

import math

import numpy as np

from bpetopics.files import atomic_path

__all__ = ["grid_size", "signed_to_unit", "tile_grid", "write_png"]

BACKGROUND = 0.5


def grid_size(n: int, shape, ncols: int, scale: int = 2, gap: int = 2) -> tuple[int, int]:
    """(width, height) in pixels of :func:`tile_grid` for ``n`` images of ``shape``."""
    h, w = shape[-2:]
    cols = max(1, min(ncols, n))
    rows = max(1, math.ceil(n / cols))
    return cols * (scale * w + gap) + gap, rows * (scale * h + gap) + gap


def signed_to_unit(d: np.ndarray) -> np.ndarray:
    """Signed images (N, D) to [0, 1], each row on its own scale: 0.5 + 0.5 d / max|d|
    (grey: no change; white: adds; black: removes)."""
    d = np.asarray(d, dtype=np.float32)
    peak = np.abs(d).max(axis=1, keepdims=True) if d.size else np.ones((len(d), 1), np.float32)
    return 0.5 + 0.5 * d / np.maximum(peak, 1e-12)


def tile_grid(images, shape, ncols: int = 10, scale: int = 2, gap: int = 2) -> np.ndarray:
    """The images (N, D) in [0, 1] (clipped) as one uint8 picture: (height, width) for
    grey shapes (H, W), (height, width, 3) for colour shapes (3, H, W)."""
    images = np.clip(np.asarray(images, dtype=np.float32), 0.0, 1.0)
    shape = tuple(int(s) for s in shape)
    colour = len(shape) == 3
    h, w = shape[-2:]
    width, height = grid_size(len(images), shape, ncols, scale, gap)
    cols = max(1, min(ncols, len(images)))
    canvas = np.full((height, width, 3) if colour else (height, width), BACKGROUND, dtype=np.float32)
    for i, row in enumerate(images):  # a few dozen tiles: drawing, not a hot path
        tile = row.reshape(shape)
        tile = tile.transpose(1, 2, 0) if colour else tile
        tile = np.repeat(np.repeat(tile, scale, axis=0), scale, axis=1)
        top, left = gap + (i // cols) * (scale * h + gap), gap + (i % cols) * (scale * w + gap)
        canvas[top:top + scale * h, left:left + scale * w] = tile
    return np.round(canvas * 255).astype(np.uint8)


def write_png(picture: np.ndarray, path) -> None:
    """Write a uint8 picture (H, W) or (H, W, 3) to ``path`` as PNG, atomically."""
    from PIL import Image

    with atomic_path(path) as tmp:
        Image.fromarray(picture).save(tmp, format="PNG")
