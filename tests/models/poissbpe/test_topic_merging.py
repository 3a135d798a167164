"""Merging and reducing a fitted PoissBPE's topics: exact mixtures, consistent topics, the
likelihood of a planted duplicate unchanged, the merge kept by the run folder."""

from __future__ import annotations

import numpy as np
import pytest

from bpetopics.models import PoissBPE
from bpetopics.models.poissbpe.topic_merging import log_likelihood_per_token, merge_topics, reduce_topics

TINY = dict(n_topics=4, n_bits=8, epochs=2, device="cpu", progress=False, random_state=0)


@pytest.fixture(scope="module")
def counts(newsgroups_small):
    return newsgroups_small["train"].counts[:300]


def _fitted(counts):
    return PoissBPE(**TINY).fit(counts)


def _with_duplicate(model, topic: int):
    """The model with topic ``topic`` planted twice: a fifth output with its decoder row
    and its words, ln 2 off both biases, so that every code's rates are what they were."""
    logits = model.likelihood_.topic_logits.detach().double()
    log_topics = (logits - logits.logsumexp(1, keepdim=True)).numpy()
    parents = np.array([0, 1, 2, 3, topic])
    model.n_topics = 5
    model._replace_topics(parents, log_topics[parents])
    return model


def test_merging_a_planted_duplicate_leaves_the_model_as_it_was(counts):
    model = _fitted(counts)
    words, mixtures = model.topic_word_, model.code_topic(model.codes_)
    before = log_likelihood_per_token(model, counts)
    _with_duplicate(model, 1)
    assert model.topic_word_.shape[0] == 5
    assert log_likelihood_per_token(model, counts) == pytest.approx(before, abs=1e-5)
    report = merge_topics(model, counts, [[1, 4]])
    assert report.change == pytest.approx(0.0, abs=1e-5)
    assert (report.n_topics_before, report.n_topics_after) == (5, 4)
    np.testing.assert_allclose(model.topic_word_, words, atol=1e-6)
    np.testing.assert_allclose(model.code_topic(model.codes_), mixtures, atol=1e-5)


def test_reduce_finds_the_planted_duplicate(counts):
    model = _with_duplicate(_fitted(counts), 2)
    report = reduce_topics(model, counts, 4)
    assert report.groups == [[2, 4]]
    assert report.change == pytest.approx(0.0, abs=1e-5)


def test_merged_topics_stay_on_the_simplex_and_mixtures_add(counts):
    model = _fitted(counts)
    words = model.topic_word_
    mixtures = model.code_topic(model.codes_).astype(np.float64)
    weights = np.asarray(counts.sum(1)).ravel() @ mixtures
    report = merge_topics(model, counts, [[2, 0]])
    assert report.mapping.tolist() == [0, 1, 0, 2] and report.groups == [[0, 2]]
    merged_words, merged = model.topic_word_, model.code_topic(model.codes_)
    assert merged_words.shape == (3, counts.shape[1])
    np.testing.assert_allclose(merged_words.sum(1), 1.0, atol=1e-6)
    expected = (weights[0] * words[0] + weights[2] * words[2]) / (weights[0] + weights[2])
    np.testing.assert_allclose(merged_words[0], expected, atol=1e-6)
    np.testing.assert_allclose(merged_words[1:], words[[1, 3]], atol=1e-6)
    np.testing.assert_allclose(merged[:, 0], mixtures[:, 0] + mixtures[:, 2], atol=1e-6)
    np.testing.assert_allclose(merged.sum(1), 1.0, atol=1e-5)
    posterior = model.posterior_topic(counts[:50], model.codes_[:50])
    assert posterior.shape == (50, 3)
    np.testing.assert_allclose(posterior.sum(1), 1.0, atol=1e-5)
    assert np.isfinite(report.change) and "4 -> 3 topics" in str(report)
    # merging the merged model again goes on from its numbering
    again = merge_topics(model, counts, [[1, 2]])
    assert model.topic_word_.shape[0] == 2 and again.mapping.tolist() == [0, 1, 1]
    np.testing.assert_allclose(model.code_topic(model.codes_).sum(1), 1.0, atol=1e-5)


def test_the_run_folder_keeps_the_merge(counts, newsgroups_small, tmp_path):
    from bpetopics.runs import load_run, save_run

    model = _fitted(counts)
    reduce_topics(model, counts, 2)
    save_run(tmp_path / "run", model, vocabulary=newsgroups_small["train"].vocabulary, counts=counts)
    loaded = load_run(tmp_path / "run").model
    np.testing.assert_array_equal(loaded.topic_groups_, model.topic_groups_)
    np.testing.assert_allclose(loaded.topic_word_, model.topic_word_, atol=1e-7)
    np.testing.assert_allclose(loaded.code_topic(loaded.codes_), model.code_topic(model.codes_), atol=1e-7)
    with pytest.raises(ValueError, match="merged"):
        loaded.partial_fit(counts)


def test_bad_groups_are_refused(counts):
    model = _fitted(counts)
    for groups, fragment in (([[0, 9]], "not one of the model's topics"), ([[0, 1], [1, 2]], "in two groups"),
                             ([[3]], "fewer than two")):
        with pytest.raises(ValueError, match=fragment):
            merge_topics(model, counts, groups)
    with pytest.raises(ValueError, match="n_topics must be"):
        reduce_topics(model, counts, 0)
    assert model.topic_groups_ is None
