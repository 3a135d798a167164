"""Synthetic corpora with known topics, for tests."""

import numpy as np
import scipy.sparse as sp


def block_corpus(n_docs=300, n_topics=3, words_per_topic=8, doc_len=40, seed=0):
    """Planted block topics: topic t is uniform over words [t*b, (t+1)*b).

    Each document draws theta ~ Dirichlet(0.1) and doc_len tokens from sum_t theta_t beta_t.
    Returns (X csr (N x W) counts, topic_word (T x W), theta (N x T)).
    """
    rng = np.random.default_rng(seed)
    n_words = n_topics * words_per_topic
    topic_word = np.zeros((n_topics, n_words))
    for t in range(n_topics):
        topic_word[t, t * words_per_topic:(t + 1) * words_per_topic] = 1.0 / words_per_topic
    theta = rng.dirichlet(np.full(n_topics, 0.1), size=n_docs)
    X = np.vstack([rng.multinomial(doc_len, th @ topic_word) for th in theta])
    return sp.csr_matrix(X), topic_word, theta


class FixedTopicModel:
    """A "topic model" with known topics; ``doc_topic`` fits theta by EM on the counts.

    theta_d <- theta_d * sum_w x_dw beta_tw / (theta_d . beta_w), normalised
    (the multinomial-mixture EM with the topics frozen), ``n_iter`` times from uniform.
    """

    def __init__(self, topic_word, n_iter=50):
        self.topic_word_ = np.asarray(topic_word, dtype=np.float64)
        self.n_iter = n_iter

    def doc_topic(self, X):
        X = sp.csr_matrix(X, dtype=np.float64)
        beta = self.topic_word_
        n_topics = beta.shape[0]
        theta = np.full((X.shape[0], n_topics), 1.0 / n_topics)
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        for _ in range(self.n_iter):
            p = np.einsum("nt,nt->n", theta[rows], beta[:, X.indices].T)
            R = sp.csr_matrix((X.data / p, X.indices, X.indptr), shape=X.shape)
            theta = theta * (R @ beta.T)
            theta /= np.maximum(theta.sum(axis=1, keepdims=True), 1e-300)
            theta[~np.isfinite(theta).all(axis=1)] = 1.0 / n_topics
        empty = np.diff(X.indptr) == 0
        theta[empty] = 1.0 / n_topics
        return theta


def sample_documents(topic_word, n_docs=400, doc_len=60, alpha=0.2, seed=0):
    """Documents from known topics: theta ~ Dirichlet(alpha), words ~ Mult(theta @ beta)."""
    rng = np.random.default_rng(seed)
    n_topics = topic_word.shape[0]
    theta = rng.dirichlet(np.full(n_topics, alpha), size=n_docs)
    X = np.vstack([rng.multinomial(doc_len, th @ topic_word) for th in theta])
    return sp.csr_matrix(X), theta
