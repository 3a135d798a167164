"""The documents' own mixtures (doc_topic's default): the MAP under a Dirichlet prior
centred on the code's mixture, compiled and reference, on planted data."""

import numpy as np
import pytest
import scipy.sparse as sp

from bpetopics.models.poissbpe.compiled import kernels
from bpetopics.models.poissbpe.document_mixture import document_mixtures


def separated_topics(n_topics=4, n_words=40):
    """Topics each on a block of words of its own (plus a little everywhere), (T, W)."""
    topics = np.full((n_topics, n_words), 1e-3)
    block = n_words // n_topics
    for t in range(n_topics):
        topics[t, t * block:(t + 1) * block] = 1.0
    return topics / topics.sum(1, keepdims=True)


def log_posterior(x, topics, theta, centre, concentration):
    """ln p(x | theta) + a0 sum_t p_t ln theta_t, up to a constant (one document)."""
    return float(x @ np.log(theta @ topics) + concentration * centre @ np.log(theta))


def random_case(seed=0, n_docs=30, n_words=60, n_topics=6):
    rng = np.random.default_rng(seed)
    topics = rng.dirichlet(np.full(n_words, 0.3), n_topics)
    X = sp.random(n_docs, n_words, density=0.15, random_state=seed, format="lil")
    X[2, :] = 0                                               # a document with no words
    X = sp.csr_matrix(X)
    X.data = np.ceil(X.data * 6)
    X.eliminate_zeros()
    centres = rng.dirichlet(np.ones(n_topics), n_docs)
    return X, topics, centres


def test_the_compiled_em_is_the_reference():
    if kernels.numba is None:
        pytest.skip("numba is not installed")
    X, topics, centres = random_case()
    fast = document_mixtures(X, topics, centres, 10.0)
    with kernels.backend_in_use("torch"):                     # the torch steps
        slow = document_mixtures(X, topics, centres, 10.0)
    np.testing.assert_allclose(fast, slow, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("backend", ["numba", "torch"])
def test_the_mixture_maximises_the_posterior(backend):
    """The objective is concave on the simplex, so its maximum beats the prior's centre
    and every nearby mixture; rows stay on the simplex, and a document without words
    keeps its centre."""
    X, topics, centres = random_case(seed=1)
    with kernels.backend_in_use(backend if kernels.numba is not None else "torch"):
        theta = document_mixtures(X, topics, centres, 5.0)
    np.testing.assert_allclose(theta.sum(1), 1.0, atol=1e-12)
    assert (theta >= 0).all()
    np.testing.assert_allclose(theta[2], centres[2], atol=1e-12)
    rng = np.random.default_rng(2)
    for n in range(X.shape[0]):
        x = X[n].toarray().ravel()
        best = log_posterior(x, topics, theta[n], centres[n], 5.0)
        assert best >= log_posterior(x, topics, centres[n], centres[n], 5.0) - 1e-9
        for _ in range(20):
            nearby = rng.dirichlet(theta[n] * 2000 + 1e-3)
            assert best >= log_posterior(x, topics, nearby, centres[n], 5.0) - 1e-6


def test_a_long_document_finds_its_planted_mixture_and_a_short_one_stays_near_its_code():
    """Documents drawn from a planted mixture of separated topics, with a flat centre:
    5,000 tokens recover the mixture; 3 tokens move little from the centre; a huge
    concentration keeps the centre whatever the words."""
    topics = separated_topics()
    truth = np.array([0.6, 0.3, 0.1, 0.0])
    rng = np.random.default_rng(0)
    long_doc = rng.multinomial(5000, truth @ topics)
    short_doc = rng.multinomial(3, truth @ topics)
    X = sp.csr_matrix(np.stack([long_doc, short_doc]).astype(float))
    flat = np.full((2, 4), 0.25)
    theta = document_mixtures(X, topics, flat, 10.0)
    np.testing.assert_allclose(theta[0], truth, atol=0.03)
    assert np.abs(theta[1] - 0.25).max() < 3 / 13 + 1e-9     # at most N / (a0 + N) from the centre
    stiff = document_mixtures(X, topics, flat, 1e9)
    np.testing.assert_allclose(stiff, flat, atol=1e-5)


def test_bad_arguments_are_refused():
    X, topics, centres = random_case()
    with pytest.raises(ValueError, match="positive"):
        document_mixtures(X, topics, centres, 0.0)
    with pytest.raises(ValueError, match="do not fit"):
        document_mixtures(X, topics, centres[:5], 10.0)


def test_poissbpe_doc_topic_refines_the_local_posterior():
    """doc_topic's default is the document mixture around the 'local' posterior, with the
    model's concentration_in_use() (10 for these long documents)."""
    from bpetopics import PoissBPE
    from tests.models.poissbpe.test_model import planted_corpus

    X = planted_corpus(n_docs=300)[0]
    model = PoissBPE(n_topics=6, n_bits=8, epochs=5, random_state=0, device="cpu", progress=False).fit(X)
    new = sp.csr_matrix(planted_corpus(n_docs=60, doc_len=40, seed=3)[0])
    local = model.doc_topic(new, posterior="local")
    refined = model.doc_topic(new)
    np.testing.assert_allclose(refined, document_mixtures(new, model.topic_word_, local,
                                                          model.concentration_in_use()), rtol=1e-5, atol=1e-6)
    assert model.concentration_in_use() == 10.0
    np.testing.assert_allclose(refined.sum(1), 1.0, atol=1e-5)
    assert np.abs(refined - local).max() > 1e-3
    with pytest.raises(ValueError, match="'document', 'local' or 'map'"):
        model.doc_topic(new, posterior="mean")
    # the same mixtures from codes already pursued (what `bpetopics encode` calls)
    codes = model.transform(new)
    for posterior, expected in (("document", refined), ("local", local), ("map", model.code_topic(codes))):
        np.testing.assert_array_equal(model.topic_mixtures(new, codes, posterior), expected)
    with pytest.raises(ValueError, match="'document', 'local' or 'map'"):
        model.topic_mixtures(new, codes, posterior="mean")
