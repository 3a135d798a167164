"""Using a finished image run: encode new images, draw what its bits add.

What ``bpetopics images encode`` and ``bpetopics images show`` run::

    run = load_run("runs/mnist")
    codes, data = encode_run_images(run, "mnist")          # the test split of MNIST
    write_codes("codes.npz", codes, data)
    bits_png, recon_png, bits_csv = show_run(run, "bits.png")   # bits.recon.png, bits.csv
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bpetopics.runs.folder import RunError


def _require_image_run(run):
    if not getattr(run, "is_image_run", False):
        raise RunError(f"{run.path} is a text run: give a run written by `bpetopics images train`")


def run_images(run, images=None, data_root=None, *, split="test", limit=None, seed=0):
    """The images ``images`` names (a data set: its ``split``; a folder), or when None
    those of the run's own record (its data set's ``split``; a folder: its images),
    checked against the run's image shape. RunError (one line) when they do not fit."""
    from bpetopics.images.sources import ImageSourceError, load_images, load_recorded

    _require_image_run(run)
    record = run.data
    try:
        if images is None:
            recorded = dict(record, data_root=str(data_root)) if data_root is not None else record
            data = load_recorded(recorded, split if record.get("split") != "folder" else None)
        else:
            root = data_root if data_root is not None else record.get("data_root")
            data = load_images(images, root, split=split, limit=limit, seed=seed)
    except ImageSourceError as exc:
        raise RunError(str(exc)) from None
    if list(data.shape) != list(record["image_shape"]):
        raise RunError(f"{data.source} holds images of shape {list(data.shape)} but {run.path} was trained on "
                       f"{record['image_shape']}: give images of that shape")
    return data


def encode_run_images(run, images, data_root=None, *, limit=None, seed=0):
    """(codes (N x K), ImageData) of the images ``images`` names under the run's model
    (:func:`bpetopics.runs.image_codes.encode_images`)."""
    from bpetopics.runs.image_codes import encode_images

    data = run_images(run, images, data_root, limit=limit, seed=seed)
    return encode_images(run.model, data.X), data


def write_codes(path, codes, data) -> Path:
    """codes.npz: ``codes`` (N x K), ``labels`` (data sets) or ``names`` (folders), written
    atomically (the caller refuses an existing file)."""
    from bpetopics.files import atomic_path

    arrays = {"codes": codes}
    if data.labels is not None:
        arrays["labels"] = np.asarray(data.labels, dtype=np.int64)
    if data.names is not None:
        arrays["names"] = np.asarray(data.names, dtype=str)
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as f:
            np.savez_compressed(f, **arrays)
    return Path(path)


def recon_path(path) -> Path:
    """Where :func:`show_run` puts the reconstructions beside ``path``: bits.png -> bits.recon.png."""
    path = Path(path)
    return path.with_name(f"{path.stem}.recon{path.suffix or '.png'}")


def bits_table_path(path) -> Path:
    """Where :func:`show_run` lists the drawn bits beside ``path``: bits.png -> bits.csv."""
    return Path(path).with_suffix(".csv")


def _bits_table(codes, bits) -> str:
    """CSV of the drawn bits, one row per tile after the empty code's (tile 0): binary
    codes: ``tile,bit,images,share`` (training images with the bit on, and their share);
    a Gaussian VAE's means: ``tile,latent,spread`` (the standard deviation of the training
    means, the use :func:`~bpetopics.runs.image_codes.bit_contributions` orders by)."""
    import csv
    import io

    codes = np.asarray(codes)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if codes.dtype == np.uint8:
        used = (codes != 0).sum(0)
        writer.writerow(["tile", "bit", "images", "share"])
        for tile, k in enumerate(bits, start=1):
            writer.writerow([tile, int(k), int(used[k]), f"{used[k] / max(len(codes), 1):.6g}"])
    else:
        spread = codes.std(0) if len(codes) else np.zeros(codes.shape[1])
        writer.writerow(["tile", "latent", "spread"])
        for tile, k in enumerate(bits, start=1):
            writer.writerow([tile, int(k), f"{spread[k]:.6g}"])
    return buffer.getvalue()


def _display(record, X):
    """Data values to [0, 1] for drawing: scaled MNIST's [-s, s] maps to [0, 1] linearly."""
    lo, hi = min(0.0, record.get("min", 0.0)), max(1.0, record.get("max", 1.0))
    return (np.asarray(X, dtype=np.float32) - lo) / (hi - lo)


def _picks(data, n):
    """The first image of each of the first ``n`` classes (labelled data), else the first n."""
    if data.labels is not None and len(data.labels):
        picks = [int(np.flatnonzero(data.labels == c)[0]) for c in np.unique(data.labels)[:n]]
        rest = [i for i in range(len(data.X)) if i not in set(picks)]
        return np.asarray((picks + rest)[:n])
    return np.arange(min(n, len(data.X)))


def show_run(run, out, *, n_bits: int = 40, n_images: int = 10, ncols: int = 10, scale: int = 2,
             images=None, data_root=None) -> tuple[Path, Path, Path]:
    """Write two PNGs and a CSV: ``out`` (the empty code's image, then what each used bit
    adds to it, most used first, at most ``n_bits``: grey no change, white adds, black
    removes), :func:`recon_path` (``out``) (rows of ``n_images`` originals over their
    reconstructions: the run's test split, or its folder's images, or ``images``) and
    :func:`bits_table_path` (``out``) (which bit each tile of the first draws, and how
    many training images use it). Returns the three paths; the caller refuses existing
    files."""
    from bpetopics.files import write_text_atomic
    from bpetopics.runs.image_codes import bit_contributions, reconstruct_images
    from bpetopics.viz.image_grid import signed_to_unit, tile_grid, write_png

    _require_image_run(run)
    shape = run.data["image_shape"]
    codes = run.codes()
    empty, adds, bits = bit_contributions(run.model, codes, max_bits=n_bits)
    tiles = np.concatenate([np.clip(empty, 0, 1)[None, :], signed_to_unit(adds)])
    write_png(tile_grid(tiles, shape, ncols, scale), out)
    table = bits_table_path(out)
    write_text_atomic(table, _bits_table(codes, bits))
    data = run_images(run, images, data_root)
    X = data.X[_picks(data, n_images)]
    R = reconstruct_images(run.model, X)
    rows = []
    for start in range(0, len(X), ncols):  # originals over reconstructions, ncols at a time
        rows += [X[start:start + ncols], R[start:start + ncols]]
    cols = min(ncols, len(X))
    pad = [np.concatenate([r, np.full((cols - len(r), r.shape[1]), np.nan, np.float32)]) for r in rows]
    grid = np.nan_to_num(_display(run.data, np.concatenate(pad)), nan=0.5)
    second = recon_path(out)
    write_png(tile_grid(grid, shape, cols, scale), second)
    return Path(out), second, table
