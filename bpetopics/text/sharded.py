"""A corpus on disk, memory-mapped rather than loaded: sharded CSR arrays and a manifest.

A sharded corpus folder (written by :class:`ShardWriter`, e.g. through
``bpetopics corpus INPUT --format sharded``, :mod:`bpetopics.text.streaming`)::

    sharded.json                 the manifest: format, version, sizes, shards, the
                                 pipeline settings, dropped documents and, for every
                                 file below, its size in bytes and its sha256
    vocabulary.json              the W words; column j is word j
    shard-00000.indptr.npy       (n_s + 1,) int64, row pointers of shard s (from 0)
    shard-00000.indices.npy      (nnz_s,) int32, word of each non-zero
    shard-00000.data.npy         (nnz_s,) int32, its count
    ...
    ids.txt                      one document id a line (JSON strings)
    labels.npy                   (N,) int64 label indices (only when labels are known)

:func:`open_sharded` reads the manifest and the vocabulary and maps the shards
(``np.load(mmap_mode="r")``): opening costs megabytes (the vocabulary, and the row
pointers once a minibatch is gathered), never the non-zeros. Nothing in the folder is
trusted (:mod:`bpetopics.text.shard_checks`): on open the manifest is checked against
itself and the shards (its sizes add up to its shards', its file names are plain names
in the folder, every file has the size it lists, each shard's arrays have its sizes
and its row pointers run from 0 to its non-zeros), for the cost of a ``stat`` and a few
values a shard; :meth:`ShardedCorpus.verify` hashes every file against its sha256 and
reads every value (row pointers, word ids, counts, labels; block by block), the whole
corpus once: ``bpetopics train`` runs it before training, where it costs a fraction of
one epoch, and ``fit`` reads the values once if that was not done. Each refuses with
one line naming the file and the fix (:class:`CorpusError`).

Its counts are a :class:`~bpetopics.text.sharded_counts.ShardedCounts`, what training
reads (:mod:`bpetopics.text.sharded_counts`).
"""

from __future__ import annotations

import hashlib
import json
import os
import tokenize
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from bpetopics.files import staging_folder
from bpetopics.text.errors import CorpusError
from bpetopics.text.pipeline import TextPipeline
from bpetopics.text.shard_checks import check_labels, check_manifest, check_shard_ends, count_lines, rebuild_hint
from bpetopics.text.sharded_counts import ShardedCounts

FORMAT = "bpetopics.sharded_corpus"
VERSION = 1
MANIFEST = "sharded.json"
VOCABULARY = "vocabulary.json"
IDS = "ids.txt"
LABELS = "labels.npy"
REFERENCE = "sharded_reference.json"   # what a training job keeps instead of a copy
PARTS = ("indptr", "indices", "data")
#: What reading a damaged file raises (numpy parses a .npy header with ast.literal_eval).
_UNREADABLE = (ValueError, OSError, EOFError, KeyError, SyntaxError, OverflowError, MemoryError,
               tokenize.TokenError)


def is_sharded_corpus(path) -> bool:
    """True when ``path`` is a folder holding a sharded corpus manifest."""
    return isinstance(path, (str, os.PathLike)) and (Path(path) / MANIFEST).is_file()


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _memory_map(file: Path) -> np.ndarray:
    return np.load(file, mmap_mode="r", allow_pickle=False)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# ------------------------------------------------------------------------ writing
