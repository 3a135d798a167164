"""Likelihoods: the per-point data term that scores a code, the theta loss, q(lambda).

Each likelihood turns the decoder's unconstrained outputs into its parameters and gives

* ``data_term(out, batch)``: the part of the pursuit's score L(z) that depends on z
  (MODEL.md, "The score that the pursuit maximises"), for one output per point
  ``(P, D)`` -> ``(P,)`` or for C candidate codes per point ``(P, C, D)`` -> ``(P, C)``;
* ``theta_loss(out, batch, params)``: what one Adam step on theta minimises at the current
  codes, given ``minibatch_params()`` (what the step computes once from theta);
* ``data_upper_bound(batch)``: a bound no code's data term can exceed (the pursuit drops
  bits whose prior penalty already rules them out), or None;
* ``batch(X)``: the tensors it needs for rows of X, on the model's device.

:class:`Likelihood` lists every method the pursuit and the estimator call; a new
likelihood implements it (and its model, in :mod:`bpetopics.models`, returns it from
``_make_likelihood``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp
import torch
import torch.nn.functional as F
from torch import nn

from bpetopics.core.packed import PackedCounts, PaddedCounts  # noqa: F401  (batch types)
from bpetopics.core.poisson import PoissonLikelihood  # noqa: F401  (text: its own module)

# ------------------------------------------------------------------------- the protocol
@runtime_checkable
class Likelihood(Protocol):
    """What the pursuit (:mod:`bpetopics.core.pursuit`) and the estimator
    (:class:`bpetopics.core.model.BPEBase`) call on a likelihood. Implementations are
    ``torch.nn.Module`` s (their parameters, if any, are part of theta and saved with the
    model), so ``parameters``, ``to``, ``state_dict`` and ``load_state_dict`` come with them.
    """

    def batch(self, X, device):
        """The tensors the likelihood needs for rows of X (N, D), on ``device``:
        a batch with ``len``, ``width`` and ``take(idx)`` (e.g. :class:`PaddedCounts`)."""

    def batch_order(self, X) -> np.ndarray:
        """An order of the rows of X in which to encode them (similar rows together,
        e.g. by length, so that padded batches stay small), shape (N,)."""

    def link(self, out: torch.Tensor) -> torch.Tensor:
        """The likelihood's parameters f(z) from the decoder's outputs (..., n_out)."""

    def data_term(self, out: torch.Tensor, batch) -> torch.Tensor:
        """The part of the score L(z) that depends on z: (P, n_out) -> (P,), or
        (P, C, n_out) -> (P, C) for C candidate codes per point."""

    def minibatch_params(self):
        """What a minibatch step computes once from theta and shares between the pursuit,
        the theta loss and a prior on theta (e.g. beta = softmax(topic_logits)); None
        when there is nothing to share."""

    def theta_loss(self, out: torch.Tensor, batch, params=None, normaliser=None) -> torch.Tensor:
        """The scalar one Adam step on theta minimises at the current codes (``params``:
        this step's :meth:`minibatch_params`, computed with autograd): a sum over the
        batch's points divided by :meth:`theta_normaliser`, or by ``normaliser`` when given
        (a step shared by processes: the whole minibatch's)."""

    def theta_backward(self, out: torch.Tensor, batch, params=None, normaliser=None) -> None:
        """Add the gradient of :meth:`theta_loss` to the ``.grad`` of the likelihood's
        parameters and, through ``out`` (``out.backward``), of the decoder's (autograd,
        or written out where that is faster: :mod:`bpetopics.core.poisson`)."""

    def theta_normaliser(self, batch):
        """What :meth:`theta_loss` divides its sum by (adds up over parts of a batch): a
        number or a 0-d tensor."""

    def data_upper_bound(self, batch):
        """A bound (P,) that no code's data term can exceed, or None when there is none
        (the pursuit then keeps every candidate bit)."""

    def parameters(self):
        """Its learnable tensors (torch.nn.Module)."""

    def to(self, device):
        """Move it to ``device`` (torch.nn.Module)."""


# ---------------------------------------------------------------------------- batches


@dataclass
class DenseBatch:
    """Dense rows, shape (P, D)."""

    x: torch.Tensor

    def __len__(self):
        return self.x.shape[0]

    @property
    def width(self) -> int:
        return self.x.shape[1]

    @property
    def lengths(self) -> torch.Tensor:
        return torch.full((self.x.shape[0],), self.x.shape[1], device=self.x.device)

    def take(self, idx: torch.Tensor) -> "DenseBatch":
        return DenseBatch(self.x[idx])


def _dense_batch(X, device, dtype=torch.float32) -> DenseBatch:
    if sp.issparse(X):
        X = X.toarray()
    return DenseBatch(torch.as_tensor(np.asarray(X), dtype=dtype).to(device))


# ------------------------------------------------------------------------ likelihoods


class _DenseSigmoid(nn.Module):
    """Shared by the image likelihoods: dense rows, f(z) = sigmoid of the outputs."""

    batch = staticmethod(_dense_batch)

    @staticmethod
    def batch_order(X) -> np.ndarray:
        return np.arange(X.shape[0])

    @staticmethod
    def link(out: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(out)

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
