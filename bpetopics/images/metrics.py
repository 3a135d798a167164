"""Image metrics of the paper's Table 1 (numpy; torch tensors are accepted).

- ``reconstruction_mse``: mean over images of the *sum* over pixels of squared error,
  (1/N) sum_n ||x_n - x_hat_n||^2 (docs/model.md, "How results are measured").
- ``bernoulli_nll``: mean over images of -ln p(x_n | z_n) = -sum_d [x ln p + (1-x) ln(1-p)],
  from logits (stable) or probabilities (clipped).
- ``hoyer_sparsity`` / ``mean_hoyer``: Hoyer(z) = (sqrt(K) - |z|_1/|z|_2) / (sqrt(K) - 1),
  1 for a one-hot (or empty) code, 0 for a flat one. The all-zero code counts as 1,
  as docs/model.md defines. Absolute values are used, so real-valued codes (VAE means) work.

``bpetopics.evaluation`` had no Hoyer measure when this was written; if one lands there
it should agree with this one (same definition, empty code = 1).
"""

from __future__ import annotations

import numpy as np

from bpetopics.sparsity import hoyer_sparsity

__all__ = ["reconstruction_mse", "bernoulli_nll", "hoyer_sparsity", "mean_hoyer"]


def _np(a) -> np.ndarray:
    if hasattr(a, "detach"):
        a = a.detach().cpu().numpy()
    return np.asarray(a, dtype=np.float64)


def reconstruction_mse(X, X_hat) -> float:
    """(1/N) sum_n sum_d (x_nd - x_hat_nd)^2."""
    X, X_hat = _np(X), _np(X_hat)
    if X.shape != X_hat.shape:
        raise ValueError(f"shapes differ: {X.shape} vs {X_hat.shape}")
    X, X_hat = X.reshape(X.shape[0], -1), X_hat.reshape(X.shape[0], -1)
    return float(np.mean(np.sum((X - X_hat) ** 2, axis=1)))


def bernoulli_nll(X, *, logits=None, probs=None, eps=1e-7) -> float:
    """(1/N) sum_n -ln p(x_n | z_n) for a factorised Bernoulli with the given
    ``logits`` (preferred: exact and stable) or ``probs`` (clipped to [eps, 1-eps])."""
    if (logits is None) == (probs is None):
        raise ValueError("pass exactly one of logits= or probs=")
    X = _np(X)
    X = X.reshape(X.shape[0], -1)
    if logits is not None:
        L = _np(logits).reshape(X.shape)
        # -[x ln s(l) + (1-x) ln(1-s(l))] = softplus(l) - x*l
        per_pixel = np.logaddexp(0.0, L) - X * L
    else:
        P = np.clip(_np(probs).reshape(X.shape), eps, 1.0 - eps)
        per_pixel = -(X * np.log(P) + (1.0 - X) * np.log1p(-P))
    return float(np.mean(np.sum(per_pixel, axis=1)))


def mean_hoyer(Z) -> float:
    """The paper's code sparsity: mean over rows of ``hoyer_sparsity``."""
    return float(np.mean(hoyer_sparsity(Z)))
