"""Gaussian VAE: the ELBO against a hand computation, fitting, the estimator contract."""

import numpy as np
import pytest
import torch
from scipy.stats import norm
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from bpetopics.baselines import GaussianVAE
from bpetopics.images import reconstruction_mse
from bpetopics.baselines.vae import gaussian_kl_standard, gaussian_log_likelihood


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def test_gaussian_kl_and_log_likelihood_by_hand():
    mu = np.array([[0.5, -1.0], [0.0, 0.0]])
    logvar = np.array([[0.2, -0.3], [0.0, 0.0]])
    kl = 0.5 * np.sum(mu ** 2 + np.exp(logvar) - 1 - logvar, axis=1)
    got = gaussian_kl_standard(torch.tensor(mu), torch.tensor(logvar)).numpy()
    np.testing.assert_allclose(got, kl, rtol=1e-12)
    assert got[1] == 0.0  # q = p
    x, m = np.array([[0.1, 0.7, 0.3]]), np.array([[0.0, 1.0, 0.2]])
    want = norm.logpdf(x, m, np.sqrt(0.25)).sum()
    got = gaussian_log_likelihood(torch.tensor(x), torch.tensor(m), 0.25).item()
    assert got == pytest.approx(want, rel=1e-12)


def _tiny_model(obs_var):
    """A fitted-shape model with epochs=0 (network built, not trained): 3 pixels,
    encoder 3-2 (tanh) -> 2 latents, decoder 2-2 (relu) -> 3 (linear)."""
    vae = GaussianVAE(n_latent=2, encoder_hidden=(2,), decoder_hidden=(2,), obs_var=obs_var,
                      epochs=0, random_state=0, device="cpu", progress=False)
    vae.fit(np.zeros((1, 3), dtype=np.float32))
    rng = np.random.default_rng(0)
    weights = {}
    with torch.no_grad():
        for name, p in vae.net_.named_parameters():
            w = rng.normal(scale=0.7, size=tuple(p.shape))
            p.copy_(torch.tensor(w))
            weights[name] = w
    return vae, weights


def test_elbo_matches_a_hand_computation():
    vae, w = _tiny_model(obs_var=0.3)
    x = np.array([[0.2, 0.9, 0.0], [1.0, 0.5, 0.25]])
    eps = np.array([[0.3, -1.2], [0.8, 0.1]])
    # by hand, following the model's equations
    h = np.tanh(x @ w["encoder.0.weight"].T + w["encoder.0.bias"])
    out = h @ w["to_posterior.weight"].T + w["to_posterior.bias"]
    mu, logvar = out[:, :2], out[:, 2:]
    z = mu + np.exp(0.5 * logvar) * eps
    d = np.maximum(z @ w["decoder.0.weight"].T + w["decoder.0.bias"], 0.0)
    mean = d @ w["decoder.2.weight"].T + w["decoder.2.bias"]
    loglik = (-0.5 * ((x - mean) ** 2).sum(1) / 0.3 - 1.5 * np.log(2 * np.pi * 0.3))
    kl = 0.5 * (mu ** 2 + np.exp(logvar) - 1 - logvar).sum(1)

    xt, et = torch.tensor(x, dtype=torch.float32), torch.tensor(eps, dtype=torch.float32)
    got_ll, got_kl, sq, var = vae.net_.elbo_terms(xt, et, 0.3)
    np.testing.assert_allclose(got_ll.detach().numpy(), loglik, rtol=1e-5)
    np.testing.assert_allclose(got_kl.detach().numpy(), kl, rtol=1e-5)
    np.testing.assert_allclose(sq.detach().numpy(), ((x - mean) ** 2).sum(1), rtol=1e-5)
    # encode = posterior means, reconstruct = decoded posterior mean f(mu)
    np.testing.assert_allclose(vae.encode(x), mu, rtol=1e-5)
    d_mu = np.maximum(mu @ w["decoder.0.weight"].T + w["decoder.0.bias"], 0.0)
    f_mu = d_mu @ w["decoder.2.weight"].T + w["decoder.2.bias"]
    np.testing.assert_allclose(vae.reconstruct(x), f_mu, rtol=1e-5, atol=1e-6)
    assert vae.mse(x) == pytest.approx(((x - f_mu) ** 2).sum(1).mean(), rel=1e-5)

    # 'learned' variance: the minibatch maximum-likelihood value, sum sq err / (B D)
    _, _, sq, var = vae.net_.elbo_terms(xt, et, "mle")
    assert var.item() == pytest.approx(((x - mean) ** 2).mean(), rel=1e-5)
    ll = lambda v: gaussian_log_likelihood(xt, torch.tensor(mean, dtype=torch.float32), v).sum()
    assert ll(var) > ll(var * 1.1) and ll(var) > ll(var * 0.9)


