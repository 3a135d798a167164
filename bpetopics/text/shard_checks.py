"""Checks of a sharded corpus against itself: its manifest, its shards' sizes and values.

A corpus folder is read from disk and may have been edited, damaged or written by
something else, so nothing in it is taken on trust (:mod:`bpetopics.text.sharded` calls
these on open and in :meth:`~bpetopics.text.sharded.ShardedCorpus.verify`):

* :func:`check_manifest` (on open): the manifest's fields have their types, its sizes
  add up (the corpus's documents and non-zeros are its shards'), and every file it names
  is a plain file name in the corpus folder, listed with its size;
* :func:`check_shard_ends` (on open, a few bytes a shard): each shard's arrays are 1-D
  integers of the manifest's sizes, and its row pointers start at 0 and end at its
  non-zeros;
* :func:`check_shard_values` (before training, and in ``verify``): every value, read in
  blocks of :data:`BLOCK` so that a corpus larger than memory is never loaded at once:
  row pointers never decreasing, word ids within the vocabulary and increasing within a
  row, counts positive.

Each raises :class:`~bpetopics.text.errors.CorpusError`: one line naming the file, the
problem and the fix.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from bpetopics.text.errors import CorpusError

#: Values read at once by :func:`check_shard_values` (a block of word ids and counts).
BLOCK = 1 << 22


def rebuild_hint(path, manifest) -> str:
    """The fix for a damaged corpus: build it again, with the command that does it."""
    source = manifest.get("source") if isinstance(manifest, dict) else None
    if not isinstance(source, str) or not source or any(c in source for c in "\n\r`"):
        source = "INPUT"
    return (f"build the corpus again (`bpetopics corpus {source} --format sharded --out {path} --overwrite`, "
            "with the settings it was built with)")


def is_plain_name(name) -> bool:
    """Whether ``name`` is a file name with no folder part (nothing outside the corpus)."""
    return (isinstance(name, str) and name not in ("", ".", "..") and "\x00" not in name
            and os.path.basename(name) == name and "/" not in name and "\\" not in name)


def _count(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 0


def check_manifest(path: Path, manifest: dict) -> None:
    """Refuse a manifest whose fields are of the wrong type, whose sizes do not add up,
    or that names a file outside the corpus folder or without its size."""
    where = path / "sharded.json"
    fix = rebuild_hint(path, manifest)

    def refuse(problem):
        raise CorpusError(f"{where} {problem}: {fix}")

    for key in ("n_docs", "n_words", "nnz"):
        if not _count(manifest.get(key)):
            refuse(f"has {key}={manifest.get(key)!r} where a count (an integer >= 0) belongs")
    shards = manifest.get("shards")
    if not isinstance(shards, list) or not all(isinstance(s, dict) for s in shards):
        refuse("has no list of shards")
    for i, shard in enumerate(shards):
        if not is_plain_name(shard.get("name")):
            refuse(f"names shard {i} {shard.get('name')!r}, not a plain file name in the corpus folder")
        for key in ("n_docs", "nnz"):
            if not _count(shard.get(key)):
                refuse(f"has {key}={shard.get(key)!r} for shard {shard['name']} where a count belongs")
    if len({s["name"] for s in shards}) != len(shards):
        refuse("names a shard twice")
    for key, total in (("n_docs", "documents"), ("nnz", "non-zeros")):
        summed = sum(int(s[key]) for s in shards)
        if summed != manifest[key]:
            refuse(f"says {manifest[key]:,} {total} but its shards hold {summed:,}")
    names = [manifest.get("vocabulary"), manifest.get("ids")]
    if manifest.get("labels") is not None or manifest.get("label_names") is not None:
        names.append(manifest.get("labels"))
        label_names = manifest.get("label_names")
        if not isinstance(label_names, list) or not all(isinstance(n, str) for n in label_names):
            refuse(f"has label_names={label_names!r} where a list of names belongs")
    for name in names:
        if not is_plain_name(name):
            refuse(f"names the file {name!r}, not a plain file name in the corpus folder")
    files = manifest.get("files")
    if not isinstance(files, dict):
        refuse("has no list of files with their sizes")
    for name, info in files.items():
        if not is_plain_name(name):
            refuse(f"lists the file {name!r}, not a plain file name in the corpus folder")
        if not isinstance(info, dict) or not _count(info.get("bytes")) or not isinstance(info.get("sha256"), str):
            refuse(f"has no size and sha256 for {name}")
    needed = names + [f"{s['name']}.{part}.npy" for s in shards for part in ("indptr", "indices", "data")]
    unlisted = [name for name in needed if name not in files]
    if unlisted:
        refuse(f"does not list {unlisted[0]} among its files")
    dropped = manifest.get("dropped", {})
    if not isinstance(dropped, dict) or not all(_count(n) for n in dropped.values()):
        refuse(f"has dropped={dropped!r} where counts of documents left out belong")
    if not isinstance(manifest.get("source", ""), str) or not isinstance(manifest.get("pipeline"), dict):
        refuse("has no source or text pipeline settings")


def check_shard_ends(path: Path, manifest: dict, shard: dict, arrays: dict) -> None:
    """Refuse a shard whose arrays are not 1-D integers of the manifest's sizes, or whose
    row pointers do not run from 0 to its non-zeros (reads two values)."""
    fix = rebuild_hint(path, manifest)
    sizes = {"indptr": shard["n_docs"] + 1, "indices": shard["nnz"], "data": shard["nnz"]}
    for part, size in sizes.items():
        array, file = arrays[part], path / f"{shard['name']}.{part}.npy"
        if array.ndim != 1 or array.shape[0] != size:
            raise CorpusError(f"{file} holds shape {array.shape} where the manifest says ({size},): {fix}")
        if not np.issubdtype(array.dtype, np.integer):
            raise CorpusError(f"{file} holds {array.dtype} values where integers belong: {fix}")
    indptr = arrays["indptr"]
    if int(indptr[0]) != 0 or int(indptr[-1]) != shard["nnz"]:
        raise CorpusError(f"{path / shard['name']}.indptr.npy runs from {int(indptr[0]):,} to {int(indptr[-1]):,} "
                          f"where its rows' non-zeros run from 0 to {shard['nnz']:,}: {fix}")


def check_shard_values(arrays: dict, n_words: int, names: dict, fix: str) -> None:
    """Every value of one shard, in blocks of :data:`BLOCK`: the row pointers never
    decrease, each row's word ids increase within [0, ``n_words``) and its counts are
    positive. ``names`` gives each part's file name for the message."""
    indptr = np.asarray(arrays["indptr"], dtype=np.int64)
    steps = np.diff(indptr)
    if steps.size and steps.min() < 0:
        row = int(np.argmax(steps < 0))
        raise CorpusError(f"{names['indptr']} decreases at row {row:,} (row pointers must never decrease): {fix}")
    indices, data = arrays["indices"], arrays["data"]
    starts = indptr[1:-1]                       # where a row other than the first begins
    for begin in range(0, indices.shape[0], BLOCK):
        end = min(begin + BLOCK, indices.shape[0])
        words = np.asarray(indices[begin:end], dtype=np.int64)
        if words.min() < 0 or words.max() >= n_words:
            bad = int(words[(words < 0) | (words >= n_words)][0])
            raise CorpusError(f"{names['indices']} holds the word id {bad:,}, outside the vocabulary's "
                              f"{n_words:,} words: {fix}")
        # within a row, ids increase: a non-increasing step is allowed only where a row begins
        previous = np.asarray(indices[begin - 1:end], dtype=np.int64) if begin else words
        falls = np.flatnonzero(np.diff(previous) <= 0) + (begin if begin else begin + 1)
        if falls.size:
            row_begins = np.isin(falls, starts[(starts >= begin) & (starts < end)])
            if not row_begins.all():
                raise CorpusError(f"{names['indices']} repeats or reorders a word id within a row "
                                  f"(at non-zero {int(falls[~row_begins][0]):,}; a row's ids increase): {fix}")
        counts = np.asarray(data[begin:end])
        if counts.min() <= 0:
            bad = int(counts[counts <= 0][0])
            raise CorpusError(f"{names['data']} holds the count {bad:,} (counts of a word in a document are "
                              f"positive): {fix}")


def check_labels(file: Path, labels, n_docs: int, n_labels: int, fix: str, values: bool) -> None:
    """Refuse labels that are not ``n_docs`` integers (and, with ``values``, not all
    label indices in [0, ``n_labels``), read in blocks)."""
    if labels.ndim != 1 or labels.shape[0] != n_docs or not np.issubdtype(labels.dtype, np.integer):
        raise CorpusError(f"{file} holds {labels.dtype} values of shape {labels.shape} where the corpus's "
                          f"{n_docs:,} label indices belong: {fix}")
    if not values:
        return
    for begin in range(0, n_docs, BLOCK):
        block = np.asarray(labels[begin:begin + BLOCK])
        if block.min() < 0 or block.max() >= n_labels:
            raise CorpusError(f"{file} holds a label index outside the {n_labels} label names: {fix}")


def count_lines(file: Path) -> int:
    """The lines of a text file, counted in blocks (a last line without its newline counts)."""
    lines, last = 0, b"\n"
    with open(file, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            lines += block.count(b"\n")
            last = block[-1:]
    return lines + (last != b"\n")
