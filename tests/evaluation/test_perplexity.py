import numpy as np
import pytest
import scipy.sparse as sp

from bpetopics.evaluation import completion_perplexity, heldout_log_likelihood, split_documents
from tests.evaluation.synthetic import FixedTopicModel, sample_documents


def test_split_halves_partition_each_document():
    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.poisson(0.5, size=(50, 30)))
    obs, held = split_documents(X, seed=3)
    assert (abs(obs + held - X)).sum() == 0
    n = np.asarray(X.sum(axis=1)).ravel()
    np.testing.assert_array_equal(np.asarray(obs.sum(axis=1)).ravel(), n // 2)
    np.testing.assert_array_equal(np.asarray(held.sum(axis=1)).ravel(), n - n // 2)
    obs2, _ = split_documents(X, seed=3)
    assert (obs != obs2).nnz == 0  # seeded
    obs3, _ = split_documents(X, seed=4)
    assert (obs != obs3).nnz > 0


def test_heldout_log_likelihood_hand_computed():
    # doc 0: theta = (1, 0); doc 1: theta = (0.5, 0.5)
    # topics: t0 = (0.5, 0.5, 0), t1 = (0, 0.5, 0.5)
    # doc 0 counts (2, 0, 0): 2 log 0.5;  doc 1 counts (0, 1, 1): log 0.5 + log 0.25
    theta = np.array([[1.0, 0.0], [0.5, 0.5]])
    beta = np.array([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5]])
    X = sp.csr_matrix(np.array([[2, 0, 0], [0, 1, 1]]))
    expected = 2 * np.log(0.5) + np.log(0.5) + np.log(0.25)
    assert heldout_log_likelihood(theta, beta, X) == pytest.approx(expected)
    assert heldout_log_likelihood(theta, beta, X, batch_nnz=1) == pytest.approx(expected)


class Uniform:
    def __init__(self, n_words, n_topics=3):
        self.topic_word_ = np.full((n_topics, n_words), 1.0 / n_words)

    def doc_topic(self, X):
        return np.full((X.shape[0], self.topic_word_.shape[0]), 1.0 / self.topic_word_.shape[0])


def test_true_topics_beat_uniform_and_uniform_is_W():
    rng = np.random.default_rng(0)
    W, T = 60, 4
    beta = rng.dirichlet(np.full(W, 0.1), size=T)
    X, _ = sample_documents(beta, n_docs=300, doc_len=60, seed=1)
    true = completion_perplexity(FixedTopicModel(beta), X, seed=0)
    uniform = completion_perplexity(Uniform(W), X, seed=0)
    assert uniform.perplexity == pytest.approx(W)
    assert true.perplexity < 0.6 * W
    # knowing the topics but not the document (a flat theta) is worse than inferring theta
    flat = FixedTopicModel(beta, n_iter=0)
    assert true.perplexity < completion_perplexity(flat, X, seed=0).perplexity
    assert true.n_documents == 300 and true.n_skipped == 0
    assert true.n_tokens == 300 * 30


def test_documents_with_an_empty_half_are_skipped_and_counted():
    X = sp.csr_matrix(np.array([[3, 1, 0], [0, 1, 0], [0, 0, 0], [1, 1, 1]]))
    res = completion_perplexity(Uniform(3), X, seed=0)
    assert res.n_skipped == 2  # one token, no token
    assert res.n_documents == 2
    assert res.n_tokens == 2 + 2
    assert res.perplexity == pytest.approx(3.0)
