"""prepare_corpus: from a source (a name or a folder) to ``{"train": Corpus, "test": Corpus}``."""

from __future__ import annotations

import os

import numpy as np

from bpetopics.text.corpus import (
    EMPTY_AFTER_CLEANING,
    NO_VOCABULARY_WORD,
    Corpus,
    load_splits,
)
from bpetopics.text.loaders import RawDocuments
from bpetopics.text.pipeline import TextPipeline
from bpetopics.text.errors import CorpusError
from bpetopics.text.settings import CorpusSettings
from bpetopics.text.sources import NEWSGROUPS, SAVED, SHARDED, load_source, source_kind


def _build(docs: RawDocuments, tokens: list[list[str]], pipeline: TextPipeline) -> Corpus:
    """Vectorise one split and drop (and record) the documents left empty."""
    counts, texts = pipeline.transform_tokens(tokens)
    keep = np.flatnonzero(np.diff(counts.indptr) > 0)
    dropped = {reason: list(ids) for reason, ids in docs.skipped.items()}
    dropped[EMPTY_AFTER_CLEANING] = [docs.ids[i] for i, t in enumerate(tokens) if not t]
    dropped[NO_VOCABULARY_WORD] = [docs.ids[i] for i, (t, k) in enumerate(zip(tokens, texts)) if t and not k]
    return Corpus(
        counts=counts[keep],
        vocabulary=list(pipeline.vocabulary_),
        texts=[texts[i] for i in keep],
        ids=[docs.ids[i] for i in keep],
        split=docs.split,
        labels=None if docs.labels is None else docs.labels[keep],
        label_names=None if docs.label_names is None else list(docs.label_names),
        pipeline=pipeline,
        dropped=dropped,
        source=docs.source,
        times=None if docs.times is None else docs.times[keep],
    )


def corpus_from_documents(raw: dict[str, RawDocuments], pipeline: TextPipeline) -> dict[str, Corpus]:
    """Clean and vectorise raw splits: fit ``pipeline`` on ``"train"``, transform the rest.

    Parameters
    ----------
    raw : dict of str to RawDocuments
        Must hold ``"train"``; other splits (``"test"``) use the train vocabulary.
    pipeline : TextPipeline
        Unfitted settings; fitted here.

    Returns
    -------
    dict of str to Corpus
        One Corpus per split, documents left empty dropped and recorded in
        ``Corpus.dropped``.
    """
    if "train" not in raw:
        raise ValueError(f"raw splits {sorted(raw)} have no 'train' split to fit the vocabulary on")
    train_tokens = pipeline.analyze_many(raw["train"].texts)
    pipeline.fit_tokens(train_tokens)
    out = {}
    for split, docs in raw.items():
        tokens = train_tokens if split == "train" else pipeline.analyze_many(docs.texts)
        out[split] = _build(docs, tokens, pipeline)
    return out


def corpus_on_vocabulary(docs: RawDocuments, pipeline: TextPipeline) -> tuple[Corpus, int]:
    """Clean and count ``docs`` on the fitted ``pipeline``'s vocabulary (never refitted).

    Returns the Corpus (documents left empty dropped and recorded in ``dropped``) and
    the number of tokens, after cleaning, that are not in the vocabulary (dropped)."""
    tokens = pipeline.analyze_many(docs.texts)
    corpus = _build(docs, tokens, pipeline)
    return corpus, int(sum(len(t) for t in tokens) - corpus.counts.sum())


