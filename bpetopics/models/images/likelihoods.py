"""The image likelihoods: Gaussian (GaussBPE) and Bernoulli (BernBPE) pixels, f(z) =
sigmoid of the decoder's outputs; each implements :class:`bpetopics.bpe.likelihoods.
Likelihood` and pursues its dense batches by :mod:`~bpetopics.models.images.dense_pursuit`'s
shared tables (CPU) or :mod:`~bpetopics.models.images.shortlist_pursuit`'s shortlists."""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from bpetopics.bpe.likelihoods import DenseBatch, dense_batch
from bpetopics.models.images.dense_pursuit import dense_pursuit, uses_dense_tables
from bpetopics.models.images.shortlist_pursuit import shortlist_pursuit

# ------------------------------------------------------------------------ likelihoods


class _DenseSigmoid(nn.Module):
    """Shared by the image likelihoods: dense rows, f(z) = sigmoid of the outputs."""

    batch = staticmethod(dense_batch)

    @staticmethod
    def batch_order(X) -> np.ndarray:
        return np.arange(X.shape[0])

    @staticmethod
    def link(out: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(out)

    def own_pursuit(self, decoder, batch, log_odds, max_bits, budget, return_score,
                    params=None, shortlist=None, exact_stop=True):
        """The greedy pursuit of a dense batch by :func:`shortlist_pursuit` (with a
        ``shortlist`` below K) or the shared tables of :func:`dense_pursuit` (CPU); None
        where the generic pursuit of :mod:`bpetopics.bpe.pursuit` runs instead."""
        if not isinstance(batch, DenseBatch):
            return None
        if shortlist is not None and shortlist < decoder.bit_columns.shape[0]:
            return shortlist_pursuit(decoder, self, batch, log_odds, shortlist, max_bits,
                                     budget, return_score, exact_stop)
        if uses_dense_tables(batch, self, decoder.bit_columns.device):
            return dense_pursuit(decoder, self, batch, log_odds, max_bits, budget, return_score)
        return None

    def minibatch_params(self):
        """Nothing to share between the pursuit and the theta step."""
        return None

    def theta_backward(self, out: torch.Tensor, batch, params=None, normaliser=None) -> None:
        """The gradient of :meth:`theta_loss`, by autograd."""
        self.theta_loss(out, batch, params, normaliser).backward()

    @staticmethod
    def theta_normaliser(batch) -> float:
        """The theta loss is a mean over the batch's points."""
        return float(len(batch))


class GaussianLikelihood(_DenseSigmoid):
    """x_n ~ N(lambda_n f(z_n), sigma^2 I), lambda_n ~ N(0, c), f(z) = sigmoid(out).

    The pursuit scores a code by the marginal over lambda_n,
    ln N(x_n | 0, sigma^2 I + c f f'); theta minimises E_q ||x_n - lambda_n f||^2 under
    the Gaussian posterior q(lambda_n) = N(mu_n, s_n^2).
    """

    def __init__(self, sigma=1.0, c=1.0):
        super().__init__()
        self.sigma2, self.c = float(sigma) ** 2, float(c)

    def data_term(self, out: torch.Tensor, batch: DenseBatch) -> torch.Tensor:
        """ln N(x | 0, sigma^2 I + c f f'), exactly (constants included).

        = -1/2 [ D ln(2 pi sigma^2) + ln(1 + (c/sigma^2) f'f) + x'x/sigma^2
                 - (f'x)^2 / (sigma^2 (sigma^2/c + f'f)) ]
        """
        f = self.link(out)
        x = batch.x if out.dim() == 2 else batch.x.unsqueeze(1)
        ff, fx = (f * f).sum(-1), (f * x).sum(-1)
        xx = (x * x).sum(-1)
        s2, c, d = self.sigma2, self.c, f.shape[-1]
        return -0.5 * (d * math.log(2 * math.pi * s2) + torch.log1p(c / s2 * ff)
                       + xx / s2 - fx ** 2 / (s2 * (s2 / c + ff)))

    def shared_term(self, out: torch.Tensor, batch) -> torch.Tensor:
        """The data term of every point against each of C shared outputs, (C, D) ->
        (P, C) (``batch``: a DenseBatch or its (P, D) tensor): ff_c = f_c'f_c is shared by
        all points and fx = X F' is one matrix product (the dense pursuit's tables).
        Without autograd ``out`` is overwritten (by f = sigmoid(out))."""
        x = batch.x if isinstance(batch, DenseBatch) else batch
        # the pursuit's outputs are its own (no autograd): the link overwrites them
        f = out.sigmoid_() if not torch.is_grad_enabled() else self.link(out)   # (C, D)
        ff = torch.linalg.vecdot(f, f)                          # (C,)
        fx = x @ f.t()                                          # (P, C)
        xx = (x * x).sum(-1, keepdim=True)                      # (P, 1)
        s2, c, d = self.sigma2, self.c, f.shape[-1]
        return -0.5 * (d * math.log(2 * math.pi * s2) + torch.log1p(c / s2 * ff)
                       + xx / s2 - fx ** 2 / (s2 * (s2 / c + ff)))

    def scale_posterior(self, f: torch.Tensor, x: torch.Tensor):
        """q(lambda_n) = N(mu_n, s_n^2): s^2 = (1/c + f'f/sigma^2)^-1, mu = s^2 f'x / sigma^2.

        f, x: (P, D) -> mu, s2: (P,)
        """
        s2 = 1.0 / (1.0 / self.c + (f * f).sum(-1) / self.sigma2)
        return s2 * (f * x).sum(-1) / self.sigma2, s2

    def theta_loss(self, out: torch.Tensor, batch: DenseBatch, params=None, normaliser=None) -> torch.Tensor:
        """Mean over points of E_q ||x - lambda f||^2 = ||x - mu f||^2 + s^2 f'f (the sum
        divided by ``normaliser`` when given)."""
        f = self.link(out)
        with torch.no_grad():
            mu, s2 = self.scale_posterior(f, batch.x)
        err = ((batch.x - mu[:, None] * f) ** 2).sum(-1) + s2 * (f * f).sum(-1)
        return err.mean() if normaliser is None else err.sum() / normaliser

    def data_upper_bound(self, batch: DenseBatch) -> torch.Tensor:
        """max over f of the marginal: with A = x'x / sigma^2 and q = c f'f / sigma^2 >= 0,
        the bracket is at least min_q ln(1+q) + A/(1+q) = (1 + ln A if A >= 1 else A)."""
        a = (batch.x * batch.x).sum(-1) / self.sigma2
        bracket = torch.where(a >= 1, 1 + torch.log(a.clamp_min(1.0)), a)
        d = batch.x.shape[1]
        return -0.5 * (d * math.log(2 * math.pi * self.sigma2) + bracket)


class BernoulliLikelihood(_DenseSigmoid):
    """x_n ~ Bernoulli(f(z_n)), f(z) = sigmoid(out), no local scale."""

    def data_term(self, out: torch.Tensor, batch: DenseBatch) -> torch.Tensor:
        """sum_d x_d ln f_d + (1 - x_d) ln(1 - f_d), from logits (stable)."""
        x = batch.x if out.dim() == 2 else batch.x.unsqueeze(1).expand_as(out)
        return -F.binary_cross_entropy_with_logits(out, x, reduction="none").sum(-1)

    def shared_term(self, out: torch.Tensor, batch) -> torch.Tensor:
        """The data term of every point against each of C shared outputs, (C, D) ->
        (P, C) (``batch``: a DenseBatch or its (P, D) tensor):
        sum_d x_d o_d - softplus(o_d), one matrix product plus a sum shared by all points."""
        x = batch.x if isinstance(batch, DenseBatch) else batch
        return x @ out.t() - F.softplus(out).sum(-1)

    @staticmethod
    def paired_term(out: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """The data term of N (output, point) pairs, (N, D), (N, D) -> (N,), summed as
        :meth:`shared_term` sums it."""
        return (x * out).sum(-1) - F.softplus(out).sum(-1)

    @staticmethod
    def linear_bound(x: torch.Tensor, current: torch.Tensor):
        """A bound on the data term linear in the outputs, exact at ``current``:
        data(o) <= slope'o + const for every o (softplus is convex, so it lies above its
        tangent at a: softplus(o) >= softplus(a) + sigmoid(a) (o - a)).

        x, current (a): (N, D) -> slope (N, D) = x - sigmoid(a),
        const (N,) = sum_d sigmoid(a_d) a_d - softplus(a_d)."""
        p = torch.sigmoid(current)
        return x - p, (p * current - F.softplus(current)).sum(-1)

    def theta_loss(self, out: torch.Tensor, batch: DenseBatch, params=None, normaliser=None) -> torch.Tensor:
        term = self.data_term(out, batch)
        return -term.mean() if normaliser is None else -term.sum() / normaliser

    @staticmethod
    def data_upper_bound(batch: DenseBatch) -> torch.Tensor:
        """sum_d x ln x + (1-x) ln(1-x): the log-likelihood at f = x (0 for binary x)."""
        x = batch.x
        return (torch.xlogy(x, x) + torch.xlogy(1 - x, 1 - x)).sum(-1)
