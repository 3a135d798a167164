"""A compiled CPU kernel for the pursuit's later steps (numba), torch elsewhere.

For A documents, each with its current code's candidate mixtures f(z_n + e_j) (K x T),
the data term of every candidate is

    score_nj = sum_{i in n} x_i ln sum_t beta[w_i, t] f(z_n + e_j)_t          (A, K)

over the document's real non-zeros i. The kernel runs this fused, one document per
iteration of a parallel loop (``prange``: documents are spread over the threads), with no
intermediate (non-zeros x K) array. Documents with the same code share ``mix_t`` rows, so
the mixtures are computed once per distinct code. Used on CPU tensors when numba imports;
:func:`bpetopics.core.table_pursuit._shared_code_scores` is the torch path (CUDA, or
without numba) and gives the same scores to float tolerance.
"""

from __future__ import annotations

import numpy as np
import torch

try:
    import numba
    from numba import njit, prange
except ImportError:                                   # pragma: no cover - numba optional
    numba = None

if numba is not None:
    if numba.config.THREADING_LAYER == "default":
        # OpenMP's workers spin after each parallel loop and burn the other cores' time;
        # the work-queue pool sleeps.
        numba.config.THREADING_LAYER = "workqueue"

    def _mix_products_py(indptr, cols, code_of_doc, beta, mix_t, phi):  # pragma: no cover
        """phi[i, j] = sum_t beta[cols[i], t] mix_t[code_of_doc[n], t, j] for each non-zero
        i of document n. indptr (A+1,), cols (nnz,), code_of_doc (A,), beta (U, T),
        mix_t (C, T, K) -> phi (nnz, K)."""
        n_topics, n_bits = mix_t.shape[1], mix_t.shape[2]
        for n in prange(indptr.shape[0] - 1):
            mix = mix_t[code_of_doc[n]]
            for i in range(indptr[n], indptr[n + 1]):
                row = beta[cols[i]]
                out = phi[i]
                out[:] = 0.0
                for t in range(n_topics):
                    b = row[t]
                    for j in range(n_bits):
                        out[j] += b * mix[t, j]

    # One thread: a plain loop (no thread pool); more: documents spread over threads.
    _mix_products_serial = njit(cache=True, nogil=True)(_mix_products_py)
    _mix_products_parallel = njit(parallel=True, cache=True, nogil=True)(_mix_products_py)


def available(device) -> bool:
    """Whether the compiled kernel serves tensors on ``device``."""
    return numba is not None and torch.device(device).type == "cpu"


def candidate_scores(sub, code_of_doc, beta, mix):
    """score_nj above, (A, K) float32.

    Parameters
    ----------
    sub : PackedCounts
        The A documents; ``cols`` index rows of ``beta``.
    code_of_doc : torch.LongTensor, shape (A,)
        Which row of ``mix`` is each document's.
    beta : torch.Tensor, shape (U, T)
    mix : torch.Tensor, shape (C, K, T)
        f(z_c + e_j) for each distinct code c and bit j.
    """
    threads = max(1, min(torch.get_num_threads(), numba.config.NUMBA_NUM_THREADS))
    kernel = _mix_products_serial
    if threads > 1:
        numba.set_num_threads(threads)
        kernel = _mix_products_parallel
    phi = torch.empty(sub.cols.shape[0], mix.shape[1])
    kernel(sub.indptr.numpy(), sub.cols.numpy(), code_of_doc.numpy(),
                  beta.float().contiguous().numpy(),
                  mix.float().transpose(1, 2).contiguous().numpy(), phi.numpy())
    log_phi = phi.clamp_min_(1e-30).log_()                  # torch's vectorised log
    return sub.row_sum(sub.vals[:, None] * log_phi)         # sum_i x_i ln phi_ij
