import numpy as np
import pytest
import scipy.sparse as sp

from bpetopics.evaluation import code_stats, hoyer_sparsity, topic_diversity, unused_topic_share


def test_topic_diversity_hand_made():
    W = 10
    disjoint = np.zeros((2, W))
    disjoint[0, [0, 1, 2]] = [0.5, 0.3, 0.2]
    disjoint[1, [3, 4, 5]] = [0.5, 0.3, 0.2]
    assert topic_diversity(disjoint, top_n=3) == 1.0
    same = np.vstack([disjoint[0], disjoint[0]])
    assert topic_diversity(same, top_n=3) == 0.5
    # one shared top word out of 2 x 3: 5 unique / 6
    half = disjoint.copy()
    half[1, 0] = 0.4
    half[1] /= half[1].sum()
    assert topic_diversity(half, top_n=3) == pytest.approx(5 / 6)


def test_hoyer_extremes_and_empty():
    K = 16
    one_hot = np.eye(K)[:3]
    assert np.allclose(hoyer_sparsity(one_hot), 1.0)
    assert np.allclose(hoyer_sparsity(np.ones((2, K))), 0.0)
    assert np.allclose(hoyer_sparsity(np.full((1, K), -0.3)), 0.0)  # absolute values
    assert hoyer_sparsity(np.zeros((1, K)))[0] == 1.0  # the empty code


def test_hoyer_binary_formula():
    # binary code with s bits on: |z|_1/|z|_2 = sqrt(s), Hoyer = (sqrt(K) - sqrt(s)) / (sqrt(K) - 1)
    K = 64
    rng = np.random.default_rng(0)
    codes = np.zeros((K + 1, K), dtype=np.uint8)
    for s in range(K + 1):
        codes[s, rng.choice(K, s, replace=False)] = 1
    expected = (np.sqrt(K) - np.sqrt(np.arange(K + 1))) / (np.sqrt(K) - 1)
    expected[0] = 1.0
    np.testing.assert_allclose(hoyer_sparsity(codes), expected, atol=1e-12)
    np.testing.assert_allclose(hoyer_sparsity(sp.csr_matrix(codes)), expected, atol=1e-12)


def test_hoyer_real_valued_hand_computed():
    # z = (3, 4, 0, 0): |z|_1 = 7, |z|_2 = 5, K = 4: (2 - 7/5) / (2 - 1) = 0.6
    assert hoyer_sparsity(np.array([[3.0, 4.0, 0.0, 0.0]]))[0] == pytest.approx(0.6)
    assert hoyer_sparsity(np.array([[3.0, -4.0, 0.0, 0.0]]))[0] == pytest.approx(0.6)


def test_code_stats_hand_made():
    codes = np.array(
        [[1, 0, 0, 0], [1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 0, 0]], dtype=np.uint8
    )
    st = code_stats(codes)
    assert st["mean_active"] == pytest.approx(1.0)
    assert st["n_distinct"] == 3
    assert st["share_empty"] == pytest.approx(0.25)
    assert st["share_unused_bits"] == pytest.approx(0.5)
    h2 = (2 - np.sqrt(2)) / (2 - 1)
    assert st["mean_hoyer"] == pytest.approx((1 + 1 + h2 + 1) / 4)


def test_unused_topic_share():
    mix = np.array([[0.7, 0.2, 0.1, 0.0], [0.1, 0.8, 0.1, 0.0], [0.6, 0.3, 0.1, 0.0]])
    # topics 0 and 1 are some document's argmax; 2 and 3 never
    assert unused_topic_share(mix) == 0.5
    assert unused_topic_share(np.eye(4)) == 0.0
