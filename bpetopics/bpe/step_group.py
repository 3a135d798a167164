"""The processes that share each training step: one by default, P in a data-parallel run.

A training step (:meth:`bpetopics.bpe.model.BPEBase._train_step`) pursues the codes of
a minibatch S, steps q(pi) from their statistics and takes one Adam step on theta. In a
data-parallel run (:mod:`bpetopics.runs.distributed`, torch.distributed) each of P
processes pursues its share S_p of the *global* minibatch S (the minibatch one process
would take), and the step must be the one a single process takes on S::

    q(pi):    statistics(z_S) = sum_p statistics(z_{S_p})          (counts add up)
    theta:    loss_S = sum_{n in S} l_n / c_S                       (c_S: the tokens of S
              for text, its points for images), so
              grad loss_S = sum_p grad( sum_{n in S_p} l_n / c_S )  with c_S summed first
    penalty:  a prior on theta that reads the minibatch (PoissBPE's diversity prior reads
              u = mean_{n in S} f(z_n)) gets u summed then divided; its gradient is
              added once, by process 0

So a shared step sums, across the processes, one vector: the gradients of each share's
*summed* loss and the step's totals (:func:`sum_shares`); every process then takes the
same update (:meth:`~bpetopics.bpe.model.BPEBase._shared_update`: q(pi)'s step, the
penalty's gradient, Adam) and keeps the same theta. :class:`LocalGroup` (one process) sums
nothing and keeps the single-process step exactly as it was; the torch.distributed group
lives in ``runs/distributed.py``, so core knows only this protocol.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import torch

from bpetopics.bpe.batches import BatchSource, InMemoryBatches, RowStore
from bpetopics.bpe.prior import CodeStatistics


@runtime_checkable
class StepGroup(Protocol):
    """The processes sharing each training step.

    Attributes
    ----------
    rank : int
        This process's number, 0 .. size - 1 (0 writes checkpoints and the run).
    size : int
        P, the number of processes.
    """

    rank: int
    size: int

    def batches(self, X, batch_size: int, seed: int, epoch: int) -> BatchSource:
        """This process's share of each minibatch of the epoch; ``n_samples`` is the
        number of rows all processes together see (the totals a step returns are global)."""

    def sum_(self, tensor: torch.Tensor) -> torch.Tensor:
        """Sum ``tensor`` over the processes, in place; returns it."""

    def encoding_rows(self) -> slice:
        """The positions, in an encoding order, of the rows this process encodes (every
        row is encoded by one process; ``sum_`` then assembles the codes)."""


class LocalGroup:
    """One process: the whole minibatch, nothing to sum."""

    rank = 0
    size = 1

    @staticmethod
    def batches(X, batch_size: int, seed: int, epoch: int) -> BatchSource:
        """The matrix's own batch source for a RowStore, else :class:`InMemoryBatches`."""
        if isinstance(X, RowStore):
            return X.batch_source(batch_size, seed, epoch)
        return InMemoryBatches(X, batch_size, seed, epoch)

    @staticmethod
    def sum_(tensor: torch.Tensor) -> torch.Tensor:
        return tensor

    @staticmethod
    def encoding_rows() -> slice:
        return slice(None)


LOCAL = LocalGroup()


@dataclass
class StepSums:
    """What the processes sharing a step summed (:func:`sum_shares`), for the update
    that every process then takes alike.

    Attributes
    ----------
    statistics : CodeStatistics
        q(pi)'s statistics of z_S (bit counts and |S|).
    mean_usage : torch.Tensor or None
        What the theta penalty reads, averaged over S (PoissBPE: u, the (T,) mean
        mixture); None when the penalty reads nothing.
    score, bits : float
        The summed scores and active bits of S.
    """

    statistics: CodeStatistics
    mean_usage: torch.Tensor | None
    score: float
    bits: float


def sum_shares(model, codes: torch.Tensor, score: torch.Tensor, usage: torch.Tensor | None, batch) -> StepSums:
    """The sums of a step that ``model.step_group`` shares, with one sum across the
    processes; theta's gradients left as those of loss_S.

    Each process has backpropagated the *sum* of its share's theta loss,
    sum_{n in S_p} l_n; this sums, in one vector, those gradients, the prior's
    statistics of its codes (K bit counts and |S_p|), the loss's normaliser c_{S_p}, its
    scores and active bits, and what the theta penalty reads (``usage``). The summed
    gradients over c_S are those of loss_S (left in ``.grad``); the rest is returned for
    the update (:meth:`bpetopics.bpe.training_step.TrainingStep._shared_update`).

    Parameters
    ----------
    codes : torch.Tensor, shape (|S_p|, K)
    score : torch.Tensor, shape (|S_p|,)
    usage : torch.Tensor or None
        What the theta penalty reads of the share (``model._penalty_statistics``, e.g.
        PoissBPE's summed mixtures sum_{n in S_p} f(z_n), shape (T,)), or None.
    batch
        The likelihood's batch of the share.
    """
    group, prior, likelihood = model.step_group, model.prior_, model.likelihood_
    parameters = model._parameters()
    dtype = parameters[0].dtype
    stats = prior.statistics(codes)
    device = stats.on.device
    scalars = torch.stack([torch.as_tensor(v, dtype=dtype, device=device).reshape(()) for v in (  # no sync
        float(stats.n_codes), likelihood.theta_normaliser(batch), score.sum(), codes.sum())])
    parts = [p.grad.reshape(-1) if p.grad is not None else torch.zeros(p.numel(), dtype=dtype, device=p.device)
             for p in parameters]
    parts += [stats.on.to(dtype), scalars]
    if usage is not None:
        parts.append(usage.detach().to(dtype))
    totals = group.sum_(torch.cat(parts))
    begin = sum(p.numel() for p in parameters)
    n_bits = stats.on.shape[0]
    n_codes, normaliser, total_score, total_bits = totals[begin + n_bits:begin + n_bits + 4].tolist()
    scale = 1.0 / max(normaliser, 1.0)
    offset = 0
    for p in parameters:                 # grad loss_S = (sum of the shares' gradients) / c_S
        p.grad = totals[offset:offset + p.numel()].view_as(p) * scale
        offset += p.numel()
    stats.on = totals[begin:begin + n_bits].to(stats.on.dtype)
    stats.n_codes = int(round(n_codes))
    mean_usage = None if usage is None else totals[begin + n_bits + 4:] / max(n_codes, 1.0)  # u = sum / |S|
    return StepSums(stats, mean_usage, total_score, total_bits)