class ShardWriter:
    """Write a sharded corpus atomically: rows are appended chunk by chunk and cut into
    shards of ``shard_docs`` documents; :meth:`close` writes the manifest and renames
    the staging folder to ``out``. Use as a context manager (nothing is left behind on
    an error; ``out`` is replaced only with ``overwrite``)."""

    def __init__(self, out, n_words: int, shard_docs: int = 100_000, overwrite: bool = False):
        out = Path(out)
        if out.exists():
            if not is_sharded_corpus(out):
                if not out.is_dir() or any(out.iterdir()):
                    raise CorpusError(f"{out} exists and is not a sharded corpus: choose another --out "
                                      "(it is never deleted)")
            elif not overwrite:
                raise CorpusError(f"{out} already holds a sharded corpus: pass --overwrite to replace it, "
                                  "or choose another --out")
        if shard_docs < 1:
            raise CorpusError(f"shard_docs={shard_docs} is below 1: give a positive number of documents per shard")
        self.out, self.n_words, self.shard_docs = out, int(n_words), int(shard_docs)
        self._pending: list[sp.csr_matrix] = []
        self._pending_docs = 0
        self.shards: list[dict] = []
        self.labels: list[np.ndarray] = []

    def __enter__(self):
        self._staging = staging_folder(self.out)
        self.folder = self._staging.__enter__()
        self._ids = open(self.folder / IDS, "w", encoding="utf-8")
        return self

    def __exit__(self, kind, value, tb):
        if not self._ids.closed:
            self._ids.close()
        return self._staging.__exit__(kind, value, tb)

    def append(self, counts: sp.csr_matrix, ids, labels=None) -> None:
        """Append documents: ``counts`` (n, W) CSR, their ``ids``, their label indices."""
        self._ids.write("".join(json.dumps(str(i), ensure_ascii=False) + "\n" for i in ids))
        if labels is not None:
            self.labels.append(np.asarray(labels, dtype=np.int64))
        self._pending.append(counts)
        self._pending_docs += counts.shape[0]
        while self._pending_docs >= self.shard_docs:
            self._flush(self.shard_docs)

    def _flush(self, n_rows: int) -> None:
        block = sp.vstack(self._pending, format="csr") if len(self._pending) > 1 else self._pending[0]
        shard, rest = block[:n_rows], block[n_rows:]
        self._pending = [rest] if rest.shape[0] else []
        self._pending_docs = rest.shape[0]
        name = f"shard-{len(self.shards):05d}"
        arrays = {"indptr": shard.indptr.astype(np.int64), "indices": shard.indices.astype(np.int32),
                  "data": shard.data.astype(np.int32)}
        for part, array in arrays.items():
            np.save(self.folder / f"{name}.{part}.npy", array)
        self.shards.append({"name": name, "n_docs": int(shard.shape[0]), "nnz": int(shard.nnz)})

    def close(self, pipeline: TextPipeline, *, label_names=None, source="", dropped=None,
              extra=None) -> dict:
        """Write the last shard, the vocabulary and the manifest (with every file's
        size and sha256); returns the manifest. The folder appears at ``out`` when the
        ``with`` block ends."""
        if self._pending_docs:
            self._flush(self._pending_docs)
        self._ids.close()
        (self.folder / VOCABULARY).write_text(json.dumps(list(pipeline.vocabulary_), ensure_ascii=False),
                                              encoding="utf-8")
        if label_names is not None:
            np.save(self.folder / LABELS, np.concatenate(self.labels) if self.labels else np.zeros(0, np.int64))
        pipe = pipeline.to_dict()
        pipe["vocabulary"] = VOCABULARY
        files = {p.name: {"bytes": p.stat().st_size, "sha256": _sha256(p)}
                 for p in sorted(self.folder.iterdir()) if p.name != MANIFEST}
        n_docs = sum(s["n_docs"] for s in self.shards)
        manifest = {"format": FORMAT, "version": VERSION, "n_docs": n_docs, "n_words": self.n_words,
                    "nnz": sum(s["nnz"] for s in self.shards), "shards": self.shards,
                    "vocabulary": VOCABULARY, "ids": IDS, "labels": LABELS if label_names is not None else None,
                    "label_names": label_names, "source": str(source), "dropped": dropped or {},
                    "pipeline": pipe, "files": files, **(extra or {})}
        (self.folder / MANIFEST).write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n",
                                            encoding="utf-8")
        return manifest


