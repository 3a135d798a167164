"""Non-negative matrix factorisation (scikit-learn) as a topic model.

NMF with the generalised Kullback-Leibler loss on raw counts is PLSA up to scaling
(Gaussier and Goutte 2005): X ~ H W with H >= 0 (documents x topics) and W >= 0
(topics x words). Normalising each row of W gives topics on the simplex, and each
row of H a document's mixture, so NMF sits behind the same contract as LDA and PoissBPE
and gets a completion perplexity too.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

__all__ = ["NMFTopics"]


class NMFTopics:
    """Topics by NMF (``sklearn.decomposition.NMF``, KL loss, multiplicative updates).

    Parameters
    ----------
    n_topics : int
        T.
    max_iter : int
        Multiplicative-update iterations.
    init : str
        ``"nndsvda"`` (deterministic SVD-based start, zeros filled with the mean).
    random_state : int

    Attributes
    ----------
    topic_word_ : np.ndarray, shape (T, W)
        Rows of the fitted components, normalised to sum to 1.
    fit_seconds_ : float
    """

    def __init__(self, n_topics: int = 20, max_iter: int = 200, init: str = "nndsvda",
                 random_state: int = 0):
        self.n_topics = n_topics
        self.max_iter = max_iter
        self.init = init
        self.random_state = random_state

    def fit(self, X, y=None):
        """Factorise a document-term count matrix X (N, W) ~ H (N, T) W (T, W)."""
        from sklearn.decomposition import NMF

        X = sp.csr_matrix(X, dtype=np.float64)
        self.n_words_ = X.shape[1]
        self.model_ = NMF(n_components=self.n_topics, init=self.init,
                          beta_loss="kullback-leibler", solver="mu",
                          max_iter=int(self.max_iter), random_state=self.random_state)
        t0 = time.perf_counter()
        self.model_.fit(X)
        self.fit_seconds_ = time.perf_counter() - t0
        comp = np.asarray(self.model_.components_, dtype=np.float64) + 1e-12
        self.topic_word_ = comp / comp.sum(axis=1, keepdims=True)
        return self

    def doc_topic(self, X) -> np.ndarray:
        """Mixtures of documents: H for X with the components frozen, rows normalised.

        The KL objective weighs topic t by its component's total mass, so
        theta_nt = H_nt * sum_w W_tw / sum_s H_ns * sum_w W_sw (the PLSA mixture).

        Returns
        -------
        np.ndarray, shape (N, T), rows sum to 1 (uniform for a document NMF gives no weight)
        """
        X = sp.csr_matrix(X, dtype=np.float64)
        if X.shape[1] != self.n_words_:
            raise ValueError(f"X has {X.shape[1]} words, the model {self.n_words_}")
        weights = self.model_.transform(X) * self.model_.components_.sum(axis=1)
        total = weights.sum(axis=1, keepdims=True)
        uniform = np.full_like(weights, 1.0 / self.n_topics)
        return np.where(total > 0, weights / np.where(total > 0, total, 1.0), uniform)

    def top_words(self, vocabulary, n: int = 10) -> list:
        """Each topic's ``n`` most probable words, list of T lists of str."""
        from bpetopics.topwords import top_words

        return top_words(self.topic_word_, vocabulary, n)
