"""Figures of the Table 1 experiment: reconstruction grids and seconds per epoch (PNG).

Free functions on plain arrays and rows (matplotlib, Agg backend, atomic writes).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def _as_image(x):
    """A flat row -> (H, W) grey image or (H, W, 3) RGB (CIFAR rows are channel-major)."""
    x = np.asarray(x, dtype=np.float32)
    if x.size == 3072:
        return np.clip(x.reshape(3, 32, 32).transpose(1, 2, 0), 0.0, 1.0)
    side = int(round(np.sqrt(x.size)))
    return x.reshape(side, side)


def save_reconstruction_grid(grid, dataset, path):
    """One row per entry of ``grid`` ('original' first, then each model's
    reconstructions of the same test images), one column per image.

    Grey images share one colour scale per figure: [0, 1], or symmetric [-m, m] with
    zero at mid-grey when the originals have negative values (scaled MNIST).
    """
    from bpetopics.files import atomic_path

    plt = _pyplot()
    names = list(grid)
    n_cols = len(grid["original"])
    low = float(np.min(grid["original"]))
    bound = float(np.max(np.abs(grid["original"]))) if low < 0 else 1.0
    vmin, vmax = (-bound, bound) if low < 0 else (0.0, 1.0)
    fig, axes = plt.subplots(len(names), n_cols, figsize=(1.1 * n_cols + 1.6, 1.2 * len(names)),
                             squeeze=False)
    for i, name in enumerate(names):
        for j in range(n_cols):
            ax = axes[i, j]
            img = _as_image(grid[name][j])
            if img.ndim == 3:
                ax.imshow(img)
            else:
                ax.imshow(np.clip(img, vmin, vmax), cmap="gray", vmin=vmin, vmax=vmax)
            ax.set_xticks([])
            ax.set_yticks([])
        axes[i, 0].set_ylabel(name, rotation=0, ha="right", va="center", fontsize=8)
    fig.suptitle(f"{dataset}: test images and reconstructions", fontsize=9)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=100)
    plt.close(fig)
    return Path(path)


def plot_seconds_per_epoch(rows, path):
    """Bars of mean training seconds per epoch, one group per data set (log scale)."""
    from bpetopics.files import atomic_path

    plt = _pyplot()
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    models = list(dict.fromkeys(r["model"] for r in rows))
    colours = {m: f"C{k}" for k, m in enumerate(models)}
    fig, ax = plt.subplots(figsize=(2.2 * len(datasets) + 3, 3.6))
    labelled = set()
    for i, dataset in enumerate(datasets):
        present = [r for r in rows if r["dataset"] == dataset]
        width = 0.8 / max(len(present), 1)
        for k, r in enumerate(present):
            y = max(float(r["sec_per_epoch"]), 1e-3)
            label = None if r["model"] in labelled else r["model"]
            labelled.add(r["model"])
            bar = ax.bar(i + (k - (len(present) - 1) / 2) * width, y, width=width,
                         color=colours[r["model"]], label=label)
            ax.bar_label(bar, labels=[f"{y:.2g}"], fontsize=7)
    ax.set_xticks(range(len(datasets)))
    ax.set_xticklabels(datasets)
    ax.set_yscale("log")
    ax.set_ylabel("seconds per training epoch")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=100)
    plt.close(fig)
    return Path(path)
