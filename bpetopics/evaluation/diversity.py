"""Topic diversity, Hoyer sparsity of codes, code statistics and topic usage."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from bpetopics.sparsity import hoyer_sparsity
from bpetopics.topwords import top_word_ids

__all__ = ["topic_diversity", "exclusive_topic_diversity", "hoyer_sparsity", "code_stats",
           "unused_topic_share"]


def topic_diversity(topic_word: np.ndarray, top_n: int = 25) -> float:
    """Fraction of distinct words among the ``top_n`` words of all topics.

    Parameters
    ----------
    topic_word : np.ndarray, shape (T, W)
    top_n : int
        25 as in Dieng et al. (ETM), the usual definition.

    Returns
    -------
    float
        |union of the T top-n lists| / (T * top_n), in [1/T, 1]; 1 means no top word is
        shared by two topics.
    """
    ids = top_word_ids(topic_word, top_n)
    return float(np.unique(ids).size / ids.size)


def exclusive_topic_diversity(topic_word: np.ndarray, top_n: int = 25) -> float:
    """Fraction of top-word slots held by a word that is in exactly one topic's list.

    TopMost's ``TD`` (Wu et al. 2024): with c_w the number of topics whose top ``top_n``
    words include w, TD = |{slots whose word has c_w = 1}| / (T * top_n). Stricter than
    :func:`topic_diversity`: a word shared by two topics costs both slots.

    Parameters
    ----------
    topic_word : np.ndarray, shape (T, W)
    top_n : int

    Returns
    -------
    float in [0, 1]
    """
    ids = top_word_ids(topic_word, top_n)
    _, inverse, counts = np.unique(ids, return_inverse=True, return_counts=True)
    return float((counts[inverse] == 1).sum() / ids.size)


def code_stats(codes) -> dict:
    """Summary of a set of codes (binary BPE codes or real-valued latent means).

    Parameters
    ----------
    codes : np.ndarray or scipy.sparse matrix, shape (N, K)

    Returns
    -------
    dict
        ``mean_hoyer``: mean Hoyer sparsity (empty code = 1);
        ``mean_active``: mean number of non-zero entries per code;
        ``n_distinct``: number of distinct codes (rows);
        ``share_empty``: share of all-zero codes;
        ``share_unused_bits``: share of dimensions that are zero in every code.
    """
    z = codes.toarray() if sp.issparse(codes) else np.asarray(codes)
    if z.ndim == 1:
        z = z[None, :]
    active = z != 0
    n_active = active.sum(axis=1)
    return {
        "mean_hoyer": float(hoyer_sparsity(z).mean()),
        "mean_active": float(n_active.mean()),
        "n_distinct": int(np.unique(np.ascontiguousarray(z), axis=0).shape[0]),
        "share_empty": float((n_active == 0).mean()),
        "share_unused_bits": float((~active.any(axis=0)).mean()),
    }


def unused_topic_share(doc_topic: np.ndarray) -> float:
    """Share of topics that are never any document's dominant topic.

    A topic is *used* if it has the largest mixture weight for at least one document
    (argmax, ties to the lower index). This is scale-free and the same for LDA, whose
    posterior mixtures are never exactly zero, and for BPE mixtures; a threshold on the
    mean weight (e.g. below 1 / (10 T)) would depend on the Dirichlet prior's smoothing.

    Parameters
    ----------
    doc_topic : np.ndarray, shape (N, T)

    Returns
    -------
    float
        (number of topics that are nobody's argmax) / T.
    """
    doc_topic = np.asarray(doc_topic)
    n_topics = doc_topic.shape[1]
    used = np.zeros(n_topics, dtype=bool)
    if doc_topic.shape[0]:
        used[np.argmax(doc_topic, axis=1)] = True
    return float(1.0 - used.mean())
