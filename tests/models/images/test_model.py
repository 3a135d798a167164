"""GaussBPE and BernBPE on a tiny MNIST subset (the Table 1 command: tests/experiments)."""

import numpy as np
import pytest
import torch

from bpetopics import BernBPE, GaussBPE
from bpetopics.images import (load_binarized_mnist, load_mnist, load_scaled_mnist,
                              mean_hoyer, reconstruction_mse)

K = 32
SMALL = dict(n_bits=K, batch_size=32, lr=3e-3, random_state=0, device="cpu", progress=False)


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def mnist300(data_root):
    return load_mnist("train", data_root, limit=300)[0]


def _fit_two_epochs(model, X):
    """partial_fit twice; returns the mean objective L(z) on X after each epoch."""
    fits = []
    for _ in range(2):
        model.partial_fit(X)
        fits.append(model.score(X))
    return fits


def _check_codes(codes, n_bits):
    bits = codes.sum(1)
    assert codes.shape[1] == n_bits and codes.dtype == np.uint8
    assert (bits == 0).mean() < 0.5, "codes collapsed to the empty code"
    assert bits.mean() <= n_bits / 4, "codes are not sparse"
    assert len(np.unique(codes, axis=0)) > 10, "every image got the same code"
    assert mean_hoyer(codes) > 0.6


def test_gaussbpe_fits_mnist_subset(mnist300):
    X = mnist300
    model = GaussBPE(epochs=2, **SMALL)
    scores = _fit_two_epochs(model, X)
    assert scores[1] > scores[0], scores  # the objective L(z) rises
    codes = model.transform(X)
    _check_codes(codes, K)
    mu, s2 = model.scale_posterior(X, codes)
    recon = mu[:, None] * model.decode(codes)
    assert np.allclose(recon[:5], model.reconstruct(X[:5]), atol=1e-5)
    assert recon.shape == X.shape and np.isfinite(recon).all()
    mean_image = np.broadcast_to(X.mean(0), X.shape)
    assert reconstruction_mse(X, recon) < 0.8 * reconstruction_mse(X, mean_image)
    assert mu.shape == (300,) and (s2 > 0).all() and (mu > 0).mean() > 0.9


def test_gaussbpe_scaled_mnist_scale_is_carried_by_lambda(data_root):
    X, _, factors = load_scaled_mnist("train", data_root, limit=200)
    model = GaussBPE(epochs=1, **SMALL).fit(X)
    mu, _ = model.scale_posterior(X, model.codes_)
    big = np.abs(factors) > 0.5
    # the sign of an image is the sign of its posterior scale, not something the code learns
    assert (np.sign(mu[big]) == np.sign(factors[big])).mean() > 0.95
    assert np.corrcoef(np.abs(mu[big]), np.abs(factors[big]))[0, 1] > 0.8


def test_bernbpe_fits_binary_mnist_subset(data_root):
    X = load_binarized_mnist("train", data_root, limit=300)[0]
    model = BernBPE(**SMALL)
    scores = _fit_two_epochs(model, X)
    assert scores[1] > scores[0], scores
    codes = model.transform(X)
    _check_codes(codes, K)
    probs = model.decode(codes)
    assert np.allclose(probs[:5], model.reconstruct(X[:5]), atol=1e-6)
    assert probs.shape == X.shape and ((probs > 0) & (probs < 1)).all()


def test_learning_rate_decays_with_the_epoch_and_survives_resuming(mnist300):
    X = mnist300[:64]
    lrs = lambda m: [g["lr"] for g in m.optimizer_.param_groups]
    model = BernBPE(epochs=3, hidden=(16,), **{**SMALL, "lr": 1e-2}).fit(X > 0.5)
    assert lrs(model) == pytest.approx([1e-2 / np.sqrt(3)])        # epochs 0, 1, 2
    constant = BernBPE(epochs=3, hidden=(16,), lr_decay=False, **{**SMALL, "lr": 1e-2})
    assert lrs(constant.fit(X > 0.5)) == pytest.approx([1e-2])
    first = GaussBPE(epochs=2, hidden=(16,), **SMALL).fit(X)
    resumed = GaussBPE(epochs=3, hidden=(16,), **SMALL).load_state(
        first.state_dict(), X.shape[0], X.shape[1], first.training_state())
    resumed.partial_fit(X)                       # the third epoch, after a reload
    assert lrs(resumed) == pytest.approx([SMALL["lr"] / np.sqrt(3)])


