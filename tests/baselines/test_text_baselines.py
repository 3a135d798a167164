"""The text baselines recover planted topics and keep the topic-model contract."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment

from bpetopics.baselines import NMFTopics, ProdLDA, TomotopyLDA
from bpetopics.evaluation import completion_perplexity
from bpetopics.evaluation.perplexity import split_documents

T, W, N = 5, 100, 1000


@pytest.fixture(scope="module")
def planted():
    """Five topics on disjoint blocks of 20 words; sparse Dirichlet(0.1) mixtures."""
    rng = np.random.default_rng(0)
    beta = np.zeros((T, W))
    for t in range(T):
        beta[t, t * 20:(t + 1) * 20] = rng.dirichlet(np.ones(20))
    theta = rng.dirichlet([0.1] * T, size=N)
    X = sp.csr_matrix(np.stack([rng.multinomial(60, th @ beta) for th in theta]))
    return X, beta


def _matched_cosines(topic_word, beta):
    a = topic_word / np.linalg.norm(topic_word, axis=1, keepdims=True)
    b = beta / np.linalg.norm(beta, axis=1, keepdims=True)
    cos = a @ b.T
    rows, cols = linear_sum_assignment(-cos)
    return cos[rows, cols]


def _check_contract(model, X):
    assert model.topic_word_.shape == (T, W)
    np.testing.assert_allclose(model.topic_word_.sum(axis=1), 1.0, atol=1e-9)
    theta = model.doc_topic(X[:50])
    assert theta.shape == (50, T)
    np.testing.assert_allclose(theta.sum(axis=1), 1.0, atol=1e-6)
    words = model.top_words([f"w{i}" for i in range(W)], 3)
    assert len(words) == T and all(type(w) is str for w in words[0])


def test_tomotopy_recovers_planted_topics_deterministically(planted):
    X, beta = planted
    model = TomotopyLDA(T, iterations=200, random_state=3).fit(X)
    _check_contract(model, X)
    assert _matched_cosines(model.topic_word_, beta).min() > 0.97
    again = TomotopyLDA(T, iterations=200, random_state=3).fit(X)
    np.testing.assert_array_equal(model.topic_word_, again.topic_word_)
    np.testing.assert_array_equal(model.doc_topic(X[:20]), again.doc_topic(X[:20]))


def test_tomotopy_keeps_empty_documents_in_place(planted):
    X, _ = planted
    model = TomotopyLDA(T, iterations=20).fit(X)
    with_empty = sp.vstack([X[:3], sp.csr_matrix((1, W)), X[3:5]]).tocsr()
    theta = model.doc_topic(with_empty)
    np.testing.assert_allclose(theta[3], 1.0 / T)
    assert theta.shape == (6, T)


def test_nmf_recovers_planted_topics(planted):
    X, beta = planted
    model = NMFTopics(T).fit(X)
    _check_contract(model, X)
    assert _matched_cosines(model.topic_word_, beta).min() > 0.99


def test_prodlda_top_words_fall_in_planted_blocks(planted):
    X, beta = planted
    model = ProdLDA(T, epochs=150, batch_size=100, random_state=0).fit(X)
    _check_contract(model, X)
    assert model.history_[-1] < model.history_[0]          # the ELBO improved
    top = np.argsort(-model.topic_word_, axis=1, kind="stable")[:, :10]
    blocks = top // 20
    # each topic's top 10 words come from one planted block, and the blocks differ
    purity = [np.bincount(b, minlength=T).max() / 10 for b in blocks]
    assert min(purity) >= 0.9
    assert len({np.bincount(b).argmax() for b in blocks}) >= T - 1


def test_prodlda_completion_uses_its_product_of_experts(planted):
    X, _ = planted
    model = ProdLDA(T, epochs=5, batch_size=100).fit(X)
    observed, heldout = split_documents(X[:40], seed=0)
    # dense reference: ln softmax(BN(beta' theta)) at the held-out words
    import torch
    theta = torch.as_tensor(model.doc_topic(observed)).float()
    with torch.no_grad():
        logp = model.net_.log_word_probs(theta).double().numpy()
    expected = float((heldout.toarray() * logp).sum())
    assert model.heldout_log_likelihood(observed, heldout) == pytest.approx(expected, rel=1e-6)
    result = completion_perplexity(model, X[:40])
    assert np.isfinite(result.perplexity) and result.perplexity > 1


def test_prodlda_is_deterministic_for_a_seed(planted):
    X, _ = planted
    a = ProdLDA(T, epochs=2, random_state=5).fit(X[:300])
    b = ProdLDA(T, epochs=2, random_state=5).fit(X[:300])
    np.testing.assert_array_equal(a.topic_word_, b.topic_word_)
