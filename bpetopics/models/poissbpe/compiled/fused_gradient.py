"""The theta step's data gradient over a packed batch in one compiled pass (numba, CPU).

The theta step minimises loss = -(1/N) sum_i x_i ln phi_i over the batch's non-zeros i
(document n_i, word w_i, count x_i; N the tokens), phi_i = sum_t beta[w_i, t] f_t(z_{n_i}).
Its gradients with respect to the mixtures f (P, T) and to the batch's topic rows beta_u
(U, T) (:meth:`bpetopics.models.poissbpe.poisson.PoissonLikelihood.theta_backward` chains them on) are

    g_i = -x_i / (N phi_i),
    dL/df_n = sum_{i in n} g_i beta[w_i],      dL/dbeta_w = sum_{i: w_i = w} g_i f(z_{n_i}).

In torch that is about ten operations over (nnz, T) arrays (two gathers, a product and
its row sums, two scatter-adds); here one loop over the non-zeros does it without the
(nnz, T) temporaries, in about half the time (`python -m benchmarks speed` measures it). The sums are
taken in another order than torch's, so the gradients agree to float rounding (tests
check them against the torch path and autograd) and training drifts like another seed.
"""

from __future__ import annotations

import numpy as np
import torch

from bpetopics.models.poissbpe.compiled import kernels

numba = kernels.numba


def usable(mix: torch.Tensor) -> bool:
    """Whether the compiled pass serves these tensors: numba, CPU, float32."""
    return kernels.available(mix.device) and mix.dtype == torch.float32


def data_gradient(rows, local, vals, beta_u, mix, tokens: float):
    """(dL/df (P, T), dL/dbeta_u (U, T)) of the module's loss.

    Parameters
    ----------
    rows, local : torch.LongTensor, shape (nnz,)
        Each non-zero's document (0..P-1) and word in the batch's vocabulary (0..U-1).
    vals : torch.Tensor, shape (nnz,)
        Its count.
    beta_u : torch.Tensor, shape (U, T)
        The topics' rows at the batch's vocabulary.
    mix : torch.Tensor, shape (P, T)
        The documents' mixtures f(z_n).
    tokens : float
        N, the loss's normaliser.
    """
    d_mix, d_beta_u = torch.zeros_like(mix), torch.zeros_like(beta_u)
    data_gradient_kernel(rows.numpy(), local.numpy(), vals.float().numpy(),
                         beta_u.contiguous().numpy(), mix.contiguous().numpy(),
                         np.float32(1.0 / tokens), d_mix.numpy(), d_beta_u.numpy())
    return d_mix, d_beta_u


if numba is not None:
    from bpetopics.compiled.kernel_cache import cached_njit

    @cached_njit(nogil=True)
    def data_gradient_kernel(rows, local, vals, beta_u, mix, inv_tokens, d_mix,
                             d_beta_u):  # pragma: no cover - compiled
        """The module's sums into d_mix (P, T) and d_beta_u (U, T), zero on entry; phi
        floored at 1e-30 as the torch path."""
        n_topics = mix.shape[1]
        for i in range(rows.shape[0]):
            n, u = rows[i], local[i]
            # phi_i in four partial sums (a chain of T dependent adds waits on each)
            s0 = s1 = s2 = s3 = np.float32(0.0)
            t = 0
            while t + 4 <= n_topics:
                s0 += beta_u[u, t] * mix[n, t]
                s1 += beta_u[u, t + 1] * mix[n, t + 1]
                s2 += beta_u[u, t + 2] * mix[n, t + 2]
                s3 += beta_u[u, t + 3] * mix[n, t + 3]
                t += 4
            while t < n_topics:
                s0 += beta_u[u, t] * mix[n, t]
                t += 1
            phi = max((s0 + s1) + (s2 + s3), np.float32(1e-30))
            g = -(vals[i] * inv_tokens) / phi                   # d loss / d phi_i
            for t in range(n_topics):
                d_mix[n, t] += g * beta_u[u, t]
                d_beta_u[u, t] += g * mix[n, t]
