"""Gumbel-Softmax VAE: KL to uniform and the ELBO by hand, the schedule, fitting, metrics."""

import math

import numpy as np
import pytest
import torch
from torch.distributions import Categorical, kl_divergence

from bpetopics.baselines import GumbelSoftmaxVAE
from bpetopics.images import bernoulli_nll
from bpetopics.baselines.gsvae import (
    bernoulli_log_likelihood,
    categorical_kl_uniform,
    gumbel_softmax_sample,
    gumbel_temperature,
)


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _softmax(a):
    e = np.exp(a - a.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_kl_to_uniform_by_hand():
    logits = np.array([[[2.0, 0.0, -1.0], [0.0, 0.0, 0.0]],
                       [[-30.0, 5.0, 0.5], [1.0, 2.0, 3.0]]])  # (B=2, N=2, K=3)
    q = _softmax(logits)
    want = (q * np.log(q * 3)).sum((1, 2))  # sum_i sum_k q ln(q / (1/K))
    got = categorical_kl_uniform(torch.tensor(logits)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-10)
    ref = kl_divergence(Categorical(logits=torch.tensor(logits)),
                        Categorical(logits=torch.zeros(2, 2, 3, dtype=torch.float64))).sum(-1).numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-8)
    # a uniform posterior costs nothing; a one-hot one costs ln K per variable
    assert categorical_kl_uniform(torch.zeros(1, 4, 10)).item() == pytest.approx(0.0, abs=1e-12)
    onehot = torch.full((1, 4, 10), -1e4)
    onehot[..., 0] = 0.0
    assert categorical_kl_uniform(onehot).item() == pytest.approx(4 * math.log(10))


def test_bernoulli_log_likelihood_and_gumbel_sample_by_hand():
    x = np.array([[1.0, 0.0, 1.0]])
    l = np.array([[0.3, -1.2, 2.0]])
    p = 1 / (1 + np.exp(-l))
    want = np.sum(x * np.log(p) + (1 - x) * np.log(1 - p))
    got = bernoulli_log_likelihood(torch.tensor(x), torch.tensor(l)).item()
    assert got == pytest.approx(want, rel=1e-12)
    assert -got == pytest.approx(bernoulli_nll(x, logits=l))

    logits, g = np.array([[0.5, -0.2, 1.0]]), np.array([[0.1, 0.9, -0.4]])
    y = gumbel_softmax_sample(torch.tensor(logits), 0.7, torch.tensor(g)).numpy()
    np.testing.assert_allclose(y, _softmax((logits + g) / 0.7), rtol=1e-12)
    lt = torch.tensor(logits, requires_grad=True)
    yh = gumbel_softmax_sample(lt, 0.7, torch.tensor(g), hard=True)
    np.testing.assert_array_equal(yh.detach().numpy(), [[0.0, 1.0, 0.0]])
    (yh * torch.tensor([[1.0, 2.0, 3.0]])).sum().backward()
    assert lt.grad.abs().sum() > 0  # straight-through: the relaxed gradient flows


def test_temperature_schedule():
    kw = dict(tau0=1.0, anneal_rate=3e-5, anneal_every=1000, min_tau=0.5)
    assert gumbel_temperature(0, **kw) == 1.0 and gumbel_temperature(999, **kw) == 1.0
    assert gumbel_temperature(1000, **kw) == pytest.approx(math.exp(-0.03))
    assert gumbel_temperature(2500, **kw) == pytest.approx(math.exp(-0.06))
    assert gumbel_temperature(10 ** 6, **kw) == 0.5  # floor


def _tiny_model():
    """3 pixels, N=2 variables of K=3 classes, encoder 3-4-6, decoder 6-4-3, ReLU."""
    m = GumbelSoftmaxVAE(2, 3, encoder_hidden=(4,), decoder_hidden=(4,), epochs=0,
                         random_state=0, device="cpu", progress=False)
    m.fit(np.zeros((1, 3), dtype=np.float32))
    rng, w = np.random.default_rng(1), {}
    with torch.no_grad():
        for name, p in m.net_.named_parameters():
            w[name] = rng.normal(scale=0.8, size=tuple(p.shape))
            p.copy_(torch.tensor(w[name]))
    return m, w


def _hand_net(w, x):
    relu = lambda a: np.maximum(a, 0.0)
    logits = (relu(x @ w["encoder.0.weight"].T + w["encoder.0.bias"])
              @ w["encoder.2.weight"].T + w["encoder.2.bias"]).reshape(-1, 2, 3)
    decode = lambda y: (relu(y.reshape(len(y), -1) @ w["decoder.0.weight"].T
                             + w["decoder.0.bias"]) @ w["decoder.2.weight"].T
                        + w["decoder.2.bias"])
    return logits, decode