def test_prototype_init_makes_each_bit_decode_to_an_image(mnist300):
    model = GaussBPE(**SMALL)
    model._setup(model._check_X(mnist300))
    protos = model.decode(np.eye(K, dtype=np.uint8))
    empty = model.decode(np.zeros((1, K), dtype=np.uint8))[0]
    corr = np.corrcoef(np.vstack([protos, mnist300]))[:K, K:]
    assert np.median(corr.max(1)) > 0.8  # bit k alone decodes to (a blurred) image
    assert np.corrcoef(empty, mnist300.mean(0))[0, 1] > 0.9
    off = GaussBPE(prototype_init=False, **SMALL)
    off._setup(off._check_X(mnist300))
    assert not np.allclose(off.decode(np.eye(K, dtype=np.uint8)), protos)


def test_prototype_init_is_torch_adams_without_importing_the_compiler(mnist300):
    """The prototype initialisation's Adam (bpe/adam.py, its tensor operations) gives
    torch.optim.Adam's decoder bit for bit; a fresh process fitting an image model never
    imports torch._dynamo (what the first torch.optim optimiser does: ~1 CPU s, 70 MiB)."""
    import subprocess
    import sys

    from bpetopics.models.images import model as images

    ours = GaussBPE(**SMALL)
    ours._setup(ours._check_X(mnist300))

    class TorchAdam:
        def __new__(cls, params, lr):
            return torch.optim.Adam(params, lr=lr)

    saved, images.Adam = images.Adam, TorchAdam
    try:
        theirs = GaussBPE(**SMALL)
        theirs._setup(theirs._check_X(mnist300))
    finally:
        images.Adam = saved
    for p, q in zip(ours.decoder_.parameters(), theirs.decoder_.parameters()):
        assert torch.equal(p, q)
    code = ("import sys, numpy as np; from bpetopics import GaussBPE, BernBPE; "
            "X = np.random.default_rng(0).random((100, 49)).astype(np.float32); "
            "GaussBPE(n_bits=16, epochs=1, device='cpu', progress=False).fit(X); "
            "BernBPE(n_bits=16, epochs=1, device='cpu', progress=False).fit((X > 0.5).astype(np.float32)); "
            "print('torch._dynamo' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr


def test_codes_of_a_few_bits_train_on_the_default_gamma(mnist300):
    """GaussBPE(n_bits=8) failed on its own default gamma (10, not below K = 8); the
    default is now the model's: 10, or K / 4 for codes of at most 10 bits."""
    for cls in (GaussBPE, BernBPE):
        small = cls(n_bits=8, hidden=(16,), epochs=1, batch_size=50, device="cpu", progress=False)
        small.fit(mnist300[:100] > 0.5 if cls is BernBPE else mnist300[:100])
        assert small.prior_hyperparameters()[1] == 2.0 and small.codes_.shape == (100, 8)
        assert cls(n_bits=11).prior_hyperparameters(100)[1] == cls(n_bits=200).prior_hyperparameters(100)[1] == 10.0
        assert cls.default_gamma(10) == 2.5
    with pytest.raises(ValueError, match="gamma must lie in"):      # a gamma given is never changed
        GaussBPE(n_bits=8, gamma=10.0, device="cpu").validate(100)


def test_data_outside_the_models_range_is_refused(mnist300):
    X = mnist300[:60]
    gauss = dict(n_bits=8, hidden=(16,), epochs=1, batch_size=30, device="cpu", progress=False)
    for cls, bad, fragment in ((GaussBPE, X * 255, "divide 8-bit pixels by 255"),
                               (BernBPE, X * 255, "divide 8-bit pixels by 255"),
                               (BernBPE, X - 0.5, "models pixels in [0, 1]"),
                               (GaussBPE, np.where(X > 0.5, np.nan, X), "NaN or infinite"),
                               (BernBPE, np.where(X > 0.5, np.inf, X), "NaN or infinite")):
        with pytest.raises(ValueError) as err:
            cls(**gauss).fit(bad)
        assert fragment in str(err.value) and "\n" not in str(err.value), str(err.value)
    model = GaussBPE(**gauss).fit(X)
    with pytest.raises(ValueError, match="divide 8-bit pixels by 255"):
        model.transform(X * 255)
    scaled = X * np.linspace(-3, 3, len(X), dtype=np.float32)[:, None]    # scaled images: in its range
    assert model.transform(scaled).shape == (len(X), 8)
    wide = GaussBPE(**dict(gauss, c=400.0))                                  # a wider prior scale takes them
    assert wide.fit(X * 20).codes_.shape == (len(X), 8)
