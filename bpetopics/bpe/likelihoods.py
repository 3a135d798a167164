"""Likelihoods: the per-point data term that scores a code, the theta loss, q(lambda).

Each likelihood turns the decoder's unconstrained outputs into its parameters and gives

* ``data_term(out, batch)``: the part of the pursuit's score L(z) that depends on z
  (docs/model.md, "The score of a code"), for one output per point
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

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp
import torch

# ------------------------------------------------------------------------- the protocol
@runtime_checkable
class Likelihood(Protocol):
    """What the pursuit (:mod:`bpetopics.bpe.pursuit`) and the estimator
    (:class:`bpetopics.bpe.model.BPEBase`) call on a likelihood. Implementations are
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
        or written out where that is faster: :mod:`bpetopics.models.poissbpe.poisson`)."""

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


def dense_batch(X, device, dtype=torch.float32) -> DenseBatch:
    """Rows of X (dense or sparse) as a :class:`DenseBatch` on ``device``."""
    if sp.issparse(X):
        X = X.toarray()
    return DenseBatch(torch.as_tensor(np.asarray(X), dtype=dtype).to(device))
