"""The Corpus type (sparse counts on a vocabulary, labels, ids, split) and its files.

The on-disk layout is described in ``corpora/README.md``: counts as ``.npz``, the
vocabulary and metadata as JSON, the texts as gzipped text; never pickle.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from bpetopics.files import staging_folder
from bpetopics.text.errors import CorpusError
from bpetopics.text.pipeline import TextPipeline
from bpetopics.text.timestamps import times_from_json, times_to_json

FORMAT = "bpetopics.corpus"
SET_FORMAT = "bpetopics.corpus_set"
VERSION = 1

#: File names of one saved corpus (one split).
COUNTS_FILE = "counts.npz"
VOCABULARY_FILE = "vocabulary.json"
DOCUMENTS_FILE = "documents.json"
TEXTS_FILE = "texts.txt.gz"
META_FILE = "corpus.json"
#: File name of a saved set of splits (a folder holding one folder per split).
MANIFEST_FILE = "manifest.json"

#: Reasons a document is dropped, as recorded in ``Corpus.dropped``.
EMPTY_AFTER_CLEANING = "empty after cleaning"
NO_VOCABULARY_WORD = "no word in the vocabulary"


def _write_json(path: Path, obj, indent: int | None = 1) -> None:
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=indent) + "\n", encoding="utf-8")


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CorpusError(
            f"{path.parent} is not a complete saved corpus ({path.name} is missing): save it again"
        ) from None
    except json.JSONDecodeError as exc:
        raise CorpusError(f"{path} is not valid JSON ({exc.msg}, line {exc.lineno}): save the corpus again") from None


@dataclass(eq=False)
class Corpus:
    """Documents as sparse word counts on a vocabulary, with labels, ids and split.

    Attributes
    ----------
    counts : scipy.sparse.csr_matrix of shape (N, W), int64
        Word counts; row ``i`` is document ``ids[i]``, column ``j`` word ``vocabulary[j]``.
    vocabulary : list of str, length W
        The words, sorted.
    texts : list of list of str, length N
        Each document's tokens restricted to the vocabulary, in order (what coherence
        metrics need); ``len(texts[i]) == counts[i].sum()``.
    ids : list of str, length N
        Document ids (a relative path, or ``group/number`` for 20 Newsgroups).
    split : str
        ``"train"`` or ``"test"``.
    labels : np.ndarray of int, shape (N,), or None
        Index into ``label_names``, when labels are known.
    label_names : list of str or None
        The label names.
    pipeline : TextPipeline or None
        The cleaning settings and vocabulary that made the counts;
        ``pipeline.transform(raw_texts)`` counts new documents on the same vocabulary.
    dropped : dict of str to list of str
        Ids of the documents (or files) left out, by reason: ``"empty after cleaning"``,
        ``"no word in the vocabulary"``, ``"not a text file"``.
    source : str
        Where the documents came from.
    times : np.ndarray of shape (N,), or None
        Each document's timestamp (``float64`` numbers or ``datetime64[s]`` dates), when
        the corpus was read with a time field.
    """

    counts: sp.csr_matrix
    vocabulary: list[str]
    texts: list[list[str]]
    ids: list[str]
    split: str = "train"
    labels: np.ndarray | None = None
    label_names: list[str] | None = None
    pipeline: TextPipeline | None = None
    dropped: dict[str, list[str]] = field(default_factory=dict)
    source: str = ""
    times: np.ndarray | None = None

    def __post_init__(self):
        if not sp.issparse(self.counts):
            raise TypeError("Corpus.counts must be a scipy.sparse matrix (it stays sparse everywhere)")
        self.counts = sp.csr_matrix(self.counts)
        self.vocabulary = [str(w) for w in self.vocabulary]
        n, w = self.counts.shape
        if w != len(self.vocabulary):
            raise ValueError(f"counts has {w} columns but the vocabulary has {len(self.vocabulary)} words")
        if len(self.ids) != n or len(self.texts) != n:
            raise ValueError(f"counts has {n} rows but there are {len(self.ids)} ids and {len(self.texts)} texts")
        if self.labels is not None:
            self.labels = np.asarray(self.labels, dtype=np.int64)
            if self.labels.shape != (n,):
                raise ValueError(f"labels has shape {self.labels.shape}, expected ({n},)")
        if self.times is not None:
            self.times = np.asarray(self.times)
            if self.times.shape != (n,):
                raise ValueError(f"times has shape {self.times.shape}, expected ({n},)")

    # ------------------------------------------------------------------ sizes
    def __len__(self) -> int:
        return self.counts.shape[0]

    @property
    def n_docs(self) -> int:
        """N, the number of documents."""
        return self.counts.shape[0]

    @property
    def n_words(self) -> int:
        """W, the vocabulary size."""
        return self.counts.shape[1]

    @property
    def doc_lengths(self) -> np.ndarray:
        """Tokens per document, np.ndarray of int, shape (N,)."""
        return np.asarray(self.counts.sum(axis=1)).ravel()

    @property
    def n_tokens(self) -> int:
        """Total number of (in-vocabulary) tokens."""
        return int(self.counts.sum())

    def summary(self) -> dict:
        """Sizes for a report: documents, labels, vocabulary, tokens, mean length, dropped."""
        n = self.n_docs
        return {
            "split": self.split,
            "documents": n,
            "labels": None if self.label_names is None else len(self.label_names),
            "vocabulary": self.n_words,
            "tokens": self.n_tokens,
            "mean_length": self.n_tokens / n if n else 0.0,
            "dropped": {reason: len(ids) for reason, ids in self.dropped.items()},
        }

    def fingerprint(self) -> str:
        """SHA-256 (hex) of the documents as the measures read them: ids, tokens in
        order and labels. A run records its corpus's, so that a corpus that changed
        since training (the same vocabulary and ids, other text) is detected."""
        digest = hashlib.sha256()
        for doc_id, tokens in zip(self.ids, self.texts):
            digest.update(f"{doc_id}\x00{' '.join(tokens)}\x00".encode("utf-8", "surrogatepass"))
        if self.labels is not None:
            digest.update(np.asarray(self.labels, dtype=np.int64).tobytes())
            digest.update("\x00".join(map(str, self.label_names or [])).encode("utf-8", "surrogatepass"))
        if self.times is not None:     # (corpora without timestamps keep their fingerprint)
            digest.update(("times\x00" + "\x00".join(map(str, times_to_json(self.times)))).encode("utf-8"))
        return digest.hexdigest()

    def dropped_note(self) -> str:
        """One line saying which documents of this split were left out and why, or ""
        when none was (files that are not text are not documents and are not counted)."""
        parts = [f"{len(ids):,} {reason}" for reason, ids in self.dropped.items()
                 if ids and reason != "not a text file"]
        if not parts:
            return ""
        n = sum(len(ids) for reason, ids in self.dropped.items() if reason != "not a text file")
        return f"{self.split}: {n:,} document(s) left out ({', '.join(parts)})"

    # ---------------------------------------------------------------- save/load
    def save(self, directory: str | os.PathLike) -> Path:
        """Write the corpus to ``directory`` (created if needed; files overwritten).

        Files: ``counts.npz`` (scipy CSR), ``vocabulary.json``, ``documents.json`` (ids,
        labels), ``texts.txt.gz`` (one document a line, tokens separated by spaces),
        ``corpus.json`` (metadata, dropped documents, pipeline). See corpora/README.md.

        Returns
        -------
        pathlib.Path
            The folder.
        """
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        sp.save_npz(directory / COUNTS_FILE, self.counts, compressed=True)
        _write_json(directory / VOCABULARY_FILE, self.vocabulary)
        _write_json(
            directory / DOCUMENTS_FILE,
            {"ids": list(self.ids), "labels": None if self.labels is None else self.labels.tolist(),
             **({} if self.times is None else {"times": times_to_json(self.times)})},
            indent=None,
        )
        buffer = io.BytesIO()
        with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as gz:
            gz.write("".join(" ".join(doc) + "\n" for doc in self.texts).encode("utf-8"))
        (directory / TEXTS_FILE).write_bytes(buffer.getvalue())
        pipeline = None
        if self.pipeline is not None:
            pipeline = self.pipeline.to_dict()
            pipeline["vocabulary"] = VOCABULARY_FILE  # stored once, in its own file
        _write_json(
            directory / META_FILE,
            {
                "format": FORMAT,
                "version": VERSION,
                "split": self.split,
                "source": self.source,
                "label_names": self.label_names,
                "summary": self.summary(),
                "dropped": self.dropped,
                "pipeline": pipeline,
            },
        )
        return directory

    @classmethod
    def load(cls, directory: str | os.PathLike) -> "Corpus":
        """Read a corpus written by :meth:`save`.

        Raises
        ------
        CorpusError
            The folder is not a saved corpus, a file is missing, or the files disagree.
        """
        directory = Path(directory)
        if not (directory / META_FILE).is_file():
            raise CorpusError(
                f"{directory} is not a saved corpus (no {META_FILE}): give a folder written by `bpetopics corpus`"
            )
        meta = _read_json(directory / META_FILE)
        if meta.get("format") != FORMAT:
            raise CorpusError(f"{directory / META_FILE} is not a bpetopics corpus (format {meta.get('format')!r})")
        if meta.get("version", 0) > VERSION:
            raise CorpusError(
                f"{directory} was saved by a newer bpetopics (format version {meta['version']}): upgrade it"
            )
        vocabulary = _read_json(directory / VOCABULARY_FILE)
        documents = _read_json(directory / DOCUMENTS_FILE)
        try:
            counts = sp.load_npz(directory / COUNTS_FILE)
            with gzip.open(directory / TEXTS_FILE, "rt", encoding="utf-8") as f:
                texts = [line.split() for line in f]
        except FileNotFoundError as exc:
            missing = Path(exc.filename).name
            raise CorpusError(
                f"{directory} is not a complete saved corpus ({missing} is missing): save it again"
            ) from None
        pipeline = None
        if meta.get("pipeline") is not None:
            pipeline_dict = dict(meta["pipeline"], vocabulary=vocabulary)
            pipeline = TextPipeline.from_dict(pipeline_dict)
        try:
            return cls(
                counts=counts,
                vocabulary=vocabulary,
                texts=texts,
                ids=documents["ids"],
                split=meta["split"],
                labels=documents.get("labels"),
                label_names=meta.get("label_names"),
                pipeline=pipeline,
                dropped=meta.get("dropped", {}),
                source=meta.get("source", ""),
                times=times_from_json(documents.get("times")),
            )
        except ValueError as exc:
            raise CorpusError(f"{directory} is inconsistent ({exc}): save the corpus again") from None


# ----------------------------------------------------------------- sets of splits
def is_saved_corpus(path: str | os.PathLike) -> bool:
    """True when ``path`` is a folder written by :func:`save_splits` or :meth:`Corpus.save`."""
    path = Path(path)
    return (path / MANIFEST_FILE).is_file() or (path / META_FILE).is_file()


def check_destination(out: str | os.PathLike, overwrite: bool = False) -> Path:
    """Check that :func:`save_splits` may write to ``out`` (call it before slow work).

    Raises
    ------
    CorpusError
        ``out`` holds a saved corpus and ``overwrite`` is false, or it is a file or a
        non-empty folder that is not a saved corpus.
    """
    out = Path(out)
    if out.exists():
        if is_saved_corpus(out):
            if not overwrite:
                raise CorpusError(
                    f"{out} already holds a saved corpus: pass --overwrite to replace it, or choose another --out"
                )
        elif not out.is_dir() or any(out.iterdir()):
            raise CorpusError(f"{out} exists and is not a saved corpus: choose another --out (it is never deleted)")
    return out


def save_splits(splits: dict[str, Corpus], out: str | os.PathLike, overwrite: bool = False) -> Path:
    """Write a set of splits atomically: ``out/manifest.json`` and ``out/<split>/``.

    Everything is written to a temporary folder beside ``out`` and then renamed, so a
    crash never leaves half a corpus behind.

    Parameters
    ----------
    splits : dict of str to Corpus
        E.g. ``{"train": ..., "test": ...}`` from :func:`prepare_corpus`.
    out : str or path
        The folder to create.
    overwrite : bool, default=False
        Replace a saved corpus already at ``out``.

    Returns
    -------
    pathlib.Path
        ``out``.

    Raises
    ------
    CorpusError
        ``out`` holds a saved corpus and ``overwrite`` is false, or ``out`` is a file
        or a non-empty folder that is not a saved corpus (never deleted).
    """
    out = check_destination(out, overwrite)
    with staging_folder(out) as tmp:
        for name, corpus in splits.items():
            corpus.save(tmp / name)
        _write_json(
            tmp / MANIFEST_FILE,
            {
                "format": SET_FORMAT,
                "version": VERSION,
                "splits": list(splits),
                "summary": {name: corpus.summary() for name, corpus in splits.items()},
            },
        )
    return out


def load_splits(path: str | os.PathLike) -> dict[str, Corpus]:
    """Read a folder written by :func:`save_splits` (or one :meth:`Corpus.save` folder).

    Returns
    -------
    dict of str to Corpus
        ``{"train": ..., "test": ...}`` (the splits that were saved).
    """
    path = Path(path)
    if (path / MANIFEST_FILE).is_file():
        manifest = _read_json(path / MANIFEST_FILE)
        if manifest.get("format") != SET_FORMAT:
            raise CorpusError(
                f"{path / MANIFEST_FILE} is not a bpetopics corpus manifest (format {manifest.get('format')!r})"
            )
        return {name: Corpus.load(path / name) for name in manifest["splits"]}
    corpus = Corpus.load(path)
    return {corpus.split: corpus}
