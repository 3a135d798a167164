"""Table 1 metrics against hand-computed values."""

import numpy as np
import pytest
import torch

from bpetopics.images import bernoulli_nll, hoyer_sparsity, mean_hoyer, reconstruction_mse


def test_mse_sums_over_pixels_and_averages_over_images():
    X = np.array([[0.0, 1.0, 0.5], [1.0, 1.0, 1.0]])
    X_hat = np.array([[0.0, 0.0, 0.0], [1.0, 0.5, 1.0]])
    # image 1: 0 + 1 + 0.25 = 1.25; image 2: 0.25; mean 0.75
    assert reconstruction_mse(X, X_hat) == pytest.approx(0.75)
    assert reconstruction_mse(torch.tensor(X), torch.tensor(X_hat)) == pytest.approx(0.75)
    with pytest.raises(ValueError):
        reconstruction_mse(X, X_hat[:, :2])


def test_bernoulli_nll_by_hand():
    X = np.array([[1.0, 0.0], [0.0, 0.0]])
    P = np.array([[0.8, 0.3], [0.5, 0.1]])
    # image 1: -ln 0.8 - ln 0.7; image 2: -ln 0.5 - ln 0.9
    want = (-np.log(0.8) - np.log(0.7) - np.log(0.5) - np.log(0.9)) / 2
    assert bernoulli_nll(X, probs=P) == pytest.approx(want, rel=1e-6)
    logits = np.log(P / (1 - P))
    assert bernoulli_nll(X, logits=logits) == pytest.approx(want, rel=1e-9)
    # extreme logits stay finite and exact: -ln sigmoid(-50) = 50 (+ tiny)
    assert bernoulli_nll(np.array([[1.0]]), logits=np.array([[-50.0]])) == pytest.approx(50.0)
    with pytest.raises(ValueError):
        bernoulli_nll(X)


def test_hoyer_sparsity_by_hand():
    K = 16
    one_hot, flat, empty = np.eye(K)[0], np.ones(K), np.zeros(K)
    s = 4
    binary = np.r_[np.ones(s), np.zeros(K - s)]
    got = hoyer_sparsity(np.stack([one_hot, flat, empty, binary, -3.0 * one_hot]))
    # binary code with s bits on: (sqrt(K) - sqrt(s)) / (sqrt(K) - 1) = (4 - 2) / 3
    np.testing.assert_allclose(got, [1.0, 0.0, 1.0, 2.0 / 3.0, 1.0])
    z = np.array([3.0, -4.0, 0.0, 0.0])  # l1 = 7, l2 = 5, K = 4: (2 - 1.4) / 1
    assert hoyer_sparsity(z)[0] == pytest.approx(0.6)
    assert mean_hoyer(np.stack([one_hot, flat])) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        hoyer_sparsity(np.ones((3, 1)))
