"""Exclusive diversity (TopMost's TD), purity and NMI of top-topic clusters."""

import numpy as np
import pytest
from sklearn.metrics import normalized_mutual_info_score

from bpetopics.evaluation.clustering import topic_nmi, topic_purity
from bpetopics.evaluation.diversity import exclusive_topic_diversity, topic_diversity


def _topics(*top_lists, n_words=10):
    """A topic-word matrix whose rows rank the given word ids first, in order."""
    tw = np.full((len(top_lists), n_words), 1e-3)
    for t, ids in enumerate(top_lists):
        for rank, w in enumerate(ids):
            tw[t, w] = 1.0 - 0.1 * rank
    return tw / tw.sum(axis=1, keepdims=True)


def test_exclusive_diversity_by_hand():
    # topics {0,1,2} and {2,3,4}: word 2 is shared, so 4 of 6 slots are exclusive
    tw = _topics([0, 1, 2], [2, 3, 4])
    assert exclusive_topic_diversity(tw, top_n=3) == pytest.approx(4 / 6)
    # the union-based diversity counts 5 distinct words of 6 slots
    assert topic_diversity(tw, top_n=3) == pytest.approx(5 / 6)
    assert exclusive_topic_diversity(_topics([0, 1], [2, 3]), top_n=2) == 1.0
    assert exclusive_topic_diversity(_topics([0, 1], [0, 1]), top_n=2) == 0.0


def test_purity_by_hand():
    # clusters (argmax): 0, 0, 1, 1, 1 ; labels: a, b, b, b, c
    theta = np.array([[.9, .1], [.6, .4], [.2, .8], [.3, .7], [.1, .9]])
    labels = np.array(["a", "b", "b", "b", "c"])
    # cluster 0 holds {a, b}: max 1; cluster 1 holds {b, b, c}: max 2 -> 3 / 5
    assert topic_purity(theta, labels) == pytest.approx(3 / 5)


def test_nmi_matches_sklearn_and_is_one_for_a_relabelling():
    rng = np.random.default_rng(0)
    theta = rng.dirichlet(np.ones(4), size=200)
    labels = rng.integers(0, 3, size=200)
    expected = normalized_mutual_info_score(labels, theta.argmax(1))
    assert topic_nmi(theta, labels) == pytest.approx(expected)
    perfect = np.eye(4)[labels]             # topic = label, so NMI = purity = 1
    assert topic_nmi(perfect, labels) == pytest.approx(1.0)
    assert topic_purity(perfect, labels) == 1.0


def test_mismatched_lengths_are_refused():
    with pytest.raises(ValueError, match="3 rows but there are 2 labels"):
        topic_purity(np.eye(3), [0, 1])
