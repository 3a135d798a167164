"""GaussBPE and BernBPE on a tiny MNIST subset, and the Table 1 command end to end."""

import csv

import numpy as np
import pytest
import torch
from click.testing import CliRunner

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


# --------------------------------------------------------------------------- the table
def test_checks_and_markdown_on_hand_made_rows():
    from bpetopics.images.table import BUDGETS, VAE_FIXED, VAE_LEARNED, checks, markdown

    base = dict(sec_per_epoch=1.0, epochs=2, paper_value=1.0, paper_sparsity=0.5)
    rows = [dict(dataset="mnist", model="GaussBPE", metric="MSE", value=10.0, sparsity=0.9,
                 **base),
            dict(dataset="mnist", model=VAE_FIXED, metric="MSE", value=20.0, sparsity=0.7,
                 **base),
            dict(dataset="mnist", model=VAE_LEARNED, metric="MSE", value=5.0, sparsity=0.2,
                 **base),
            dict(dataset="binary_mnist", model="BernBPE", metric="NLL", value=100.0,
                 sparsity=0.9, **base),
            dict(dataset="binary_mnist", model="GS-VAE", metric="NLL", value=95.0,
                 neg_elbo=110.0, sparsity=0.3, **base)]
    got = [ok for _, ok in checks(rows)]
    assert got == [True, True, False, True, True, True]
    md = markdown(rows, BUDGETS["tiny"], "cpu", 12.0)
    assert md.count("\n| ") == 6 and "110.00" in md and "- [ ] MNIST: GaussBPE MSE" in md


@pytest.mark.slow
def test_table_command_tiny_budget(data_root, tmp_path):
    from bpetopics.cli import main

    out = tmp_path / "table"
    result = CliRunner().invoke(main, ["images", "table", "--data-root", str(data_root),
                                       "--out", str(out), "--budget", "tiny", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    for name in ("table1.csv", "table1.md", "history.json", "seconds_per_epoch.png",
                 "recon_mnist.png", "recon_scaled_mnist.png", "recon_binary_mnist.png"):
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
    with open(out / "table1.csv") as fh:
        rows = list(csv.DictReader(fh))
    models = [(r["dataset"], r["model"]) for r in rows]
    assert len(models) == 8 and ("binary_mnist", "GS-VAE") in models
    for r in rows:
        assert np.isfinite(float(r["value"])) and 0 <= float(r["sparsity"]) <= 1
        assert float(r["sec_per_epoch"]) > 0
    gs = next(r for r in rows if r["model"] == "GS-VAE")
    assert float(gs["neg_elbo"]) > 0 and float(gs["paper_value"]) == 81.55
    assert (out / "seconds_per_epoch.png").read_bytes()[:4] == b"\x89PNG"
    assert "| MNIST | GaussBPE | MSE |" in (out / "table1.md").read_text()


def test_table_command_epoch_overrides(data_root, tmp_path):
    from bpetopics.cli import main

    out = tmp_path / "short"
    result = CliRunner().invoke(main, ["images", "table", "--data-root", str(data_root),
                                       "--out", str(out), "--budget", "tiny", "--datasets",
                                       "binary_mnist", "--bpe-epochs", "1", "--vae-epochs",
                                       "3", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    with open(out / "table1.csv") as fh:
        epochs = {r["model"]: int(r["epochs"]) for r in csv.DictReader(fh)}
    assert epochs == {"BernBPE": 1, "GS-VAE": 3}


def test_table_command_rejects_bad_input(tmp_path):
    from bpetopics.cli import main

    runner = CliRunner()
    bad_budget = runner.invoke(main, ["images", "table", "--out", str(tmp_path), "--budget",
                                      "huge"])
    assert bad_budget.exit_code == 2 and "small, full" in bad_budget.output
    bad_set = runner.invoke(main, ["images", "table", "--out", str(tmp_path), "--datasets",
                                   "mnist,svhn"])
    assert bad_set.exit_code == 2 and "svhn" in bad_set.output
    missing = runner.invoke(main, ["images", "table", "--out", str(tmp_path), "--data-root",
                                   str(tmp_path / "nothing"), "--datasets", "mnist"])
    assert missing.exit_code == 2 and "MNIST" in missing.output
    assert "Traceback" not in missing.output
    # the message names the command's flags, not the library's arguments
    assert "--data-root" in missing.output and "download=True" not in missing.output
    assert "data_root" not in missing.output.replace(str(tmp_path), "")
    helptext = runner.invoke(main, ["images", "table", "--help"]).output
    assert "tiny" in helptext and "--budget" in helptext and "--overwrite" in helptext
    zero = runner.invoke(main, ["images", "table", "--out", str(tmp_path), "--bpe-epochs", "0"])
    assert zero.exit_code == 2 and "--bpe-epochs" in zero.output
