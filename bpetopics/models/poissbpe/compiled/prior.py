"""The prior's natural-gradient step from a minibatch of boolean codes in one compiled
pass (numba, CPU): :meth:`bpetopics.bpe.prior.BetaProcessPrior.step`, the same float64
operations in the same order, so the same values bit for bit (a training step's ten
small torch operations cost ~35 us)."""

from __future__ import annotations

import numpy as np
import torch

from bpetopics.models.poissbpe.compiled import kernels

numba = kernels.numba


def usable(prior, codes: torch.Tensor) -> bool:
    """Whether :func:`natural_step` serves these codes: boolean, on the CPU, numba."""
    return (codes.dtype == torch.bool and codes.shape[0] > 0 and kernels.available(codes.device)
            and prior.a.device.type == "cpu")


def natural_step(prior, codes: torch.Tensor) -> None:
    """``prior.step(codes)`` in one compiled pass (see :func:`usable`)."""
    a, b = _natural_step(codes.numpy().view(np.uint8), prior.a.numpy(), prior.b.numpy(),
                         prior.prior_a.numpy(), prior.prior_b.numpy(), float(prior.n_data),
                         prior.step_size())
    prior.a, prior.b = torch.from_numpy(a), torch.from_numpy(b)
    prior.t += 1


if numba is not None:
    @numba.njit(cache=True, nogil=True)
    def _natural_step(codes, a, b, prior_a, prior_b, n_data, eta):  # pragma: no cover - compiled
        """:meth:`BetaProcessPrior.apply` of the statistics of codes (|S|, K) uint8: new
        (a, b), float64, each element by the same operations in the same order."""
        n_codes, n_bits = codes.shape
        on = np.zeros(n_bits, dtype=np.float64)
        for n in range(n_codes):
            for k in range(n_bits):
                on[k] += codes[n, k]
        scale = n_data / n_codes
        new_a = np.empty(n_bits, dtype=np.float64)
        new_b = np.empty(n_bits, dtype=np.float64)
        for k in range(n_bits):
            a_hat = prior_a[k] + scale * on[k]
            b_hat = prior_b[k] + scale * (n_codes - on[k])
            new_a[k] = (1 - eta) * a[k] + eta * a_hat
            new_b[k] = (1 - eta) * b[k] + eta * b_hat
        return new_a, new_b
