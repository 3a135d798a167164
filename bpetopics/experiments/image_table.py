"""The paper's Table 1, measured: BPE models against VAE baselines on held-out images.

For each data set every model is trained on the same training subset and scored on the
same test subset (docs/model.md, "How results are measured"):

- MNIST, scaled MNIST, CIFAR-10: GaussBPE against two Gaussian VAEs, the fixed
  sigma^2 = 1 one (Kingma & Welling's, the paper's baseline: its figures match it) and
  one with a learned shared variance (a stronger baseline the paper does not have).
  MSE = mean over images of ||x_n - E[lambda_n] f(z_n)||^2 (VAE: E[lambda] = 1 and the
  decoded posterior mean); sparsity = mean Hoyer of the codes (VAE: posterior means).
- Binarised MNIST: BernBPE against the Gumbel-Softmax VAE. NLL = mean of -ln p(x_n | z_n)
  at one code per image (BernBPE: the pursued code; GS-VAE: the posterior argmax), and,
  for the GS-VAE only, its negative ELBO as a separate column: the two are not the same
  quantity and must not be compared with each other.

``run_table`` writes ``table1.csv``, ``table1.md``, ``recon_<dataset>.png`` and
``seconds_per_epoch.png`` (and ``history.json``, every model's per-epoch record):
:mod:`bpetopics.experiments.image_table_report`.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch
from scipy.special import expit

from bpetopics.experiments.image_table_report import write_outputs
from bpetopics.experiments.image_table_runs import check_models, model_entry, open_table, table_models
from bpetopics.experiments.image_table_setup import (BUDGETS, DATASETS, PAPER_TABLE1, VAE_FIXED,  # noqa: F401
                                                     VAE_LEARNED, Budget)
from bpetopics.images.metrics import bernoulli_nll, mean_hoyer, reconstruction_mse

# ------------------------------------------------------------------------------ data
def load_split(dataset, split, data_root, limit, seed=0, s_max=2.0):
    """(X float32 (N, D), y int64 (N,)) of one split of a Table 1 data set."""
    from bpetopics.images import datasets as ds

    if dataset == "scaled_mnist":
        return ds.load_scaled_mnist(split, data_root, s_max=s_max, limit=limit, random_state=seed)[:2]
    loaders = {"mnist": ds.load_mnist, "binary_mnist": ds.load_binarized_mnist, "cifar10": ds.load_cifar10}
    if dataset not in loaders:
        raise ValueError(f"unknown data set {dataset!r}; choose from {', '.join(DATASETS)}")
    return loaders[dataset](split, data_root, limit=limit, random_state=seed)


def show_indices(y, n=10):
    """Indices of the first test image of each of the first ``n`` classes (grid columns)."""
    picks = [int(np.flatnonzero(y == c)[0]) for c in np.unique(y)[:n]]
    return np.array(picks if picks else np.arange(min(n, len(y))))


# ---------------------------------------------------------------------------- models
def bpe_logits(model, codes, batch=1024):
    """The decoder's output before its sigmoid for every code, in batches of ``batch``.

    Parameters
    ----------
    model : BernBPE or GaussBPE, fitted
    codes : ndarray, shape (N, K)
        Binary codes.

    Returns
    -------
    ndarray, shape (N, D)
    """
    out = []
    with torch.no_grad():
        for b in range(0, codes.shape[0], batch):
            z = torch.as_tensor(codes[b:b + batch], dtype=torch.float32, device=model.device_)
            out.append(model.decoder_(z).cpu().numpy())
    return np.concatenate(out)


def evaluate_bpe(model, kind, Xt):
    """Table 1's row for a fitted BPE model on held-out images ``Xt`` (N, D): sparsity,
    bits, encoding seconds and the metric of ``kind`` ("gauss": MSE, else Bernoulli NLL).

    Returns
    -------
    row : dict
    recon : ndarray, shape (N, D)
        The reconstructions (Gauss: E[lambda_n] f(z_n); Bernoulli: f(z_n)).
    """
    start = time.perf_counter()
    codes = model.transform(Xt)
    encode = time.perf_counter() - start
    bits = codes.sum(1)
    row = {"sparsity": mean_hoyer(codes), "active_bits": float(bits.mean()),
           "empty_codes": float((bits == 0).mean()), "bits_used": int(codes.any(0).sum()),
           "encode_seconds": encode}
    if kind == "gauss":
        mu, _ = model.scale_posterior(Xt, codes)
        recon = mu[:, None] * model.decode(codes)
        row.update(metric="MSE", value=reconstruction_mse(Xt, recon))
    else:
        logits = bpe_logits(model, codes)
        recon = expit(logits)
        row.update(metric="NLL", value=bernoulli_nll(Xt, logits=logits))
    return row, recon


def _evaluate_vae(kind, vae, Xt):
    start = time.perf_counter()
    if kind == "gauss":
        row = {"metric": "MSE", "value": vae.mse(Xt), "sparsity": vae.sparsity(Xt)}
    else:
        row = {"metric": "NLL", "value": vae.reconstruction_nll(Xt),
               "neg_elbo": vae.negative_elbo(Xt, n_samples=10), "sparsity": vae.sparsity(Xt)}
    row["encode_seconds"] = time.perf_counter() - start
    return row, vae.reconstruct(Xt)


def _paper_values(dataset, model):
    base, v_base, v_bpe, s_base, s_bpe = PAPER_TABLE1[dataset]
    if model.endswith("BPE"):
        return v_bpe, s_bpe
    if model in (VAE_FIXED, "GS-VAE"):
        return v_base, s_base
    return float("nan"), float("nan")


def run_dataset(dataset, data_root, budget, device="auto", seed=0, progress=False, log=None,
                out=None, resume=False, models=None):
    """Train every model of one data set and score it on the test subset.

    Each model is an image run under ``out/runs/`` (:mod:`image_table_runs`), trained by
    the checkpointed image job; with ``resume`` finished models are read back and an
    interrupted one continues from its last checkpoint. ``models``: the slugs to train
    (``table_models``'; default all), e.g. one model a process on a shared GPU.

    Returns ``(rows, grid, histories)``: one metrics dict per model, the grid images
    ``{'original' | model name: (n_show, D) array}`` and ``{model name: history_}``.
    """
    from bpetopics.images.sources import load_images

    log = log or (lambda msg: None)
    label, kind = DATASETS[dataset]
    data = load_images(dataset, data_root, split="train", limit=budget.n_train, seed=seed)
    s2 = None
    if dataset == "scaled_mnist":   # with its factors s_n: a model that recovers each scale errs
        # s_n^2 times as much as on the unscaled digit, so MSE / mean s_n^2 is in MNIST's units
        from bpetopics.images.datasets import load_scaled_mnist

        Xt, yt, factors = load_scaled_mnist("test", data_root, s_max=budget.s_max, limit=budget.n_test,
                                            random_state=seed)
        s2 = float(np.mean(np.square(factors, dtype=np.float64)))
    else:
        Xt, yt = load_split(dataset, "test", data_root, budget.n_test, seed, budget.s_max)
    log(f"{label}: {data.X.shape[0]} training, {Xt.shape[0]} test images")
    show = show_indices(yt)
    grid, histories, rows = {"original": Xt[show]}, {}, []
    for name, slug, registry, params in table_models(kind, budget, seed, device):
        if models and slug not in models:
            continue
        params = {**params, "progress": bool(progress)}

        def evaluate(model):
            row, recon = (evaluate_bpe(model, kind, Xt) if name.endswith("BPE")
                          else _evaluate_vae(kind, model, Xt))
            return row, recon[show]

        row, recon, history = model_entry(out, dataset, name, slug, registry, params, data, evaluate,
                                          resume, log)
        epochs = [h["seconds"] for h in history]
        paper_value, paper_sparsity = _paper_values(dataset, name)
        rows.append({"dataset": dataset, "model": name, **row,
                     "sec_per_epoch": float(np.mean(epochs)) if epochs else float("nan"),
                     "epochs": len(epochs), "n_train": data.X.shape[0], "n_test": Xt.shape[0],
                     "paper_value": paper_value, "paper_sparsity": paper_sparsity})
        if s2 is not None:
            rows[-1].update(mean_s2=s2, mse_per_unit_scale=row["value"] / s2)
        grid[name] = recon
        histories[name] = history
        log(f"  {name}: {row['metric']} {row['value']:.2f}, sparsity {row['sparsity']:.3f}")
    return rows, grid, histories


def run_table(data_root, out, budget="small", datasets=None, device="auto", seed=0,
              progress=False, log=None, resume=False, overwrite=False, models=None):
    """Train all models of Table 1 on each data set and write the outputs to ``out``.

    Parameters
    ----------
    data_root : path or None
        Where the data sets are (see :mod:`bpetopics.images.datasets`).
    out : path
        Output folder (created).
    budget : 'tiny', 'small', 'full' or a :class:`Budget`
    datasets : list of str, optional
        Subset of ``DATASETS`` (default: the budget's).
    device : 'auto', 'cpu' or 'cuda'
    resume : bool
        Continue the table in ``out`` (started with the same budget, data sets and
        seed): finished models are read back, an interrupted one continues from its
        last checkpoint (:mod:`bpetopics.experiments.image_table_runs`).
    overwrite : bool
        Start again in ``out``, removing the runs of a table there.
    models : list of str, optional
        Train only these models (slugs: gaussbpe, bernbpe, vae-fixed, vae-learned, gsvae),
        e.g. one a process sharing a GPU; the table holds their rows.

    Returns
    -------
    rows : list of dict (one per data set and model, the CSV's columns)
    paths : list of Path written
    """
    from bpetopics.bpe.device import resolve_device

    if isinstance(budget, str):
        if budget not in BUDGETS:
            raise ValueError(f"unknown budget {budget!r}; choose from {', '.join(BUDGETS)}")
        budget = BUDGETS[budget]
    if datasets:
        unknown = [d for d in datasets if d not in DATASETS]
        if unknown:
            raise ValueError(f"unknown data set(s) {', '.join(unknown)}; choose from "
                             f"{', '.join(DATASETS)}")
        budget = replace(budget, datasets=tuple(datasets))
    models = check_models(models, budget.datasets, budget)
    device = str(resolve_device(device))
    log = log or (lambda msg: None)
    created = not Path(out).exists()
    open_table(out, budget, seed, resume=resume, overwrite=overwrite)
    start = time.perf_counter()
    rows, grids, histories = [], {}, {}
    try:
        for dataset in budget.datasets:
            r, grid, hist = run_dataset(dataset, data_root, budget, device, seed, progress, log, out,
                                        resume, models)
            rows += r
            grids[dataset] = grid
            histories[dataset] = hist
    except Exception:
        # a table that failed before any model started (e.g. missing data) leaves nothing
        runs = Path(out) / "runs"
        if created and not (runs.is_dir() and any(runs.iterdir())):
            shutil.rmtree(out, ignore_errors=True)
        raise
    # time spent training and scoring the models (summed, also over resumed pieces)
    model_seconds = sum(r.get("train_seconds", 0.0) + r.get("encode_seconds", 0.0) for r in rows)
    log(f"this invocation: {time.perf_counter() - start:.0f} s")
    paths = write_outputs(out, rows, grids, histories, budget, device, model_seconds)
    return rows, paths
