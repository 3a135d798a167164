"""Raw documents (:class:`RawDocuments`) and their loaders: a folder of text files, 20 Newsgroups.

Every loader returns :class:`RawDocuments` (one per split): the raw texts with their
ids, labels where known, and the split name. A JSONL or CSV file is
:mod:`bpetopics.text.record_loader`'s, a named corpus :mod:`bpetopics.text.named_corpora`'s,
and a source given by name (any of them) :func:`bpetopics.text.sources.load_source`'s. :func:`bpetopics.text.prepare_corpus`
cleans and vectorises them into :class:`bpetopics.text.Corpus` objects.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bpetopics.text.decoding import file_text, looks_binary, writable_name
from bpetopics.text.errors import CorpusError, CorpusWarning

#: Names that mean the 20 Newsgroups corpus (by-date split) as a source.
NEWSGROUPS_NAMES = ("20newsgroups", "20ng", "20news")

#: The 20 groups, in scikit-learn's ``target_names`` order.
NEWSGROUPS_CATEGORIES = (
    "alt.atheism", "comp.graphics", "comp.os.ms-windows.misc", "comp.sys.ibm.pc.hardware",
    "comp.sys.mac.hardware", "comp.windows.x", "misc.forsale", "rec.autos",
    "rec.motorcycles", "rec.sport.baseball", "rec.sport.hockey", "sci.crypt",
    "sci.electronics", "sci.med", "sci.space", "soc.religion.christian",
    "talk.politics.guns", "talk.politics.mideast", "talk.politics.misc", "talk.religion.misc",
)

#: Reason recorded for files of a folder that are not text.
NOT_TEXT = "not a text file"


@dataclass
class RawDocuments:
    """The raw documents of one split.

    Attributes
    ----------
    texts : list of str, length N
        The raw documents.
    ids : list of str, length N
        One id per document (a relative path, or ``group/number`` for 20 Newsgroups).
    split : str
        ``"train"`` or ``"test"``.
    labels : np.ndarray of int, shape (N,), or None
        Index into ``label_names`` for each document, when known.
    label_names : list of str or None
        The label names, sorted.
    source : str
        Where the documents came from (``"20newsgroups"`` or a folder path).
    skipped : dict of str to list of str
        Files that were not loaded, by reason (e.g. ``"not a text file"``).
    times : np.ndarray of shape (N,), or None
        Each document's timestamp (``float64`` numbers or ``datetime64[s]`` dates), when known.
    cleaned : bool
        Whether the texts are already cleaned (headers, quotes, signatures stripped:
        :meth:`TextPipeline.clean`), as passages cut from cleaned documents are
        (:mod:`bpetopics.text.passages`); the pipeline then only tokenises them.
    """

    texts: list[str]
    ids: list[str]
    split: str = "train"
    labels: np.ndarray | None = None
    label_names: list[str] | None = None
    source: str = ""
    skipped: dict[str, list[str]] = field(default_factory=dict)
    times: np.ndarray | None = None
    cleaned: bool = False

    def __len__(self) -> int:
        return len(self.texts)

    def take(self, indices) -> "RawDocuments":
        """The documents at ``indices`` (in that order), with the same label names."""
        indices = np.asarray(indices, dtype=np.int64)
        return RawDocuments(
            texts=[self.texts[i] for i in indices],
            ids=[self.ids[i] for i in indices],
            split=self.split,
            labels=None if self.labels is None else self.labels[indices],
            label_names=self.label_names,
            source=self.source,
            skipped=self.skipped,
            times=None if self.times is None else self.times[indices],
            cleaned=self.cleaned,
        )

    def sample(self, max_docs: int | None, random_state: int = 0) -> "RawDocuments":
        """At most ``max_docs`` documents drawn without replacement, kept in order."""
        if max_docs is None or max_docs >= len(self):
            return self
        if max_docs < 1:
            raise CorpusError(f"max_docs={max_docs} is below 1: give a positive number of documents")
        rng = np.random.default_rng(random_state)
        return self.take(np.sort(rng.choice(len(self), size=max_docs, replace=False)))


# ------------------------------------------------------------------------- folder
def load_folder(path: str | os.PathLike, split: str = "train") -> RawDocuments:
    """Load a folder of text files, one document per file, recursively.

    As in scikit-learn's ``load_files``, a first-level subfolder names the label of the
    files below it. Hidden files and folders (``.name``) are ignored. Files that are not
    text (NUL bytes, mostly control bytes) are skipped with a :class:`CorpusWarning` that
    counts them. Each file is decoded on its own as UTF-8 (or UTF-16/32 when it starts
    with a byte-order mark); bytes that are not valid become U+FFFD and are counted in a
    :class:`CorpusWarning`, so decoding never fails and never changes a whole file's
    encoding. An HTML file (``*.html``, ``*.htm``, ``*.xhtml``) gives its visible text
    (:mod:`bpetopics.text.markup`).

    Parameters
    ----------
    path : str or path
        The folder.
    split : str, default="train"
        The split name given to the documents.

    Returns
    -------
    RawDocuments
        Documents in sorted path order; ``ids`` are paths relative to the folder (with
        ``/``); labels when every file lies in a subfolder, else ``None``.

    Raises
    ------
    CorpusError
        The path does not exist, is not a folder, is empty, or holds no text file.
    """
    root = Path(path)
    if not root.exists():
        raise CorpusError(
            f"folder {os.fspath(path)!r} does not exist: give a folder of text files (one document per file)"
        )
    if not root.is_dir():
        raise CorpusError(f"{root} is a file, not a folder: give a folder of text files (one document per file), "
                          "or a .jsonl or .csv file (compressed or not)")
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        files.extend(Path(dirpath) / f for f in sorted(filenames) if not f.startswith("."))
    if not files:
        raise CorpusError(
            f"folder {root} is empty: put text files in it (one document per file, "
            "optionally in one subfolder per label)"
        )
    files.sort(key=lambda p: p.relative_to(root).parts)
    texts, ids, folder_labels, not_text, bad_files, n_bad = [], [], [], [], [], 0
    for file in files:
        rel = file.relative_to(root)
        rel_id = writable_name(rel.as_posix())
        try:
            raw = file.read_bytes()
        except OSError:
            not_text.append(rel_id)
            continue
        if looks_binary(raw[:8192]):
            not_text.append(rel_id)
            continue
        text, bad = file_text(file.name, raw)
        if bad:
            bad_files.append(rel_id)
            n_bad += bad
        texts.append(text)
        ids.append(rel_id)
        folder_labels.append(writable_name(rel.parts[0]) if len(rel.parts) > 1 else None)
    if not texts:
        raise CorpusError(
            f"folder {root} has no text files ({len(not_text)} files skipped as not text): "
            "put plain-text documents in it"
        )
    if not_text:
        warnings.warn(
            f"skipped {len(not_text)} of {len(files)} files in {root} that are not text "
            f"(e.g. {not_text[0]})",
            CorpusWarning,
            stacklevel=2,
        )
    if bad_files:
        warnings.warn(
            f"{n_bad:,} bytes that are not valid UTF-8 were replaced by U+FFFD in {len(bad_files)} of "
            f"{len(files)} files in {root} (e.g. {bad_files[0]})",
            CorpusWarning,
            stacklevel=2,
        )
    labels = label_names = None
    n_unlabelled = sum(lab is None for lab in folder_labels)
    if n_unlabelled == 0:
        label_names = sorted(set(folder_labels))
        lookup = {name: i for i, name in enumerate(label_names)}
        labels = np.array([lookup[lab] for lab in folder_labels], dtype=np.int64)
    elif n_unlabelled < len(folder_labels):
        warnings.warn(
            f"{n_unlabelled} files lie directly in {root}, outside label subfolders: "
            "the corpus gets no labels",
            CorpusWarning,
            stacklevel=2,
        )
    return RawDocuments(
        texts=texts,
        ids=ids,
        split=split,
        labels=labels,
        label_names=label_names,
        source=str(root),
        skipped={NOT_TEXT: not_text} if not_text else {},
    )


# ------------------------------------------------------------------- 20 Newsgroups
def load_20newsgroups(
    data_home: str | os.PathLike | None = None,
    subsets=("train", "test"),
    categories=None,
    download_if_missing: bool = True,
) -> dict[str, RawDocuments]:
    """Load 20 Newsgroups (by-date split) raw, through scikit-learn's fetcher.

    Nothing is removed here (``remove=()``): cleaning is :mod:`bpetopics.text.cleaning`'s.

    Parameters
    ----------
    data_home : str or path, optional
        Folder holding scikit-learn's cache ``20news-bydate_py3.pkz``; default
        ``$SCIKIT_LEARN_DATA`` or ``~/scikit_learn_data``.
    subsets : iterable of {"train", "test"}
        The splits to load.
    categories : list of str, optional
        Keep only these groups (see :data:`NEWSGROUPS_CATEGORIES`); labels are then
        indices into the sorted selection.
    download_if_missing : bool, default=True
        Let scikit-learn download the data when it is not in ``data_home``.

    Returns
    -------
    dict of str to RawDocuments
        One entry per subset: 11,314 train and 7,532 test documents for all groups,
        sorted by id (``group/number``).

    Raises
    ------
    CorpusError
        An unknown category, or the data can be neither found nor downloaded.
    """
    from sklearn.datasets import fetch_20newsgroups

    if categories is not None:
        categories = list(categories)
        unknown = [c for c in categories if c not in NEWSGROUPS_CATEGORIES]
        if unknown or not categories:
            raise CorpusError(
                f"unknown 20 Newsgroups categories {unknown}: choose among {', '.join(NEWSGROUPS_CATEGORIES)}"
            )
    subsets = list(subsets)
    for subset in subsets:
        if subset not in ("train", "test"):
            raise CorpusError(f"unknown 20 Newsgroups subset {subset!r}: choose train or test")
    # One fetch of subset="all" reads scikit-learn's cache once (it holds both splits);
    # each document's split is the folder its file came from (20news-bydate-train/-test).
    bunch = _fetch(fetch_20newsgroups, data_home, "all", categories, download_if_missing)
    paths = [Path(f) for f in bunch.filenames]
    splits = [p.parent.parent.name.rsplit("-", 1)[-1] for p in paths]
    if not set(splits) <= {"train", "test"}:  # a cache laid out otherwise: fetch each split
        parts = {s: _fetch(fetch_20newsgroups, data_home, s, categories, download_if_missing) for s in subsets}
        splits = [s for s in subsets for _ in parts[s].filenames]
        paths = [Path(f) for s in subsets for f in parts[s].filenames]
        bunch.data = [t for s in subsets for t in parts[s].data]
        bunch.target = np.concatenate([parts[s].target for s in subsets])
    ids = [f"{p.parent.name}/{p.name}" for p in paths]
    target = np.asarray(bunch.target, dtype=np.int64)
    out = {}
    for subset in subsets:
        rows = sorted((i for i, s in enumerate(splits) if s == subset), key=ids.__getitem__)
        out[subset] = RawDocuments(
            texts=[bunch.data[i] for i in rows],
            ids=[ids[i] for i in rows],
            split=subset,
            labels=target[rows],
            label_names=[str(n) for n in bunch.target_names],
            source="20newsgroups",
        )
    return out


#: Seconds a download may wait for the network on one operation (connect, read) before
#: it counts as failed: scikit-learn sets none, so a network that drops packets would
#: hang the fetch for good.
DOWNLOAD_TIMEOUT = 30.0


def _fetch(fetch_20newsgroups, data_home, subset, categories, download_if_missing):
    import socket

    previous = socket.getdefaulttimeout()
    socket.setdefaulttimeout(DOWNLOAD_TIMEOUT if previous is None else previous)
    try:
        return fetch_20newsgroups(
            data_home=None if data_home is None else os.fspath(data_home),
            subset=subset,
            categories=categories,
            shuffle=False,
            remove=(),
            download_if_missing=download_if_missing,
        )
    except OSError as exc:  # includes URLError (no network) and "dataset not found"
        where = data_home or os.environ.get("SCIKIT_LEARN_DATA") or "~/scikit_learn_data"
        raise CorpusError(
            f"cannot load 20 Newsgroups from {where} ({exc}): put 20news-bydate_py3.pkz there "
            "(--data-home or SCIKIT_LEARN_DATA) or allow the download"
        ) from None
    finally:
        socket.setdefaulttimeout(previous)


# ------------------------------------------------------------------------- by name
def is_newsgroups(source) -> bool:
    """True when ``source`` names 20 Newsgroups (and is not an existing path)."""
    return (
        isinstance(source, str)
        and source.lower() in NEWSGROUPS_NAMES
        and not Path(source).exists()
    )
