import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from bpetopics.baselines import LDABaseline
from tests.evaluation.synthetic import block_corpus


@pytest.fixture(scope="module")
def fitted():
    X, beta, theta = block_corpus(n_docs=300, n_topics=3, words_per_topic=8, doc_len=40, seed=0)
    model = LDABaseline(n_topics=3, passes=15, random_state=0).fit(X)
    return model, X, beta, theta


def test_init_only_stores_parameters():
    m = LDABaseline(n_topics=7, passes=2, alpha="symmetric", random_state=3)
    assert not hasattr(m, "model_") and not hasattr(m, "topic_word_")
    assert (m.n_topics, m.passes, m.alpha, m.random_state) == (7, 2, "symmetric", 3)


def test_shapes_and_normalisation(fitted):
    model, X, beta, _ = fitted
    assert model.topic_word_.shape == (3, X.shape[1])
    np.testing.assert_allclose(model.topic_word_.sum(axis=1), 1.0, atol=1e-10)
    theta = model.doc_topic(X[:50])
    assert theta.shape == (50, 3) and theta.dtype == np.float64
    np.testing.assert_allclose(theta.sum(axis=1), 1.0, atol=1e-10)
    assert model.fit_seconds_ > 0
    np.testing.assert_array_equal(theta, model.doc_topic(X[:50]))  # deterministic
    # chunking does not change the result
    small = LDABaseline(n_topics=3, chunksize=7, random_state=0)
    small.__dict__.update({k: v for k, v in model.__dict__.items() if k.endswith("_")})
    np.testing.assert_allclose(small.doc_topic(X[:50]), theta, atol=1e-3)


def test_recovers_planted_block_topics(fitted):
    model, X, beta, theta = fitted
    # match fitted topics to true ones (Hungarian on cosine similarity)
    a = model.topic_word_ / np.linalg.norm(model.topic_word_, axis=1, keepdims=True)
    b = beta / np.linalg.norm(beta, axis=1, keepdims=True)
    cos = a @ b.T
    rows, cols = linear_sum_assignment(-cos)
    assert cos[rows, cols].min() > 0.95
    for r, c in zip(rows, cols):
        top = set(np.argsort(-model.topic_word_[r])[:8])
        assert top == set(range(c * 8, (c + 1) * 8))
    # document mixtures follow the planted ones
    est = model.doc_topic(X)[:, rows[np.argsort(cols)]]
    assert np.mean(np.argmax(est, 1) == np.argmax(theta, 1)) > 0.9


def test_same_seed_same_model():
    X, _, _ = block_corpus(n_docs=60, seed=1)
    a = LDABaseline(n_topics=3, passes=2, random_state=5).fit(X)
    b = LDABaseline(n_topics=3, passes=2, random_state=5).fit(X)
    np.testing.assert_array_equal(a.topic_word_, b.topic_word_)


def test_top_words():
    X, _, _ = block_corpus(n_docs=60, seed=1)
    m = LDABaseline(n_topics=3, passes=2).fit(X)
    vocab = [f"w{i}" for i in range(X.shape[1])]
    tw = m.top_words(vocab, n=4)
    assert len(tw) == 3 and all(len(t) == 4 and set(t) <= set(vocab) for t in tw)
