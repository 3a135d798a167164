"""What a corpus argument names, decided in one place, and its raw documents
(:func:`load_source`).

A corpus argument (``bpetopics train CORPUS``, ``corpus``, ``compare``, a run's recorded
``corpus.source``) is one of three things, in this order of precedence:

* ``"20newsgroups"`` (or ``20ng``; only when no path of that name exists),
* a named corpus of :mod:`~bpetopics.text.named_corpora` (``abc``, ``state_union``,
  ``lee``; likewise only when no such path exists),
* a sharded corpus (``bpetopics corpus INPUT --format sharded``: memory-mapped shards
  and a manifest, :mod:`~bpetopics.text.sharded`, for corpora larger than memory;
  ``train`` reads it as it trains, :func:`~bpetopics.text.prepare.prepare_training_corpus`),
* a corpus saved by ``bpetopics corpus`` / :func:`~bpetopics.text.save_splits`,
* a JSONL or CSV file, compressed or not (:mod:`~bpetopics.text.records`), one document
  a record,
* a folder of text files (one document per file).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np

from bpetopics.text.corpus import is_saved_corpus
from bpetopics.text.errors import CorpusError, CorpusWarning
from bpetopics.text.loaders import NEWSGROUPS_NAMES, RawDocuments, is_newsgroups, load_20newsgroups, load_folder
from bpetopics.text.named_corpora import NAMED_CORPORA, SUBJECTS, corpus_names, is_named_corpus, load_named_corpus
from bpetopics.text.record_loader import load_records
from bpetopics.text.records import is_record_file
from bpetopics.text.settings import CorpusSettings
from bpetopics.text.sharded import is_sharded_corpus

NEWSGROUPS, NAMED, SHARDED, SAVED, RECORDS, FOLDER = ("20newsgroups", "named", "sharded", "saved", "records",
                                                      "folder")
def source_kind(source) -> str:
    """``"20newsgroups"``, ``"named"`` (a corpus of :data:`NAMED_CORPORA`), ``"sharded"`` (a
    sharded corpus folder), ``"saved"`` (a saved corpus folder), ``"records"`` (a JSONL or
    CSV file) or ``"folder"`` (anything else: a folder of texts, or a path that the loader
    will report as missing)."""
    if is_newsgroups(source):
        return NEWSGROUPS
    if is_named_corpus(source):
        return NAMED
    if is_sharded_corpus(source):
        return SHARDED
    if isinstance(source, (str, os.PathLike)) and Path(source).is_dir() and is_saved_corpus(Path(source)):
        return SAVED
    if is_record_file(source):
        return RECORDS
    return FOLDER


def drawn_test_split(source) -> bool:
    """Whether a test split of ``source`` would be drawn (``test_size``) rather than read:
    a source the corpus options apply to (not a saved or sharded corpus) without a test
    split of its own (20 Newsgroups and its subject lines have one)."""
    kind = source_kind(source)
    return kind not in (NEWSGROUPS, SAVED, SHARDED) and not (kind == NAMED and str(source).lower() == SUBJECTS)


def recorded_source(source) -> str:
    """The source as a run records it: ``20newsgroups`` as given, a path made absolute
    (so that the run's corpus can be rebuilt from any folder)."""
    return source if source_kind(source) in (NEWSGROUPS, NAMED) else os.path.abspath(source)


def corpus_record(source, settings: CorpusSettings | dict, splits: dict) -> dict:
    """What a run records about its corpus (``config["corpus"]``): the source, the
    settings that rebuild it (:meth:`CorpusSettings.keywords`; for a saved corpus only
    its path: the options played no part), each split's summary and, for an in-memory
    corpus, each split's :meth:`~bpetopics.text.Corpus.fingerprint` (checked when the
    corpus is rebuilt)."""
    recorded = recorded_source(source)
    settings = settings.keywords() if isinstance(settings, CorpusSettings) else dict(settings)
    data_home = settings.get("data_home")
    settings["data_home"] = None if data_home is None else os.path.abspath(data_home)
    if source_kind(source) == SAVED:
        settings = {"saved_corpus": recorded}
    elif source_kind(source) == SHARDED:
        settings = {"sharded_corpus": recorded}
    record = {"source": recorded, "settings": settings,
              "splits": {name: c.summary() for name, c in splits.items()}}
    fingerprints = {name: c.fingerprint() for name, c in splits.items() if hasattr(c, "fingerprint")}
    if fingerprints:        # (a sharded corpus has its own checksums)
        record["fingerprints"] = fingerprints
    return record


def load_source(
    source: str | os.PathLike,
    data_home: str | os.PathLike | None = None,
    categories=None,
    download_if_missing: bool = True,
    fields: dict | None = None,
) -> dict[str, RawDocuments]:
    """Load raw documents from a source given by name: ``20newsgroups``, a named corpus
    (:data:`~bpetopics.text.named_corpora.NAMED_CORPORA`: abc, state_union, lee,
    abc-sentences, state_union-sentences, 20newsgroups-subjects), a JSONL
    or CSV file (:func:`~bpetopics.text.record_loader.load_records`) or a folder.

    Parameters
    ----------
    source : str or path
        ``"20newsgroups"`` (also ``20ng``), a named corpus, or a folder of text files.
    data_home : str or path, optional
        Passed to :func:`~bpetopics.text.loaders.load_20newsgroups`.
    categories : list of str, optional
        Keep only documents with these labels (20 Newsgroups groups, a named corpus's
        labels, or subfolder names of a folder).
    download_if_missing : bool, default=True
        Passed to :func:`~bpetopics.text.loaders.load_20newsgroups`.
    fields : dict, optional
        :func:`~bpetopics.text.record_loader.load_records`'s keyword arguments for a JSONL or CSV file (``text_field``,
        ``id_field``, ``label_field``, ``time_field``, ``skip_bad_lines``).

    Returns
    -------
    dict of str to RawDocuments
        ``{"train": ..., "test": ...}`` for 20 Newsgroups and its subject lines,
        ``{"train": ...}`` otherwise.
    """
    if (fields or {}).get("time_field") is not None and not is_record_file(source):
        raise CorpusError(f"--time-field applies to a .jsonl or .csv source, and {source} is neither: "
                          "leave it out, or give the records as JSONL or CSV")
    if is_newsgroups(source):
        return load_20newsgroups(data_home, categories=categories, download_if_missing=download_if_missing)
    if isinstance(source, str) and source.lower() in (*NAMED_CORPORA, *NEWSGROUPS_NAMES) and Path(source).exists():
        warnings.warn(f"{source} is a path here as well as a named corpus: reading the path (run from another "
                      "folder to read the named corpus)", CorpusWarning, stacklevel=2)
    if is_named_corpus(source) and source.lower() == SUBJECTS:
        return load_named_corpus(source, data_home, categories, download_if_missing)
    if is_named_corpus(source):
        docs = load_named_corpus(source)["train"]
    elif is_record_file(source):
        docs = load_records(source, **(fields or {}))
    elif not Path(source).exists():
        raise CorpusError(f"corpus source {os.fspath(source)!r} does not exist: give {corpus_names()} "
                          "(named corpora), a folder of text files, a .jsonl or .csv file or a saved "
                          "corpus folder")
    else:
        docs = load_folder(source)
    if categories is not None:
        names = docs.label_names or []
        unknown = [c for c in categories if c not in names]
        if unknown or not categories:
            choices = ", ".join(names) or "(none: no label subfolders)"
            raise CorpusError(f"unknown labels {unknown} in {source}: choose among {choices}")
        keep_names = sorted(categories)
        old = np.array([names.index(c) for c in keep_names])
        rows = np.flatnonzero(np.isin(docs.labels, old))
        docs = docs.take(rows)
        docs.labels = np.searchsorted(old, docs.labels)
        docs.label_names = keep_names
    return {"train": docs}