def test_negative_elbo_estimate_converges_to_the_exact_expectation():
    """With a linear decoder the expected log-likelihood has a closed form:
    E||x - (W z + b)||^2 = ||x - (W mu + b)||^2 + sum_j ||W_:j||^2 exp(logvar_j)."""
    vae = GaussianVAE(n_latent=2, encoder_hidden=(3,), decoder_hidden=(), obs_var=0.5,
                      epochs=0, random_state=0, device="cpu", progress=False)
    vae.fit(np.zeros((1, 4), dtype=np.float32))
    x = np.array([[0.1, 0.4, 0.9, 0.3]], dtype=np.float32)
    with torch.no_grad():
        mu, logvar = (t.numpy() for t in vae.net_.posterior(torch.tensor(x)))
    W = vae.net_.decoder[0].weight.detach().numpy()
    b = vae.net_.decoder[0].bias.detach().numpy()
    sq = ((x - (mu @ W.T + b)) ** 2).sum() + ((W ** 2).sum(0) * np.exp(logvar)).sum()
    exact = 0.5 * sq / 0.5 + 2 * np.log(2 * np.pi * 0.5)
    exact += 0.5 * (mu ** 2 + np.exp(logvar) - 1 - logvar).sum()
    assert vae.negative_elbo(x, n_samples=4000) == pytest.approx(exact, rel=0.02)


@pytest.fixture(scope="module")
def small_mnist(data_root):
    from bpetopics.images import load_mnist

    return load_mnist("train", data_root, limit=600, random_state=0)[0]


def test_short_fit_reduces_the_loss_and_beats_the_mean_image(small_mnist):
    X = small_mnist
    vae = GaussianVAE(n_latent=10, epochs=4, random_state=0, device="cpu",
                      progress=False).fit(X)
    losses = [h["loss"] for h in vae.history_]
    assert len(losses) == 4 and losses[-1] < losses[0] - 50
    assert all(h["obs_var"] > 0 for h in vae.history_)
    mean_image_mse = reconstruction_mse(X, np.broadcast_to(X.mean(0), X.shape))
    assert vae.mse(X) < mean_image_mse
    assert vae.encode(X).shape == (600, 10) and vae.reconstruct(X).shape == (600, 784)
    assert 0.0 <= vae.sparsity(X) <= 1.0
    assert np.isfinite(vae.negative_elbo(X))


def test_same_seed_same_model_and_estimator_contract(small_mnist):
    X = small_mnist[:200]
    params = dict(n_latent=4, encoder_hidden=(32,), decoder_hidden=(32,), epochs=2,
                  batch_size=50, device="cpu", progress=False)
    a = GaussianVAE(random_state=5, **params).fit(X)
    b = GaussianVAE(random_state=5, **params).fit(X)
    c = GaussianVAE(random_state=6, **params).fit(X)
    np.testing.assert_array_equal(a.encode(X), b.encode(X))
    assert [h["loss"] for h in a.history_] == [h["loss"] for h in b.history_]
    assert not np.allclose(a.encode(X), c.encode(X))
    assert a.negative_elbo(X) == b.negative_elbo(X)
    # __init__ stores parameters only; fitting leaves the global torch RNG alone
    fresh = clone(a)
    assert fresh.get_params() == a.get_params() and not hasattr(fresh, "net_")
    with pytest.raises(NotFittedError):
        fresh.encode(X)
    torch.manual_seed(0)
    before = torch.rand(1)
    torch.manual_seed(0)
    GaussianVAE(random_state=1, **params).fit(X)
    assert torch.rand(1) == before
    with pytest.raises(ValueError):
        GaussianVAE(obs_var="free", **params).fit(X)
    with pytest.raises(ValueError):
        a.encode(X[:, :10])
