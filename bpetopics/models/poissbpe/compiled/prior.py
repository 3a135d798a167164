"""The prior's natural-gradient step from a minibatch of boolean codes in one compiled
pass (numba, CPU): :meth:`bpetopics.bpe.prior.BetaProcessPrior.step`, the same float64
operations in the same order, so the same values bit for bit (a training step's ten
small torch operations cost ~35 us); and its log-odds psi(a_k) - psi(b_k)
(:meth:`~bpetopics.bpe.prior.BetaProcessPrior.bit_log_odds`) in one compiled call, by
the steps of torch's digamma on the CPU (the recurrence psi(x) = psi(x + 1) - 1 / x up
to x >= 10, then the asymptotic series), which tests check against torch's."""

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


def bit_log_odds(prior) -> np.ndarray:
    """``prior.bit_log_odds()`` as a numpy array (K,) float64, in one compiled call
    (CPU; a and b are positive, as a Beta distribution's)."""
    return _log_odds(prior.a.numpy(), prior.b.numpy())


#: The asymptotic series of digamma in 1 / x^2 (Cephes' coefficients, torch's).
_SERIES = np.array([8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
                    -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
                    8.33333333333333333333E-2])
_PSI_10 = 2.25175258906672110764          # psi(10)


if numba is not None:
    from bpetopics.compiled.kernel_cache import cached_njit

    @numba.njit(nogil=True)
    def _digamma(x):  # pragma: no cover - compiled
        """psi(x) for x > 0: x pushed to 10 or more by psi(x) = psi(x + 1) - 1 / x, then
        psi(x) ~ ln x - 1 / (2x) - sum_i A_i / x^(2i) (NaN for x <= 0, not a Beta's)."""
        if not x > 0:
            return np.nan
        result = 0.0
        while x < 10:
            result -= 1 / x
            x += 1
        if x == 10:
            return result + _PSI_10
        series = 0.0
        if x < 1.0e17:
            z = 1.0 / (x * x)
            for coefficient in _SERIES:
                series = series * z + coefficient
            series *= z
        return result + np.log(x) - (0.5 / x) - series

    @cached_njit(nogil=True)
    def _log_odds(a, b):  # pragma: no cover - compiled
        """psi(a_k) - psi(b_k), (K,) float64."""
        out = np.empty(a.shape[0])
        for k in range(a.shape[0]):
            out[k] = _digamma(a[k]) - _digamma(b[k])
        return out

    @cached_njit(nogil=True)
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