# ------------------------------------------------------------------------ reading
def open_sharded(path, verify: bool = False) -> "ShardedCorpus":
    """Open a sharded corpus: the manifest and vocabulary read, the shards mapped.

    The manifest is checked against itself and the files (sizes, names, each shard's
    sizes and first and last row pointers); with ``verify`` also every file's sha256 and
    every value (:meth:`ShardedCorpus.verify`). Raises :class:`CorpusError` (one line
    naming the file and the fix) for a folder that is not a sharded corpus, a manifest
    that does not match its shards, a missing, truncated or altered file.
    """
    path = Path(path)
    if not is_sharded_corpus(path):
        raise CorpusError(f"{path} is not a sharded corpus (no {MANIFEST}): build one with "
                          "`bpetopics corpus INPUT --format sharded --out DIR`")
    try:
        manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise CorpusError(f"{path / MANIFEST} is damaged ({exc}): build the corpus again") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise CorpusError(f"{path / MANIFEST} is not a sharded corpus manifest: build the corpus again")
    version = manifest.get("version", 0)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise CorpusError(f"{path / MANIFEST} has version {version!r} where a format version belongs: "
                          f"{rebuild_hint(path, manifest)}")
    if version > VERSION:
        raise CorpusError(f"{path} was written by a newer bpetopics (format version {version}): upgrade it")
    corpus = ShardedCorpus(path, manifest)
    if verify:
        corpus.verify()
    return corpus


