"""Held-out perplexity by document completion.

For each test document the token occurrences are shuffled (seeded) and cut in two:
the first floor(n_d / 2) tokens are *observed*, the other ceil(n_d / 2) are *held out*.
The model infers the document's topic mixture theta_d from the observed half only, and
is scored on the held-out half:

    p(w | d)   = sum_t theta_dt * topic_word[t, w]
    perplexity = exp( - sum_d sum_w x^held_dw log p(w | d) / sum_d sum_w x^held_dw )

Shuffling token occurrences (rather than splitting each word's count binomially) gives
halves of exactly fixed size, so no document ends up with most of its words on one side.
Documents with fewer than two tokens have an empty half: they are left out and counted
in ``n_skipped``. The likelihood is evaluated on the sparse non-zeros only. This is the
same procedure for every model that exposes ``topic_word_`` (T x W) and ``doc_topic(X)``
(N x T); gensim's variational bound is never used.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = ["split_documents", "heldout_log_likelihood", "completion_perplexity", "PerplexityResult"]

#: Floor on p(w | d) before the log, so that a model giving a word zero probability gets
#: a large but finite penalty (log(1e-300) ~ -690.8) instead of an infinite perplexity.
PROB_FLOOR = 1e-300


@dataclass(frozen=True)
class PerplexityResult:
    """Document-completion perplexity.

    Attributes
    ----------
    perplexity : float
        exp(- held-out log-likelihood / held-out tokens).
    log_likelihood : float
        Sum of log p(w | d) over the held-out tokens.
    n_tokens : int
        Number of held-out tokens scored.
    n_documents : int
        Number of documents scored.
    n_skipped : int
        Documents left out because one half was empty (fewer than 2 tokens).
    seconds : float
        Wall time, inference included.
    """

    perplexity: float
    log_likelihood: float
    n_tokens: int
    n_documents: int
    n_skipped: int
    seconds: float


def split_documents(X, seed: int = 0):
    """Split every document's tokens at random into an observed and a held-out half.

    Parameters
    ----------
    X : scipy.sparse matrix, shape (N, W), non-negative integer counts
    seed : int

    Returns
    -------
    observed : scipy.sparse.csr_matrix, shape (N, W)
        floor(n_d / 2) tokens of each document.
    heldout : scipy.sparse.csr_matrix, shape (N, W)
        The other ceil(n_d / 2) tokens; ``observed + heldout == X``.
    """
    X = sp.csr_matrix(X)
    counts = X.data.astype(np.int64)
    if np.any(counts != X.data) or np.any(counts < 0):
        raise ValueError("document completion needs non-negative integer counts")
    n_docs, n_words = X.shape
    rows = np.repeat(np.arange(n_docs), np.diff(X.indptr))
    # one entry per token occurrence
    tok_doc = np.repeat(rows, counts)
    tok_word = np.repeat(X.indices, counts)
    rng = np.random.default_rng(seed)
    order = np.lexsort((rng.random(tok_doc.size), tok_doc))  # shuffle within documents
    tok_doc, tok_word = tok_doc[order], tok_word[order]
    doc_len = np.bincount(tok_doc, minlength=n_docs)
    doc_start = np.concatenate([[0], np.cumsum(doc_len)])
    rank = np.arange(tok_doc.size) - doc_start[tok_doc]
    first = rank < (doc_len // 2)[tok_doc]

    def build(mask):
        m = sp.coo_matrix(
            (np.ones(int(mask.sum()), dtype=X.dtype), (tok_doc[mask], tok_word[mask])),
            shape=(n_docs, n_words),
        ).tocsr()
        m.sum_duplicates()
        return m

    return build(first), build(~first)


def heldout_log_likelihood(doc_topic: np.ndarray, topic_word: np.ndarray, X, batch_nnz: int = 200_000) -> float:
    """Sum of x_dw log(theta_d . topic_word[:, w]) over the non-zeros of X.

    Parameters
    ----------
    doc_topic : np.ndarray, shape (N, T)
        theta, rows on the simplex.
    topic_word : np.ndarray, shape (T, W)
        Rows on the simplex.
    X : scipy.sparse matrix, shape (N, W), counts
    batch_nnz : int
        Non-zeros processed at once (memory ~ batch_nnz * T floats).

    Returns
    -------
    float
    """
    X = sp.csr_matrix(X)
    theta = np.asarray(doc_topic, dtype=np.float64)
    beta_t = np.ascontiguousarray(np.asarray(topic_word, dtype=np.float64).T)  # (W, T)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    cols, data = X.indices, X.data.astype(np.float64)
    total = 0.0
    for a in range(0, len(cols), batch_nnz):
        b = a + batch_nnz
        # p(w | d) = sum_t theta_dt beta_tw, on the non-zeros only
        p = np.einsum("nt,nt->n", theta[rows[a:b]], beta_t[cols[a:b]])
        total += float(data[a:b] @ np.log(np.maximum(p, PROB_FLOOR)))
    return total


def completion_perplexity(model, X, seed: int = 0) -> PerplexityResult:
    """Document-completion perplexity of a topic model on held-out documents.

    Parameters
    ----------
    model : object
        Any model with ``topic_word_`` (np.ndarray, shape (T, W), rows sum to 1) and
        ``doc_topic(X)`` (csr (N, W) -> np.ndarray (N, T), rows sum to 1); a model whose
        predictive is not the mixture theta . topic_word may instead provide
        ``heldout_log_likelihood(observed, heldout) -> float``.
    X : scipy.sparse matrix, shape (N, W), integer counts of the test documents
    seed : int
        Seed of the random split.

    Returns
    -------
    PerplexityResult
    """
    t0 = time.perf_counter()
    observed, heldout = split_documents(X, seed=seed)
    n_obs = np.asarray(observed.sum(axis=1)).ravel()
    n_held = np.asarray(heldout.sum(axis=1)).ravel()
    keep = np.flatnonzero((n_obs > 0) & (n_held > 0))
    observed, heldout = observed[keep], heldout[keep]
    if hasattr(model, "heldout_log_likelihood"):
        # A model whose word distribution is not a mixture of its topics (ProdLDA's
        # product of experts) scores the held-out half with its own predictive.
        loglik = float(model.heldout_log_likelihood(observed, heldout))
    else:
        theta = np.asarray(model.doc_topic(observed), dtype=np.float64)
        loglik = heldout_log_likelihood(theta, model.topic_word_, heldout)
    n_tokens = int(n_held[keep].sum())
    ppl = float(np.exp(-loglik / n_tokens)) if n_tokens else float("nan")
    return PerplexityResult(
        perplexity=ppl,
        log_likelihood=loglik,
        n_tokens=n_tokens,
        n_documents=int(keep.size),
        n_skipped=int(X.shape[0] - keep.size),
        seconds=time.perf_counter() - t0,
    )
