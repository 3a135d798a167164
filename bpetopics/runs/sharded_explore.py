"""``graph``, ``ldavis`` and ``evaluate`` on a run trained on a sharded corpus, without a
dense (N, W) or (N, K) matrix.

What every document contributes to the graph and to pyLDAvis is a sum over documents,
so a sum over the distinct codes the run wrote (``codes/distinct.npz``,
:mod:`bpetopics.runs.sharded_codes`): these views are exact and read one small file.
``evaluate`` needs documents (perplexity, the codes' sparsity, coherence's reference):
it reads a seeded sample of the training documents from the shards (a sharded corpus
has no test split) and says so; coherence there counts co-occurrence in documents, since
the shards keep counts, not word order. Library functions for
:mod:`bpetopics.runs.explore`, which dispatches here.
"""

from __future__ import annotations

import numpy as np

#: Documents ``evaluate`` samples from a sharded run's corpus by default.
DEFAULT_SAMPLE = 10_000


def sharded_graph(run, rule: str, threshold: float, mass: float, top_n: int):
    """The co-activation graph of all the training documents, from their distinct codes
    (weighted by documents; node ``probability``: the token share)."""
    from bpetopics.runs.sharded_codes import read_distinct
    from bpetopics.viz import coactivation_graph

    distinct = read_distinct(run)
    model = run.model
    return coactivation_graph(model.code_topic(distinct.codes), model.topic_word_, run.vocabulary, rule=rule,
                              threshold=threshold, mass=mass, top_n=top_n, doc_lengths=distinct.tokens,
                              doc_weights=distinct.documents)


def sharded_bit_table(run, labels=None):
    """:func:`bpetopics.viz.bit_table` with each bit's usage over all training documents."""
    import pandas as pd

    from bpetopics.runs.sharded_codes import read_distinct
    from bpetopics.viz import bit_table

    distinct = read_distinct(run)
    model = run.model
    table = bit_table(model.code_topic, model.code_length(), labels=labels, topic_word=model.topic_word_,
                      vocabulary=run.vocabulary)
    on = distinct.bit_documents()
    table["usage"] = on / max(distinct.n_docs, 1)
    table["n_docs"] = pd.array(on, dtype="Int64")
    return table


def sharded_ldavis_inputs(run) -> dict:
    """pyLDAvis's inputs with one row per distinct code: ``doc_topic`` f(u), ``doc_lengths``
    the summed lengths of the documents with code u (pyLDAvis weighs mixtures by lengths
    and sums them, so the page is that of all documents); ``term_frequency`` the corpus's
    column sums; plus ``n_documents`` and ``note`` (what the rows are)."""
    from bpetopics.runs.sharded_codes import read_distinct

    distinct = read_distinct(run)
    model = run.model
    return {"topic_word": model.topic_word_, "doc_topic": model.code_topic(distinct.codes),
            "doc_lengths": distinct.tokens.astype(np.float64), "vocabulary": list(run.vocabulary),
            "term_frequency": distinct.term_frequency, "n_documents": distinct.n_docs,
            "note": f"all {distinct.n_docs:,} documents, summed by their {len(distinct.documents):,} distinct codes"}


def sample_rows(n_docs: int, size: int, seed: int) -> np.ndarray:
    """``size`` distinct row numbers of ``range(n_docs)`` drawn with ``seed``, sorted (all
    rows when ``size >= n_docs``)."""
    if size >= n_docs:
        return np.arange(n_docs)
    return np.sort(np.random.default_rng(seed).choice(n_docs, size=size, replace=False))


def sample_note(n: int, n_docs: int, seed: int) -> str:
    """The line that says which documents a sharded run was evaluated on."""
    which = (f"all {n_docs:,} training documents" if n >= n_docs
             else f"a sample of {n:,} of {n_docs:,} training documents (seed {seed})")
    return (f"evaluated on {which}: a sharded corpus has no test split; NPMI counts words that share a "
            "document (the shards keep counts, not word order); gensim's measures are skipped")


def evaluate_sharded_run(run, sample: int = DEFAULT_SAMPLE, top_n: int = 10, seed: int = 0) -> dict:
    """The measures of :func:`bpetopics.evaluation.evaluate_topic_model` on a seeded sample
    of a sharded run's training documents (gathered from the shards: ``sample`` x W
    sparse). Perplexity is document completion on the sample; purity and NMI use the
    corpus's labels when it has them (accuracy, which needs held-out documents, is None).
    The result has ``sample`` (documents, of, seed, note)."""
    from bpetopics.evaluation import evaluate_topic_model
    from bpetopics.evaluation.cooccurrence import EncodedTexts
    from bpetopics.runs.corpus import run_sharded_corpus

    corpus = run_sharded_corpus(run)
    n_docs = corpus.n_docs
    rows = sample_rows(n_docs, int(sample), seed)
    X = corpus.counts[rows]
    labels = None if corpus.labels is None else np.asarray(corpus.labels[rows])
    texts = EncodedTexts(ids=X.indices.astype(np.int64), offsets=X.indptr.astype(np.int64),
                         vocabulary=tuple(run.vocabulary))
    window = max(1, int(np.diff(X.indptr).max(initial=0)))      # each document one window
    model = run.model
    res = evaluate_topic_model(model, X, X, texts, list(run.vocabulary), train_labels=None, test_labels=labels,
                               codes=model.transform(X), top_n=top_n, seed=seed, gensim_measures=(),
                               coherence_window=window)
    seconds = run.summary.get("train_seconds")
    if seconds is None:
        seconds = sum(h.get("seconds", 0.0) for h in model.history_)
    note = sample_note(len(rows), n_docs, seed)
    return {"run": str(run.path), "model": run.config.get("model"), "reference": "sample", "heldout": "sample",
            "n_train": n_docs, "n_heldout": len(rows), "n_words": len(run.vocabulary), **res,
            "fit_seconds": float(seconds),
            "sample": {"documents": len(rows), "of": n_docs, "seed": seed, "note": note}}