class ShardedCorpus:
    """A sharded corpus opened from disk (:func:`open_sharded`): what a
    :class:`~bpetopics.text.Corpus` offers a training job, the counts memory-mapped.

    Attributes
    ----------
    counts : ShardedCounts, shape (N, W)
    vocabulary : list of str, length W
    pipeline : TextPipeline
    label_names : list of str or None
    source, split : str
    """

    split = "train"

    def __init__(self, path: Path, manifest: dict):
        self.path, self.manifest = Path(path), manifest
        check_manifest(self.path, manifest)
        self.fix = rebuild_hint(self.path, manifest)
        self._check_sizes()
        self.vocabulary = self._read(manifest["vocabulary"], lambda f: json.loads(f.read_text(encoding="utf-8")))
        arrays = [{part: self._read(f"{s['name']}.{part}.npy", _memory_map) for part in PARTS}
                  for s in manifest["shards"]]
        if not isinstance(self.vocabulary, list) or not all(isinstance(w, str) for w in self.vocabulary):
            raise CorpusError(f"{self.path / manifest['vocabulary']} is not a list of words: {self.fix}")
        if len(self.vocabulary) != manifest["n_words"]:
            raise CorpusError(f"{self.path / manifest['vocabulary']} has {len(self.vocabulary):,} words where the "
                              f"manifest says {manifest['n_words']:,}: {self.fix}")
        for shard, arr in zip(manifest["shards"], arrays):
            check_shard_ends(self.path, manifest, shard, arr)
        self.counts = ShardedCounts(arrays, (manifest["n_docs"], manifest["n_words"]), self.fix)
        try:
            self.pipeline = TextPipeline.from_dict(dict(manifest["pipeline"], vocabulary=self.vocabulary))
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise CorpusError(f"{self.path / MANIFEST} holds unreadable text pipeline settings "
                              f"({_first_line(exc)}): {self.fix}") from None
        self.label_names = manifest.get("label_names")
        self.source = manifest.get("source", "")
        if manifest.get("labels") is not None:
            check_labels(self.path / manifest["labels"], self.labels, self.n_docs, len(self.label_names), self.fix,
                         values=False)

    def _read(self, name: str, read):
        """``read(file)`` of the corpus's file ``name``; CorpusError naming it when it is damaged."""
        file = self.path / name
        try:
            return read(file)
        except _UNREADABLE as exc:
            raise CorpusError(f"{file} is damaged ({_first_line(exc)}): {self.fix}") from None

    def _check_sizes(self) -> None:
        for name, info in self.manifest["files"].items():
            file = self.path / name
            if not file.is_file():
                raise CorpusError(f"{file} is missing: the sharded corpus is incomplete, {self.fix}")
            size = file.stat().st_size
            if size != info["bytes"]:
                raise CorpusError(f"{file} has {size:,} bytes where the manifest says {info['bytes']:,} "
                                  f"(truncated or altered): {self.fix}")

    def verify(self) -> "ShardedCorpus":
        """Hash every file against the manifest's sha256, then read every value (row
        pointers, word ids, counts: :meth:`ShardedCounts.check_values`; the label
        indices; the number of ids), all block by block; CorpusError naming the first
        file that differs or holds a value that cannot be. Returns ``self``."""
        self._check_sizes()
        for name, info in self.manifest["files"].items():
            if _sha256(self.path / name) != info["sha256"]:
                raise CorpusError(f"{self.path / name} does not match its sha256 in the manifest "
                                  f"(altered or damaged): {self.fix}")
        self.counts.check_values()
        if self.manifest.get("labels") is not None:
            check_labels(self.path / self.manifest["labels"], self.labels, self.n_docs, len(self.label_names),
                         self.fix, values=True)
        ids = count_lines(self.path / self.manifest["ids"])
        if ids != self.n_docs:
            raise CorpusError(f"{self.path / self.manifest['ids']} holds {ids:,} ids for the corpus's "
                              f"{self.n_docs:,} documents: {self.fix}")
        return self

    # ------------------------------------------------------------ Corpus-like view
    @property
    def n_docs(self) -> int:
        return self.counts.shape[0]

    @property
    def n_words(self) -> int:
        return self.counts.shape[1]

    def __len__(self) -> int:
        return self.n_docs

    @property
    def ids(self) -> list[str]:
        """Document ids (read from ``ids.txt`` on each access; CorpusError when it does
        not hold one JSON string a document)."""
        file = self.path / self.manifest["ids"]
        try:
            with open(file, encoding="utf-8") as f:
                ids = [json.loads(line) for line in f]
        except (ValueError, OSError) as exc:
            raise CorpusError(f"{file} is damaged ({_first_line(exc)}): {self.fix}") from None
        if len(ids) != self.n_docs or not all(isinstance(i, str) for i in ids):
            raise CorpusError(f"{file} does not hold one id (a JSON string) for each of the {self.n_docs:,} "
                              f"documents: {self.fix}")
        return ids

    @property
    def labels(self):
        """(N,) int64 label indices, memory-mapped, or None."""
        name = self.manifest.get("labels")
        return None if name is None else self._read(name, _memory_map)

    @property
    def dropped(self) -> dict:
        return dict(self.manifest.get("dropped", {}))

    def summary(self) -> dict:
        """Sizes as :meth:`Corpus.summary` gives them (dropped: counts per reason)."""
        if getattr(self, "_tokens", None) is None:
            self._tokens = int(self.counts.sum(axis=None))     # one read of the counts
        n, tokens = self.n_docs, self._tokens
        return {"split": self.split, "documents": n,
                "labels": None if self.label_names is None else len(self.label_names),
                "vocabulary": self.n_words, "tokens": tokens, "mean_length": tokens / n if n else 0.0,
                "dropped": self.dropped, "format": "sharded", "shards": len(self.manifest["shards"])}

    def dropped_note(self) -> str:
        left = {reason: n for reason, n in self.dropped.items() if n and reason != "not a text file"}
        parts = [f"{n:,} {reason}" for reason, n in left.items()]
        return f"{self.split}: {sum(left.values()):,} document(s) left out ({', '.join(parts)})" if parts else ""

    def save(self, directory) -> Path:
        """What a training job keeps of its corpus: a reference to this folder (the
        shards are not copied) and the manifest's hash, checked by :func:`load_reference`."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        ref = {"format": REFERENCE, "path": str(self.path.resolve()), "manifest_sha256": _sha256(self.path / MANIFEST)}
        (directory / REFERENCE).write_text(json.dumps(ref, indent=1) + "\n", encoding="utf-8")
        return directory


def load_reference(directory):
    """The sharded corpus a folder written by :meth:`ShardedCorpus.save` refers to, or
    None when the folder holds no such reference (CorpusError when the corpus changed)."""
    file = Path(directory) / REFERENCE
    if not file.is_file():
        return None
    try:
        ref = json.loads(file.read_text(encoding="utf-8"))
        path, digest = ref["path"], ref["manifest_sha256"]
    except (ValueError, UnicodeDecodeError, KeyError, TypeError):
        raise CorpusError(f"{file} is damaged") from None
    corpus = open_sharded(path)
    if _sha256(corpus.path / MANIFEST) != digest:
        raise CorpusError(f"the sharded corpus {path} changed since training started")
    return corpus
