"""All the measures for one topic model, as one flat dict (a row of a comparison table)."""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np

from bpetopics.evaluation.classification import classification_accuracy
from bpetopics.evaluation.coherence import gensim_coherence, npmi_coherence, top_word_ids
from bpetopics.evaluation.cooccurrence import EncodedTexts, encode_texts
from bpetopics.evaluation.clustering import topic_nmi, topic_purity
from bpetopics.evaluation.diversity import (
    code_stats,
    exclusive_topic_diversity,
    topic_diversity,
    unused_topic_share,
)
from bpetopics.evaluation.perplexity import completion_perplexity

__all__ = ["evaluate_topic_model"]


def evaluate_topic_model(
    model,
    train_counts,
    test_counts,
    test_texts,
    vocabulary,
    train_labels=None,
    test_labels=None,
    codes=None,
    top_n: int = 10,
    seed: int = 0,
    *,
    gensim_measures: Sequence[str] = ("c_npmi",),
    diversity_top_n: int = 25,
    corpus_texts=None,
    coherence_window: int = 10,
) -> dict:
    """Evaluate one fitted topic model; ``compare`` is a loop of this over models.

    Parameters
    ----------
    model : object
        Fitted; exposes ``topic_word_`` (np.ndarray, shape (T, W), rows sum to 1) and
        ``doc_topic(X)`` (csr (N, W) -> np.ndarray (N, T)).
    train_counts : scipy.sparse matrix, shape (N_train, W)
        Used only for the classifier's training features.
    test_counts : scipy.sparse matrix, shape (N_test, W)
        Held-out documents: completion perplexity, inference speed, test features.
    test_texts : list of list of str (length N_ref) or EncodedTexts
        Reference corpus for coherence (usually the test split's tokens).
    vocabulary : list of str, length W
    train_labels, test_labels : np.ndarray of int, shapes (N_train,), (N_test,), optional
        When both are given, the accuracy of a logistic regression on the mixtures.
    codes : np.ndarray, shape (N, K), optional
        Codes (e.g. ``model.transform(test_counts)``, or VAE posterior means) for the
        sparsity statistics.
    top_n : int
        Top words per topic for coherence.
    seed : int
        Seeds the completion split and the classifier.
    gensim_measures : sequence of str
        gensim ``CoherenceModel`` measures to add (``"c_npmi"``, ``"c_v"``, ``"c_uci"``,
        ``"u_mass"``); empty to skip gensim (it is by far the slowest part).
    diversity_top_n : int
        Top words per topic for topic diversity (25 by convention).
    corpus_texts : list of list of str or EncodedTexts, optional
        A second coherence reference, the whole corpus (OCTIS's protocol: NPMI with the
        corpus itself as reference), scored as ``npmi_corpus``.
    coherence_window : int
        Sliding window of our NPMI (gensim's c_npmi: 10); at least the longest reference
        document's length makes each document one window (document co-occurrence).

    Returns
    -------
    dict
        Scalars (one table row): ``n_topics``; ``npmi`` / ``npmi_nonfinite`` /
        ``npmi_seconds`` (ours); ``gensim_<measure>`` / ``gensim_<measure>_nonfinite`` /
        ``gensim_<measure>_seconds``; ``npmi_corpus`` / ``npmi_corpus_nonfinite`` when
        ``corpus_texts`` is given; ``diversity`` (top ``diversity_top_n``),
        ``diversity_top10``, ``exclusive_diversity`` (TopMost's TD, top
        ``diversity_top_n``); ``perplexity``,
        ``perplexity_documents``, ``perplexity_skipped``; ``infer_seconds``,
        ``infer_docs_per_second`` (``doc_topic`` on the test counts); ``unused_topics``
        (share of topics that are no test document's argmax); ``accuracy``, ``purity``
        and ``nmi`` of the test documents' top topics against their labels (or None);
        ``fit_seconds`` when the model has ``fit_seconds_``; ``code_*`` from
        :func:`code_stats` when codes are given. Plus lists: ``npmi_per_topic``,
        ``top_words`` (T lists of ``top_n`` words).
    """
    topic_word = np.asarray(model.topic_word_, dtype=np.float64)
    n_topics = topic_word.shape[0]
    top_ids = top_word_ids(topic_word, top_n)
    out: dict = {"n_topics": n_topics}
    if hasattr(model, "fit_seconds_"):
        out["fit_seconds"] = float(model.fit_seconds_)

    encoded = test_texts if isinstance(test_texts, EncodedTexts) else encode_texts(test_texts, vocabulary)
    ours = npmi_coherence(top_ids, encoded, vocabulary, window_size=coherence_window)
    out["npmi"] = ours.mean
    out["npmi_nonfinite"] = ours.n_nonfinite
    out["npmi_seconds"] = ours.seconds
    for measure in gensim_measures:
        ref = gensim_coherence(top_ids, encoded, vocabulary, measure=measure)
        out[f"gensim_{measure}"] = ref.mean
        out[f"gensim_{measure}_nonfinite"] = ref.n_nonfinite
        out[f"gensim_{measure}_seconds"] = ref.seconds

    if corpus_texts is not None:
        corpus = (corpus_texts if isinstance(corpus_texts, EncodedTexts)
                  else encode_texts(corpus_texts, vocabulary))
        whole = npmi_coherence(top_ids, corpus, vocabulary)
        out["npmi_corpus"] = whole.mean
        out["npmi_corpus_nonfinite"] = whole.n_nonfinite

    out["diversity"] = topic_diversity(topic_word, diversity_top_n)
    out["diversity_top10"] = topic_diversity(topic_word, 10)
    out["exclusive_diversity"] = exclusive_topic_diversity(topic_word, diversity_top_n)

    ppl = completion_perplexity(model, test_counts, seed=seed)
    out["perplexity"] = ppl.perplexity
    out["perplexity_documents"] = ppl.n_documents
    out["perplexity_skipped"] = ppl.n_skipped

    t0 = time.perf_counter()
    test_mix = np.asarray(model.doc_topic(test_counts))
    infer = time.perf_counter() - t0
    out["infer_seconds"] = infer
    out["infer_docs_per_second"] = test_counts.shape[0] / infer if infer > 0 else float("inf")
    out["unused_topics"] = unused_topic_share(test_mix)

    if train_labels is not None and test_labels is not None:
        train_mix = np.asarray(model.doc_topic(train_counts))
        out["accuracy"] = classification_accuracy(train_mix, train_labels, test_mix, test_labels, seed=seed)
    else:
        out["accuracy"] = None
    if test_labels is not None:
        out["purity"] = topic_purity(test_mix, test_labels)
        out["nmi"] = topic_nmi(test_mix, test_labels)
    else:
        out["purity"] = out["nmi"] = None

    if codes is not None:
        for key, value in code_stats(codes).items():
            out[f"code_{key}"] = value

    out["npmi_per_topic"] = ours.per_topic.tolist()
    out["top_words"] = [[vocabulary[i] for i in row] for row in top_ids]
    return out
