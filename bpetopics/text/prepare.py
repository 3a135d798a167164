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
from bpetopics.text.passages import check_unit, split_passages
from bpetopics.text.pipeline import TextPipeline
from bpetopics.text.errors import CorpusError
from bpetopics.text.settings import CorpusSettings
from bpetopics.text.sources import NEWSGROUPS, SAVED, SHARDED, drawn_test_split, load_source, source_kind


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
    train_tokens = pipeline.analyze_many(raw["train"].texts, raw["train"].cleaned)
    pipeline.fit_tokens(train_tokens)
    out = {}
    for split, docs in raw.items():
        tokens = train_tokens if split == "train" else pipeline.analyze_many(docs.texts, docs.cleaned)
        out[split] = _build(docs, tokens, pipeline)
    return out


def corpus_on_vocabulary(docs: RawDocuments, pipeline: TextPipeline,
                         passages: str | None = None) -> tuple[Corpus, int]:
    """Clean and count ``docs`` on the fitted ``pipeline``'s vocabulary (never refitted),
    each split into its ``passages`` first when given (as training split its documents:
    :func:`~bpetopics.text.passages.split_passages`).

    Returns the Corpus (documents left empty dropped and recorded in ``dropped``) and
    the number of tokens, after cleaning, that are not in the vocabulary (dropped)."""
    docs = split_passages(docs, passages, pipeline.clean)
    tokens = pipeline.analyze_many(docs.texts, docs.cleaned)
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
    test_size: float | None = None,
    passages: str | None = None,
    **cleaning,
) -> dict[str, Corpus]:
    """Load, clean and vectorise a corpus.

    Parameters
    ----------
    source : str or path
        ``"20newsgroups"`` (by-date train/test split), a named corpus (``"abc"``,
        ``"state_union"``, ``"lee"``, ``"abc-sentences"``, ``"state_union-sentences"``: :mod:`bpetopics.text.named_corpora`,
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
    test_size : float, optional
        A source without a test split: hold out this share of its documents (in (0, 1),
        drawn with ``random_state`` after ``max_docs``) as the ``"test"`` split, before the
        vocabulary is fitted on the rest (:func:`hold_out`).
    passages : {"paragraphs", "sentences"} or None
        Model each document's passages instead of the whole document
        (:mod:`bpetopics.text.passages`): split after ``max_docs`` and ``test_size`` have
        drawn whole documents, so that a document's passages stay in one split.
    **cleaning
        Other :class:`TextPipeline` settings: ``strip_headers``, ``strip_footers``,
        ``strip_quotes``, ``strip_binary``, ``lowercase``, ``min_token_length``.

    Returns
    -------
    dict of str to Corpus
        ``{"train": Corpus, "test": Corpus}`` when the source has a test split or
        ``test_size`` is given, else ``{"train": Corpus}``. The test split is vectorised
        with the train vocabulary. All splits share one fitted :class:`TextPipeline`.

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
    check_unit(passages)
    if test_size is not None and not 0 < test_size < 1:
        raise CorpusError(f"test_size={test_size} is not a share of the documents: give a number between 0 and 1, "
                          "e.g. 0.2")
    if test_size is not None and not drawn_test_split(source):       # (before the seconds of loading it)
        raise CorpusError(f"{source} has its own test split: leave --test-size (test_size) out")
    if kind == NEWSGROUPS:
        pipeline.stop_words  # noqa: B018
    raw = load_source(source, data_home=data_home, categories=categories,
                      download_if_missing=download_if_missing,
                      fields={"text_field": text_field, "id_field": id_field, "label_field": label_field,
                              "skip_bad_lines": skip_bad_lines, "time_field": time_field})
    pipeline.stop_words  # noqa: B018
    return corpus_from_documents(
        draw_documents(raw, source, max_docs, random_state, test_size, passages, pipeline.clean), pipeline)


def draw_documents(raw: dict, source, max_docs: int | None = None, random_state: int = 0,
                   test_size: float | None = None, passages: str | None = None,
                   clean=None) -> dict[str, RawDocuments]:
    """The documents a corpus keeps of its source's splits ``raw``: at most ``max_docs`` a
    split, then ``test_size`` of the train split held out as the test split
    (:func:`hold_out`), both drawn with ``random_state``, then each document cleaned by
    ``clean`` (the pipeline's :meth:`~TextPipeline.clean`) and split into its
    ``passages`` when given (:func:`~bpetopics.text.passages.split_passages`). What
    :func:`prepare_corpus` does, and what rebuilding a run's corpus does again."""
    raw = {split: docs.sample(max_docs, random_state) for split, docs in raw.items()}
    if test_size is not None:
        if "test" in raw:
            raise CorpusError(f"{source} has its own test split: leave --test-size (test_size) out")
        raw = hold_out(raw["train"], test_size, random_state)
    return {split: split_passages(docs, passages, clean) for split, docs in raw.items()}


def hold_out(docs: RawDocuments, test_size: float, random_state: int = 0) -> dict[str, RawDocuments]:
    """``{"train": ..., "test": ...}``: round(``test_size`` N) of the N documents, drawn
    without replacement with ``random_state``, as the test split, the rest as the train
    split, each in the documents' order. CorpusError when either would be empty."""
    n_docs = len(docs)
    n_test = int(round(test_size * n_docs))
    if n_test < 1 or n_test >= n_docs:
        raise CorpusError(f"{n_docs} documents are too few to hold out {test_size:g} of them: give more documents "
                          "or another --test-size")
    rng = np.random.default_rng(random_state)
    test = np.zeros(n_docs, dtype=bool)
    test[rng.choice(n_docs, size=n_test, replace=False)] = True
    train_docs, test_docs = docs.take(np.flatnonzero(~test)), docs.take(np.flatnonzero(test))
    train_docs.split, test_docs.split = "train", "test"
    return {"train": train_docs, "test": test_docs}


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
