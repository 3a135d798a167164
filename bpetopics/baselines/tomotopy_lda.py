"""LDA by collapsed Gibbs sampling (tomotopy), behind the topic-model contract.

tomotopy is what a practitioner picks for LDA today: a C++ collapsed Gibbs sampler with
hyperparameter optimisation, faster and more coherent than gensim's online variational
``LdaModel`` on 20 Newsgroups (docs/results/text-comparison.md).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

__all__ = ["TomotopyLDA"]


def _documents(X: sp.csr_matrix) -> list:
    """Each row of a count matrix as a list of word-id strings, word w repeated x_nw times.

    tomotopy takes documents as token lists; the tokens are our vocabulary indices, so
    its topics map back to our columns without a second vocabulary.
    """
    X = sp.csr_matrix(X)
    counts = np.asarray(X.data).astype(np.int64)
    if (counts < 0).any():
        raise ValueError("counts must be non-negative integers")
    tokens = np.repeat(X.indices, counts).astype(str)
    bounds = np.cumsum(np.asarray(X.sum(axis=1)).ravel().astype(np.int64))
    return np.split(tokens, bounds[:-1])


class TomotopyLDA:
    """Latent Dirichlet allocation by collapsed Gibbs sampling (``tomotopy.LDAModel``).

    Scikit-learn style: the constructor only stores its arguments; ``fit`` trains.

    Parameters
    ----------
    n_topics : int
        T.
    iterations : int
        Gibbs sweeps over the corpus (1,000 by default, tomotopy's documented setting
        for a converged chain on corpora of this size).
    alpha : float
        Symmetric Dirichlet prior on document-topic mixtures (tomotopy's default, then
        optimised every ``optim_interval`` sweeps).
    eta : float
        Symmetric Dirichlet prior on topic-word distributions.
    optim_interval : int
        Sweeps between hyperparameter optimisations (0: keep alpha fixed).
    infer_iterations : int
        Gibbs sweeps per document in ``doc_topic``.
    workers : int
        Sampling threads (1: deterministic for a seed).
    random_state : int

    Attributes
    ----------
    topic_word_ : np.ndarray, shape (T, W)
        Rows sum to 1; words that never occur in training get the topics' eta smoothing.
    fit_seconds_ : float
        Wall time of training.
    """

    def __init__(self, n_topics: int = 20, iterations: int = 1000, alpha: float = 0.1,
                 eta: float = 0.01, optim_interval: int = 10, infer_iterations: int = 100,
                 workers: int = 1, random_state: int = 0):
        self.n_topics = n_topics
        self.iterations = iterations
        self.alpha = alpha
        self.eta = eta
        self.optim_interval = optim_interval
        self.infer_iterations = infer_iterations
        self.workers = workers
        self.random_state = random_state

    def fit(self, X, y=None):
        """Train on a document-term count matrix.

        Parameters
        ----------
        X : scipy.sparse matrix, shape (N, W)
            Integer word counts.

        Returns
        -------
        self
        """
        import tomotopy as tp

        X = sp.csr_matrix(X)
        self.n_words_ = X.shape[1]
        model = tp.LDAModel(k=self.n_topics, alpha=self.alpha, eta=self.eta,
                            seed=int(self.random_state))
        model.optim_interval = int(self.optim_interval)
        n_skipped = 0
        for words in _documents(X):
            if len(words):
                model.add_doc(words.tolist())
            else:
                n_skipped += 1
        self.n_empty_documents_ = n_skipped
        t0 = time.perf_counter()
        # tomotopy trains in chunks of sweeps; one call keeps the chain identical to a
        # single train(iterations) run.
        model.train(int(self.iterations), workers=int(self.workers))
        self.fit_seconds_ = time.perf_counter() - t0
        self.model_ = model
        self.topic_word_ = self._topic_word(model)
        return self

    def _topic_word(self, model) -> np.ndarray:
        """(T, W) in our column order; tomotopy's vocabulary holds only seen words."""
        columns = np.array([int(w) for w in model.used_vocabs], dtype=np.int64)
        dist = np.vstack([model.get_topic_word_dist(t) for t in range(self.n_topics)])
        topic_word = np.full((self.n_topics, self.n_words_), 0.0)
        topic_word[:, columns] = dist
        # Unseen words: the posterior mean under eta, i.e. eta / (n_t + W eta) relative
        # to seen words; a tiny floor keeps every row a proper distribution.
        topic_word[topic_word <= 0] = 1e-12
        return topic_word / topic_word.sum(axis=1, keepdims=True)

    def doc_topic(self, X) -> np.ndarray:
        """Topic mixtures of documents by Gibbs sampling with the topics frozen.

        Parameters
        ----------
        X : scipy.sparse matrix, shape (N, W)

        Returns
        -------
        np.ndarray of float64, shape (N, T), rows sum to 1 (uniform for an empty row)
        """
        import tomotopy as tp

        X = sp.csr_matrix(X)
        if X.shape[1] != self.n_words_:
            raise ValueError(f"X has {X.shape[1]} words, the model {self.n_words_}")
        out = np.full((X.shape[0], self.n_topics), 1.0 / self.n_topics)
        docs, rows = [], []
        for n, words in enumerate(_documents(X)):
            doc = self.model_.make_doc(words.tolist()) if len(words) else None
            if doc is not None and len(doc.words):
                docs.append(doc)
                rows.append(n)
        if docs:
            dists, _ = self.model_.infer(docs, iterations=int(self.infer_iterations),
                                         workers=int(self.workers),
                                         parallel=tp.ParallelScheme.NONE)
            out[rows] = np.asarray(dists, dtype=np.float64)
        return out / out.sum(axis=1, keepdims=True)

    def top_words(self, vocabulary, n: int = 10) -> list:
        """Each topic's ``n`` most probable words, list of T lists of str."""
        from bpetopics.topwords import top_words

        return top_words(self.topic_word_, vocabulary, n)
