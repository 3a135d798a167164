"""The Hoyer sparsity of codes: one measure for text codes, image codes and the VAE
baselines' posterior means (numpy and scipy only)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def hoyer_sparsity(codes) -> np.ndarray:
    """Hoyer sparsity of each row.

    Hoyer(z) = (sqrt(K) - |z|_1 / |z|_2) / (sqrt(K) - 1)

    1 for a one-hot vector, 0 for a flat one. The empty (all-zero) code is defined as 1.
    For a binary code with s bits on, |z|_1 / |z|_2 = s / sqrt(s) = sqrt(s), so
    Hoyer = (sqrt(K) - sqrt(s)) / (sqrt(K) - 1). Works on real-valued rows too (e.g. VAE
    posterior means); absolute values are used.

    Parameters
    ----------
    codes : np.ndarray, torch.Tensor or scipy.sparse matrix, shape (N, K), K >= 2

    Returns
    -------
    np.ndarray of float64, shape (N,)
    """
    if hasattr(codes, "detach"):  # a torch tensor
        codes = codes.detach().cpu().numpy()
    if sp.issparse(codes):
        z = sp.csr_matrix(codes, dtype=np.float64)
        l1 = np.asarray(abs(z).sum(axis=1)).ravel()
        l2 = np.sqrt(np.asarray(z.multiply(z).sum(axis=1)).ravel())
        k = z.shape[1]
    else:
        z = np.asarray(codes, dtype=np.float64)
        if z.ndim == 1:
            z = z[None, :]
        l1 = np.abs(z).sum(axis=1)
        l2 = np.sqrt((z * z).sum(axis=1))
        k = z.shape[1]
    if k < 2:
        raise ValueError("Hoyer sparsity needs at least two dimensions")
    sqrt_k = np.sqrt(k)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = (sqrt_k - l1 / l2) / (sqrt_k - 1.0)
    return np.where(l2 > 0, h, 1.0)
