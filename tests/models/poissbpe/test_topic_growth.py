"""Topic growth (models/topic_growth.py): PoissBPE trains T0 topics, then splits them into T."""

import numpy as np
import pytest
import torch

from bpetopics import PoissBPE
from bpetopics.models.poissbpe.topic_growth import GROWTH_MIN_TOPICS, child_topics, growth_sample_size
from tests.models.poissbpe.test_model import planted_corpus, planted_match


def test_child_topics_split_the_topics_of_largest_gain_into_their_halves():
    rng = np.random.default_rng(0)
    halves = rng.integers(0, 20, size=(3, 2, 6)).astype(float)
    log_topics = np.log(rng.dirichlet(np.ones(6), size=3))
    freq = np.full(6, 1 / 6)
    parents, grown = child_topics(np.array([5.0, 1.0, 9.0]), halves, log_topics, 5, freq)
    np.testing.assert_array_equal(parents, [0, 0, 1, 2, 2])        # topics 2 and 0 gain most
    np.testing.assert_array_equal(grown[2], log_topics[1])          # topic 1 kept as it was
    np.testing.assert_allclose(np.exp(grown).sum(1), 1.0)
    # a child is its half's counts plus 0.1 of as many pseudo-counts spread like the corpus
    for row, (t, h) in zip((0, 1, 3, 4), ((0, 0), (0, 1), (2, 0), (2, 1))):
        counts = halves[t, h] + 0.1 * freq * halves[t, h].sum() + 1e-3
        np.testing.assert_allclose(np.exp(grown[row]), counts / counts.sum())


def test_growth_keeps_every_codes_mixture_over_the_parents():
    """After the split each child holds half its parent's share of every code's mixture and
    the unsplit topics keep theirs: growing changes no document's explanation at once."""
    X, _, _ = planted_corpus(n_docs=300)
    model = PoissBPE(n_topics=6, n_bits=8, epochs=3, initial_topics=6, random_state=0, device="cpu",
                     progress=False).fit(X)
    codes = torch.as_tensor(np.random.default_rng(1).integers(0, 2, size=(50, 8)), dtype=torch.float32)
    with torch.no_grad():
        before = model.likelihood_.link(model.decoder_(codes)).numpy()
        parents = np.array([0, 0, 1, 2, 3, 3, 4, 5, 5])
        model._replace_topics(parents, np.zeros((9, X.shape[1])))
        after = model.likelihood_.link(model.decoder_(codes)).numpy()
    assert after.shape == (50, 9) and model.current_topics_ == 9
    summed = np.zeros_like(before)
    np.add.at(summed.T, parents, after.T)
    np.testing.assert_allclose(summed, before, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(after[:, 0], after[:, 1], rtol=1e-6)


def test_a_grown_model_recovers_the_planted_topics():
    """3 topics for the first third of training, then 6: the children of the merged
    planted topics separate them (the same corpus and check as the ungrown model's test)."""
    X, beta, _ = planted_corpus()
    model = PoissBPE(n_topics=6, n_bits=8, initial_topics=3, random_state=0, device="cpu",
                     progress=False).fit(X)
    topics = [h["topics"] for h in model.history_]
    [(grown_at, _)] = model.growth_schedule()
    assert topics[:grown_at - 1] == [3] * (grown_at - 1) and set(topics[grown_at - 1:]) == {6}
    assert planted_match(beta, model.topic_word_).min() >= 0.9
    assert len(np.unique(model.doc_topic(X).argmax(1))) == 6


def test_the_default_grows_from_about_25_topics_from_40_topics_on():
    assert GROWTH_MIN_TOPICS == 40
    assert PoissBPE(39).topic_counts() == [39]
    assert PoissBPE(40).topic_counts() == [20, 40]
    assert PoissBPE(50).topic_counts() == [25, 50]
    assert PoissBPE(75).topic_counts() == [19, 38, 75]
    assert PoissBPE(100).topic_counts() == [25, 50, 100]
    assert PoissBPE(200).topic_counts() == [25, 50, 100, 200]
    assert PoissBPE(50, initial_topics=50).topic_counts() == [50]
    assert PoissBPE(50, initial_topics=10).topic_counts() == [10, 20, 40, 50]
    assert PoissBPE(50, epochs=2).topic_counts() == [50]           # no third of training to grow in
    # rounds spread over the first third of the epochs
    assert PoissBPE(50, epochs=15).growth_schedule() == [(5, 50)]
    assert PoissBPE(100, epochs=15).growth_schedule() == [(3, 50), (5, 100)]
    assert PoissBPE(100, epochs=3).growth_schedule() == [(1, 50), (1, 100)]   # two rounds in one epoch


def test_rounds_double_the_topics_after_their_epochs():
    X, _, _ = planted_corpus(n_docs=300)
    model = PoissBPE(n_topics=10, n_bits=8, initial_topics=3, epochs=9, random_state=0, device="cpu",
                     progress=False).fit(X)
    assert model.topic_counts() == [3, 6, 10] and model.growth_schedule() == [(2, 6), (3, 10)]
    assert [h["topics"] for h in model.history_] == [3, 6, 10, 10, 10, 10, 10, 10, 10]
    assert model.topic_word_.shape == (10, X.shape[1]) and model.doc_topic(X).shape == (300, 10)


@pytest.mark.parametrize("n_docs, sampled", [(1200, 1000), (400, 400)])
def test_a_round_decides_its_splits_on_50_documents_a_topic(n_docs, sampled):
    """At least 1,000 documents (all of a smaller corpus), 50 a topic from 20 topics on,
    at most 20,000: a round's cost follows the topics it makes, not the corpus."""
    assert [growth_sample_size(t) for t in (6, 20, 50, 200, 400, 1000)] == [
        1000, 1000, 2500, 10000, 20000, 20000]
    X, _, _ = planted_corpus(n_docs=n_docs)
    model = PoissBPE(n_topics=6, n_bits=8, initial_topics=3, epochs=3, random_state=0, device="cpu",
                     progress=False)
    seen = []
    model.doc_topic = lambda X_sample, **kw: seen.append(X_sample.shape[0]) or PoissBPE.doc_topic(
        model, X_sample, **kw)
    model.fit(X)
    assert seen == [sampled]


@pytest.mark.parametrize("initial", [0, 11])
def test_initial_topics_outside_1_to_all_of_the_topics_is_refused(initial):
    X, _, _ = planted_corpus(n_docs=100)
    with pytest.raises(ValueError, match="initial_topics must be"):
        PoissBPE(n_topics=10, initial_topics=initial, progress=False).fit(X)