def prepare_corpus(
    source: str | os.PathLike,
    vocab_size: int | None = 2000,
    min_df: int | float = 5,
    max_df: int | float = 0.5,
    stopwords="nltk",
    data_home: str | os.PathLike | None = None,
    *,
    categories=None,
    max_docs: int | None = None,
    random_state: int = 0,
    download_if_missing: bool = True,
    text_field: str = "text",
    id_field: str | None = None,
    label_field: str | None = None,
    skip_bad_lines: bool = False,
    time_field: str | None = None,
    **cleaning,
) -> dict[str, Corpus]:
    """Load, clean and vectorise a corpus.

    Parameters
    ----------
    source : str or path
        ``"20newsgroups"`` (by-date train/test split), a named corpus (``"abc"``,
        ``"state_union"``, ``"lee"``, ``"abc-sentences"``: :mod:`bpetopics.text.named_corpora`,
        one ``"train"`` split; ``"20newsgroups-subjects"``, split by date), a JSONL or CSV file, compressed or not (one ``"train"``
        split, :func:`~bpetopics.text.record_loader.load_records`), a folder of text files (one
        ``"train"`` split; first-level subfolders name labels), or a saved corpus folder
        (loaded as saved: the other options are then ignored).
    vocab_size : int or None, default=2000
        Keep the most frequent words (``CountVectorizer(max_features=...)``).
    min_df : int or float, default=5
        Drop words in fewer documents (count, or fraction if float).
    max_df : int or float, default=0.5
        Drop words in more documents (fraction if float, or count).
    stopwords : str, path or iterable of str, default="nltk"
        ``"nltk"``, ``"sklearn"``, ``"gensim"``, ``"none"`` or a file.
    data_home : str or path, optional
        Where scikit-learn keeps 20 Newsgroups.
    categories : list of str, optional
        Keep only these labels (20 Newsgroups groups or subfolder names).
    max_docs : int, optional
        Keep at most this many documents per split, drawn with ``random_state`` (for
        quick runs and tests).
    random_state : int, default=0
        Seed of the ``max_docs`` draw.
    download_if_missing : bool, default=True
        Let scikit-learn download 20 Newsgroups when it is not in ``data_home``.
    text_field, id_field, label_field : str or None
        A JSONL or CSV source's keys or columns of the text, the id and the label.
    time_field : str or None
        A JSONL or CSV source's key or column of each document's timestamp (a date or a
        number: :mod:`bpetopics.text.timestamps`), kept as ``Corpus.times``.
    skip_bad_lines : bool, default=False
        A JSONL or CSV source: skip (and record) malformed lines instead of stopping.
    **cleaning
        Other :class:`TextPipeline` settings: ``strip_headers``, ``strip_footers``,
        ``strip_quotes``, ``strip_binary``, ``lowercase``, ``min_token_length``.

    Returns
    -------
    dict of str to Corpus
        ``{"train": Corpus, "test": Corpus}`` when the source has a test split, else
        ``{"train": Corpus}``. The test split is vectorised with the train vocabulary.
        All splits share one fitted :class:`TextPipeline`.

    Raises
    ------
    CorpusError
        Any problem the user can fix (missing path, empty folder, no text files, bad
        ``min_df``/``max_df``, empty vocabulary, missing stop-word data), one line each.
    """
    kind = source_kind(source)
    if kind == SAVED:
        return load_splits(source)
    if kind == SHARDED:
        raise CorpusError(f"{source} is a sharded corpus (kept on disk): `bpetopics train` reads it; for this "
                          "command build an in-memory one (`bpetopics corpus INPUT --out DIR`)")
    pipeline = TextPipeline(
        vocab_size=vocab_size, min_df=min_df, max_df=max_df, stopwords=stopwords, **cleaning
    )
    # Fail fast, before the slow part, on what can be checked without the documents:
    # the settings, then (before loading 20 Newsgroups, which takes seconds) the stop
    # words, whose data may be missing.
    pipeline.check_settings()
    if kind == NEWSGROUPS:
        pipeline.stop_words  # noqa: B018
    raw = load_source(source, data_home=data_home, categories=categories,
                      download_if_missing=download_if_missing,
                      fields={"text_field": text_field, "id_field": id_field, "label_field": label_field,
                              "skip_bad_lines": skip_bad_lines, "time_field": time_field})
    pipeline.stop_words  # noqa: B018
    raw = {split: docs.sample(max_docs, random_state) for split, docs in raw.items()}
    return corpus_from_documents(raw, pipeline)


def prepare_training_corpus(source, settings: CorpusSettings) -> dict:
    """What ``bpetopics train`` trains on: :func:`prepare_corpus`'s splits with
    ``settings``, or for a sharded corpus ``{"train": ShardedCorpus}``, opened
    (memory-mapped, not loaded) and verified against its checksums
    (:meth:`~bpetopics.text.sharded.ShardedCorpus.verify`: one read of the files, a
    fraction of an epoch), the settings unused."""
    if source_kind(source) == SHARDED:
        from bpetopics.text.sharded import open_sharded

        return {"train": open_sharded(source, verify=True)}
    return prepare_corpus(source, **settings.keywords())
