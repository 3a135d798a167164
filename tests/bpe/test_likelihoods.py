"""Closed forms against scipy and brute force: marginals, lambda posteriors, bounds."""

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from scipy import stats

from bpetopics.models.images.likelihoods import BernoulliLikelihood, GaussianLikelihood
from bpetopics.models.poissbpe.packed import PaddedCounts
from bpetopics.models.poissbpe.poisson import PoissonLikelihood


def test_gaussian_marginal_matches_scipy_multivariate_normal():
    rng = np.random.default_rng(0)
    lik = GaussianLikelihood(sigma=0.7, c=1.8)
    out = torch.randn(6, 5, dtype=torch.float64)
    x = rng.normal(size=(6, 5))
    ours = lik.data_term(out, lik.batch(x, "cpu", dtype=torch.float64)).numpy()
    f = torch.sigmoid(out).numpy()
    for n in range(6):
        cov = 0.49 * np.eye(5) + 1.8 * np.outer(f[n], f[n])
        assert ours[n] == pytest.approx(stats.multivariate_normal(np.zeros(5), cov).logpdf(x[n]),
                                        rel=1e-10)


def test_gaussian_lambda_posterior_matches_brute_force():
    """q(lambda) = N(mu, s^2) against the posterior computed on a grid."""
    lik = GaussianLikelihood(sigma=0.5, c=2.0)
    rng = np.random.default_rng(1)
    f = rng.random(7)
    x = 1.3 * f + rng.normal(scale=0.5, size=7)
    mu, s2 = lik.scale_posterior(torch.tensor(f)[None], torch.tensor(x)[None])
    grid = np.linspace(-10, 10, 200_001)
    log_post = (stats.norm(0, np.sqrt(2.0)).logpdf(grid)
                + stats.norm(grid[:, None] * f, 0.5).logpdf(x).sum(1))
    w = np.exp(log_post - log_post.max())
    w /= w.sum()
    grid_mean = (w * grid).sum()
    assert mu.item() == pytest.approx(grid_mean, abs=1e-6)
    assert s2.item() == pytest.approx((w * (grid - grid_mean) ** 2).sum(), rel=1e-5)


def test_poisson_lambda_posterior_is_gamma_and_ignores_the_code():
    """q(lambda) = Gamma(a + sum x, b + 1) against a grid posterior, for any phi."""
    lik = PoissonLikelihood(6, 2, scale_shape=2.0, scale_rate=0.5)
    x = np.array([3, 0, 1, 4, 0, 2])
    shape, rate = lik.scale_posterior([x.sum()])
    grid = np.linspace(1e-6, 60, 400_001)
    for phi in (np.full(6, 1 / 6), np.array([0.5, 0.1, 0.1, 0.2, 0.05, 0.05])):
        log_post = (stats.gamma(2.0, scale=1 / 0.5).logpdf(grid)
                    + stats.poisson(grid[:, None] * phi).logpmf(x).sum(1))
        w = np.exp(log_post - log_post.max())
        w /= w.sum()
        assert shape[0] / rate[0] == pytest.approx((w * grid).sum(), rel=1e-5)


def test_poisson_score_is_the_multinomial_term_on_non_zeros():
    torch.manual_seed(0)
    lik = PoissonLikelihood(30, 4)
    with torch.no_grad():
        lik.topic_logits.normal_()
    X = sp.random(5, 30, density=0.3, random_state=0, format="csr")
    X.data = np.ceil(X.data * 5)
    out = torch.randn(5, 4)
    ours = lik.data_term(out, lik.batch(X, "cpu")).detach()
    phi = (lik.topic_word() @ torch.softmax(out, -1).T).T.detach().numpy()   # (5, W)
    dense = X.toarray()
    np.testing.assert_allclose(ours.numpy(), (dense * np.log(phi)).sum(1), rtol=1e-5)
    # the Poisson log-likelihood differs from it only by terms free of the code:
    lam = 7.0
    for n in range(5):
        pois = stats.poisson(lam * phi[n]).logpmf(dense[n]).sum()
        const = dense[n].sum() * np.log(lam) - lam - sum(np.log(np.arange(1, v + 1)).sum()
                                                          for v in dense[n].astype(int))
        assert pois == pytest.approx(ours[n].item() + const, rel=1e-5)


def test_padding_needs_no_loop_and_round_trips():
    X = sp.csr_matrix(np.array([[0, 2, 0, 1], [0, 0, 0, 0], [5, 0, 0, 0]]))
    batch = PaddedCounts.from_csr(X, "cpu")
    assert batch.cols.shape == (3, 2)
    assert batch.lengths.tolist() == [2, 0, 1]
    assert batch.vals.sum(1).tolist() == [3, 0, 5]
    sub = batch.take(torch.tensor([2]))
    assert sub.width == 1 and sub.cols.tolist() == [[0]]


def test_bernoulli_score_is_stable_at_extreme_logits():
    lik = BernoulliLikelihood()
    x = lik.batch(np.array([[1.0, 0.0]]), "cpu")
    term = lik.data_term(torch.tensor([[80.0, -80.0]]), x)
    assert torch.isfinite(term).all() and term.item() == pytest.approx(0.0, abs=1e-6)
    term = lik.data_term(torch.tensor([[-80.0, 80.0]]), x)
    assert term.item() == pytest.approx(-160.0, rel=1e-6)


def test_every_likelihood_implements_the_protocol_and_the_estimator_checks_it():
    from torch import nn

    from bpetopics import PoissBPE
    from bpetopics.bpe.likelihoods import Likelihood

    for lik in (PoissonLikelihood(5, 2), GaussianLikelihood(), BernoulliLikelihood()):
        assert isinstance(lik, Likelihood)
        assert callable(lik.data_upper_bound)  # required (it may return None)

    class NoBound(nn.Module):  # everything but data_upper_bound
        batch = batch_order = link = data_term = theta_loss = staticmethod(lambda *a: None)

    assert not isinstance(NoBound(), Likelihood)

    class Broken(PoissBPE):
        def _make_likelihood(self, shape):
            return NoBound()

    with pytest.raises(TypeError, match="Likelihood protocol"):
        Broken(n_topics=2, n_bits=4, device="cpu", progress=False).fit(np.ones((3, 5)))
