"""Spherical 2-means of sparse non-negative rows, deterministic (:func:`two_means`): how
the split moves (:mod:`bpetopics.models.poissbpe.topic_split`) cut a topic's documents in two."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from bpetopics.models.poissbpe.compiled import kernels
from bpetopics.models.poissbpe.compiled import two_means as compiled_two_means

__all__ = ["two_means", "POWER_TOLERANCE"]

#: The power iteration stops when its unit direction moves less than this (L2) in a
#: round. Only the sign of each row's projection on it is used, as the start of the
#: k-means rounds, which move the rows near the boundary anyway; stopping at 1e-6 instead
#: took longer for the same halves (docs/defaults.md: the topic check's schedule).
POWER_TOLERANCE = 1e-3


def two_means(R: sp.csr_matrix, n_iter: int = 10, tolerance: float = POWER_TOLERANCE) -> np.ndarray:
    """Spherical 2-means of the rows of R (documents' explained counts), deterministic.

    The rows are scaled to unit length and first cut by the sign of their projection on
    the leading principal direction (power iteration on the centred rows, as in
    principal-direction divisive partitioning; at most 30 rounds, until the direction
    moves less than ``tolerance``); then ``n_iter`` rounds of k-means: each row to the
    half whose summed direction it is closer to in cosine.

    Parameters
    ----------
    R : scipy.sparse.csr_matrix, shape (N, W)
        Non-negative rows, none empty.

    Returns
    -------
    np.ndarray of bool, shape (N,)
        True for the rows of the second half.

    With numba the same steps run in one compiled call (:func:`bpetopics.models.poissbpe.compiled.two_means.two_means`; much faster:
    the check's many small Python and scipy calls are gone), summing in
    its own order: the halves can differ where a document sits on the boundary.
    """
    R = sp.csr_matrix(R)
    if kernels.available("cpu"):
        return compiled_two_means.two_means(R.indptr, R.indices, R.data.astype(np.float64), R.shape[1], int(n_iter),
                                            float(tolerance))
    norms = np.sqrt(np.asarray(R.multiply(R).sum(1)).ravel())
    unit = sp.csr_matrix(sp.diags(1.0 / np.maximum(norms, 1e-300)) @ R)
    unit_t, R_t = unit.T.tocsr(), sp.csr_matrix(R.T)    # transposed once (matvecs below)
    mean = np.asarray(unit.mean(0)).ravel()
    # power iteration for the top right singular vector of (unit - 1 mean'), started
    # from the row least like the mean
    direction = unit[int(np.argmin(unit @ mean))].toarray().ravel() - mean
    direction /= max(np.linalg.norm(direction), 1e-300)
    for _ in range(30):                          # until the direction moves < tolerance
        projection = unit @ direction - mean @ direction                 # (N,)
        previous = direction
        direction = unit_t @ projection - mean * projection.sum()
        direction /= max(np.linalg.norm(direction), 1e-300)
        if np.linalg.norm(direction - previous) < tolerance:
            break
    second = (unit @ direction - mean @ direction) > 0
    for _ in range(n_iter):
        if second.all() or not second.any():
            break
        sums = (R_t @ np.stack([~second, second], axis=1).astype(R.dtype)).T   # (2, W)
        centres = sums / np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-300)
        sims = unit @ centres.T                                          # (N, 2)
        new = sims[:, 1] > sims[:, 0]
        if (new == second).all():
            break
        second = new
    return second
