"""A run's corpus, rebuilt from what ``config.json`` records (``corpus.source``,
``corpus.settings``, ``corpus.pipeline``): :func:`run_splits` (train and test splits, for
``evaluate``) and :func:`run_train_counts` (the saved training counts, for ``graph`` and
``ldavis``)."""

from __future__ import annotations

import warnings
from pathlib import Path

from bpetopics.runs.folder import RunError


def run_splits(run) -> dict:
    """The corpus a run was trained on, rebuilt: ``{"train": Corpus, "test": Corpus}``.

    A saved corpus (``bpetopics corpus``) is read back as it is; 20 Newsgroups, a named
    corpus (abc, state_union, lee, abc-sentences, state_union-sentences, 20newsgroups-subjects) or a folder of texts is loaded
    again with the recorded settings (categories, ``max_docs`` draw, held-out share,
    passages) and cleaned with the run's saved text pipeline (its stop words; the
    vocabulary is fitted again on the train split, exactly as in training). A run written by ``bpetopics update`` has its new
    documents counted on its vocabulary, as the update counted them (a train split
    alone). The result is checked
    against the run: the same vocabulary and, when known, the same training documents
    in the same order, and the same text (the fingerprints the run recorded, when it
    did); otherwise a :class:`RunError` (one line) says why.
    """
    from bpetopics.text import CorpusError, CorpusWarning, TextPipeline, corpus_from_documents, load_source, load_splits
    from bpetopics.text.prepare import corpus_on_vocabulary, draw_documents
    from bpetopics.text.settings import CorpusSettings
    from bpetopics.text.sources import NAMED, NEWSGROUPS, SAVED, SHARDED, source_kind

    cfg = run.config.get("corpus") or {}
    source = cfg.get("source")
    where = f"{run.path}/config.json"
    if not source:
        raise RunError(f"{where} does not record the corpus the run was trained on (corpus.source), "
                       "so its documents cannot be rebuilt")
    settings = cfg.get("settings")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CorpusWarning)
            kind = source_kind(source)
            if kind == SHARDED:
                raise RunError(f"{run.path} was trained on the sharded corpus {source}: evaluate does not "
                               "read sharded corpora yet; build an in-memory corpus of a sample to evaluate it")
            if kind == SAVED:
                splits = load_splits(source)
            else:
                if settings is None or cfg.get("pipeline") is None:
                    raise RunError(f"{where} does not record how the corpus was prepared (corpus.settings and "
                                   "corpus.pipeline): retrain with `bpetopics train`, or from a saved corpus")
                if kind not in (NEWSGROUPS, NAMED) and not Path(source).exists():
                    raise RunError(f"the run's corpus {source} is not there any more (runs of older bpetopics "
                                   "record paths relative to where `bpetopics train` ran): run from that "
                                   "folder, or restore it")
                pipeline = TextPipeline.from_dict(cfg["pipeline"])
                recorded = CorpusSettings.from_record(settings)
                categories = None if recorded.categories is None else list(recorded.categories)
                raw = load_source(source, data_home=recorded.data_home, categories=categories,
                                  fields=recorded.record_fields())
                if cfg.get("update") is not None:    # `bpetopics update`: counted on the run's vocabulary
                    splits = {"train": corpus_on_vocabulary(raw["train"], pipeline, recorded.passages)[0]}
                else:
                    raw = draw_documents(raw, source, recorded.max_docs, recorded.random_state, recorded.test_size,
                                         recorded.passages, pipeline.clean)
                    splits = corpus_from_documents(raw, pipeline)
    except CorpusError as exc:
        raise RunError(f"cannot rebuild the corpus of {run.path}: {exc}") from None
    train = splits["train"]
    if list(train.vocabulary) != list(run.vocabulary):
        ours, theirs = list(train.vocabulary), list(run.vocabulary)
        missing = len(set(theirs) - set(ours))
        differ = (f"{len(ours):,} words vs {len(theirs):,}" if len(ours) != len(theirs)
                  else f"{missing:,} of the run's {len(theirs):,} words missing" if missing
                  else "the same words in another order")
        raise RunError(f"the corpus {source} no longer gives the run's vocabulary ({differ}): its documents or "
                       "settings changed since training")
    try:
        ids, _ = run.doc_topics()
    except (OSError, KeyError, ValueError):
        ids = None
    if ids is not None and list(map(str, train.ids)) != ids:
        raise RunError(f"the corpus {source} no longer gives the run's {len(ids):,} training documents "
                       f"(it gives {train.n_docs:,}): its documents or settings changed since training")
    for name, digest in (cfg.get("fingerprints") or {}).items():
        if name in splits and splits[name].fingerprint() != digest:
            raise RunError(f"the {name} documents of {source} changed since training (the same vocabulary and "
                           "ids, other text): restore the corpus the run was trained on, or train again")
    return splits


def run_train_split(run):
    """(the run's train split rebuilt by :func:`run_splits`, None) or, when it cannot be
    rebuilt, (None, a note saying why): for what shows the documents' words and can do
    without them."""
    try:
        return run_splits(run)["train"], None
    except RunError as exc:
        return None, f"no document text: {exc}"


def unchecked_corpus_note(run) -> str | None:
    """A note for a run whose corpus cannot be checked against what it was trained on
    (trained before runs recorded their corpus's fingerprints), or None."""
    cfg = run.config.get("corpus") or {}
    if not cfg.get("source") or cfg.get("fingerprints") or "codes" in run.config:    # codes/: a sharded run
        return None
    return (f"{run.path} records no fingerprint of its corpus (trained by an older bpetopics): whether "
            "the corpus's text changed since training cannot be checked")


def run_train_counts(run):
    """The training counts of a run (CSR, N x W, rows in the order of its ids).

    Read from ``counts.npz``; for a run trained on a sharded corpus, the corpus's
    memory-mapped counts (:class:`~bpetopics.text.sharded_counts.ShardedCounts`: row and column
    sums are streamed, rows gathered by index; nothing dense); a run saved before that
    file existed has its corpus rebuilt with :func:`run_splits` instead. A damaged file
    is a :class:`RunError`.
    """
    if not run.has_counts():
        source = (run.config.get("corpus") or {}).get("source")
        if source:
            from bpetopics.text.sources import SHARDED, source_kind

            if source_kind(source) == SHARDED:
                return _sharded_counts(run, source)
        return run_splits(run)["train"].counts
    return run.counts()


def _sharded_counts(run, source):
    return run_sharded_corpus(run, source).counts


def run_sharded_corpus(run, source=None):
    """The sharded corpus a run was trained on (:class:`~bpetopics.text.sharded.ShardedCorpus`,
    memory-mapped), checked against the run's sizes; RunError (one line) otherwise."""
    from bpetopics.text import CorpusError
    from bpetopics.text.sharded import open_sharded

    source = source or (run.config.get("corpus") or {}).get("source")
    try:
        corpus = open_sharded(source)
    except CorpusError as exc:
        raise RunError(f"cannot read the corpus of {run.path}: {exc}") from None
    expected = (run.config.get("n_data"), run.config.get("n_features"))
    if corpus.counts.shape != expected:
        raise RunError(f"the sharded corpus {source} has shape {corpus.counts.shape}, the run {expected}: "
                       "it changed since training")
    return corpus