def _bern_ll(x, l):
    return (x * l - np.logaddexp(0, l)).sum(-1)


def test_elbo_terms_and_nll_match_a_hand_computation():
    m, w = _tiny_model()
    x = np.array([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    g = np.random.default_rng(2).gumbel(size=(2, 2, 3))
    logits, decode = _hand_net(w, x)
    y = _softmax((logits + g) / 0.8)
    q = _softmax(logits)
    ll, kl = m.net_.elbo_terms(torch.tensor(x, dtype=torch.float32), 0.8,
                               torch.tensor(g, dtype=torch.float32))
    np.testing.assert_allclose(ll.detach().numpy(), _bern_ll(x, decode(y)), rtol=1e-5)
    np.testing.assert_allclose(kl.detach().numpy(), (q * np.log(3 * q)).sum((1, 2)),
                               rtol=1e-5)
    # encode: posterior probabilities, 6 per image, each block of 3 sums to 1
    np.testing.assert_allclose(m.encode(x), q.reshape(2, 6), rtol=1e-5)
    onehot = np.eye(3)[logits.argmax(-1)]
    np.testing.assert_array_equal(m.encode(x, code="argmax"), onehot.reshape(2, 6))
    # Table 1 NLL at the argmax code, and at the mean code
    assert m.reconstruction_nll(x) == pytest.approx(-_bern_ll(x, decode(onehot)).mean(),
                                                    rel=1e-5)
    assert m.reconstruction_nll(x, code="mean") == pytest.approx(
        -_bern_ll(x, decode(q)).mean(), rel=1e-5)
    np.testing.assert_allclose(m.reconstruct(x), 1 / (1 + np.exp(-decode(onehot))),
                               rtol=1e-5)
    # the discrete negative ELBO: exact expectation over all 3^2 codes
    exact = (q * np.log(3 * q)).sum((1, 2))
    for a in range(3):
        for b in range(3):
            code = np.zeros((2, 2, 3))
            code[:, 0, a] = code[:, 1, b] = 1.0
            exact = exact - q[:, 0, a] * q[:, 1, b] * _bern_ll(x, decode(code))
    assert m.negative_elbo(x, n_samples=20000) == pytest.approx(exact.mean(), rel=0.01)


@pytest.fixture(scope="module")
def small_binary_mnist(data_root):
    from bpetopics.images import load_binarized_mnist

    return load_binarized_mnist("train", data_root, limit=600, random_state=0)[0]


def test_short_fit_reduces_the_loss_with_annealing(small_binary_mnist):
    X = small_binary_mnist
    m = GumbelSoftmaxVAE(epochs=4, anneal_every=6, anneal_rate=0.01, lr_factor=0.95,
                         random_state=0, device="cpu", progress=False).fit(X)
    losses = [h["loss"] for h in m.history_]
    assert losses[-1] < losses[0] - 100
    assert m.n_steps_ == 24
    # tau recorded at each epoch's last step (5, 11, 17, 23) follows the schedule
    want = [max(0.5, math.exp(-0.01 * (s // 6) * 6)) for s in (5, 11, 17, 23)]
    np.testing.assert_allclose([h["tau"] for h in m.history_], want)
    assert m.history_[-1]["lr"] == pytest.approx(1e-3 * 0.95 ** 3)
    nll, nelbo = m.reconstruction_nll(X), m.negative_elbo(X)
    assert np.isfinite(nll) and np.isfinite(nelbo)
    codes = m.encode(X)
    assert codes.shape == (600, 300)
    np.testing.assert_allclose(codes.reshape(600, 30, 10).sum(-1), 1.0, rtol=1e-5)
    # Hoyer of a one-hot-per-block code with 30 of 300 entries on
    hard = m.encode(X, code="argmax")
    want_h = (math.sqrt(300) - math.sqrt(30)) / (math.sqrt(300) - 1)
    assert m.sparsity(X) <= want_h + 1e-9
    from bpetopics.images import mean_hoyer
    assert mean_hoyer(hard) == pytest.approx(want_h)


def test_same_seed_same_model(small_binary_mnist):
    X = small_binary_mnist[:200]
    kw = dict(n_variables=5, encoder_hidden=(32,), decoder_hidden=(32,), epochs=2,
              batch_size=50, device="cpu", progress=False)
    a = GumbelSoftmaxVAE(random_state=3, **kw).fit(X)
    b = GumbelSoftmaxVAE(random_state=3, **kw).fit(X)
    np.testing.assert_array_equal(a.encode(X), b.encode(X))
    assert a.negative_elbo(X, n_samples=3) == b.negative_elbo(X, n_samples=3)
    c = GumbelSoftmaxVAE(random_state=4, **kw).fit(X)
    assert not np.allclose(a.encode(X), c.encode(X))
