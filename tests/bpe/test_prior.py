"""q(pi): natural-gradient step, log-odds and expected log prior against scipy."""

import numpy as np
import pytest
import torch
from scipy import integrate, special, stats

from bpetopics.bpe.prior import BetaProcessPrior


def test_starts_flat_or_at_the_prior():
    flat = BetaProcessPrior(8, 1000, alpha=2.0, gamma=3.0)
    assert torch.equal(flat.a, torch.ones(8, dtype=torch.float64))
    assert torch.allclose(flat.bit_log_odds(), torch.zeros(8, dtype=torch.float64))
    prior = BetaProcessPrior(8, 1000, alpha=2.0, gamma=3.0, flat_start=False)
    assert torch.allclose(prior.a, torch.full((8,), 2.0 * 3 / 8, dtype=torch.float64))
    assert torch.allclose(prior.b, torch.full((8,), 2.0 * (1 - 3 / 8), dtype=torch.float64))


def test_step_follows_the_formula():
    prior = BetaProcessPrior(4, n_data=100, alpha=1.0, gamma=2.0, tau=2.0, kappa=0.75)
    codes = torch.tensor([[1, 0, 0, 1], [1, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0], [1, 0, 0, 1]])
    eta = 2.0 ** -0.75
    a_hat = 1 * 2 / 4 + (100 / 5) * np.array([4, 1, 0, 2])
    b_hat = 1 * (1 - 2 / 4) + (100 / 5) * np.array([1, 4, 5, 3])
    prior.step(codes)
    np.testing.assert_allclose(prior.a.numpy(), (1 - eta) * 1 + eta * a_hat)
    np.testing.assert_allclose(prior.b.numpy(), (1 - eta) * 1 + eta * b_hat)
    assert prior.t == 1 and prior.step_size() == pytest.approx(3.0 ** -0.75)


def test_unused_bits_shrink_to_zero_probability_and_used_bits_track_their_rate():
    prior = BetaProcessPrior(3, n_data=5000, alpha=1.0, gamma=1.0)
    gen = torch.Generator().manual_seed(0)
    for _ in range(400):
        codes = torch.zeros(100, 3)
        codes[:, 0] = (torch.rand(100, generator=gen) < 0.3).float()
        codes[:, 1] = 1.0
        prior.step(codes)
    mean = prior.mean().numpy()
    assert mean[0] == pytest.approx(0.3, abs=0.03)
    assert mean[1] > 0.99
    assert mean[2] < 1e-3
    log_odds = prior.bit_log_odds().numpy()
    assert log_odds[2] < -8 < log_odds[0] < 0 < log_odds[1]


def test_log_odds_and_expected_log_prior_against_scipy():
    prior = BetaProcessPrior(3, 10)
    prior.a = torch.tensor([0.7, 3.0, 12.0], dtype=torch.float64)
    prior.b = torch.tensor([5.0, 2.5, 40.0], dtype=torch.float64)
    for k in range(3):
        a, b = prior.a[k].item(), prior.b[k].item()
        expected, _ = integrate.quad(lambda p: np.log(p / (1 - p)) * stats.beta.pdf(p, a, b), 0, 1)
        assert prior.bit_log_odds()[k].item() == pytest.approx(expected, rel=1e-6)
    code = torch.tensor([[1, 0, 1]])
    a, b = prior.a.numpy(), prior.b.numpy()
    by_hand = (special.digamma(a[0]) - special.digamma(a[0] + b[0])
               + special.digamma(b[1]) - special.digamma(a[1] + b[1])
               + special.digamma(a[2]) - special.digamma(a[2] + b[2]))
    assert prior.expected_log_prior(code).item() == pytest.approx(by_hand)
    # switching a bit on changes E[ln p(z|pi)] by exactly its log-odds
    diff = prior.expected_log_prior(torch.tensor([[1, 1, 1]])) - prior.expected_log_prior(code)
    assert diff.item() == pytest.approx(prior.bit_log_odds()[1].item())


def test_bad_hyperparameters_are_refused():
    with pytest.raises(ValueError, match="gamma"):
        BetaProcessPrior(4, 10, gamma=4)
    with pytest.raises(ValueError, match="kappa"):
        BetaProcessPrior(4, 10, kappa=0.5)


def test_statistics_of_two_halves_add_up_to_one_step_on_the_whole():
    """The step split into statistics (summable, as workers would send them) and apply."""
    gen = torch.Generator().manual_seed(3)
    codes = (torch.rand(10, 6, generator=gen) < 0.3).float()
    whole = BetaProcessPrior(6, n_data=200, alpha=2.0, gamma=1.5, tau=1.0, kappa=0.7)
    halves = BetaProcessPrior(6, n_data=200, alpha=2.0, gamma=1.5, tau=1.0, kappa=0.7)
    whole.step(codes)
    stats = halves.statistics(codes[:4]) + halves.statistics(codes[4:])
    assert stats.n_codes == 10 and torch.equal(stats.on, codes.double().sum(0))
    halves.apply(stats)
    assert torch.allclose(halves.a, whole.a, rtol=0, atol=1e-12) and torch.allclose(halves.b, whole.b, rtol=0, atol=1e-12)
    assert halves.t == whole.t == 1
    one_half = BetaProcessPrior(6, n_data=200, alpha=2.0, gamma=1.5, tau=1.0, kappa=0.7)
    one_half.apply(one_half.statistics(codes[:4]))
    assert not torch.allclose(one_half.a, whole.a)  # the halves differ from the whole: the sum matters
