"""The processes that share each training step: one by default, P in a data-parallel run.

A training step (:meth:`bpetopics.core.model.BPEBase._train_step`) pursues the codes of
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

So a shared step sums one float64 vector of totals across the processes before the loss
(:func:`shared_step`), and the gradients after ``backward``; every process then takes
the same Adam step and keeps the same theta. :class:`LocalGroup` (one process) sums
nothing and keeps the single-process step exactly as it was; the torch.distributed group
lives in ``runs/distributed.py``, so core knows only this protocol.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import torch

from bpetopics.core.batches import BatchSource, InMemoryBatches, RowStore


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

    def sum_gradients(self, parameters) -> None:
        """Sum the ``.grad`` of each parameter over the processes (None counts as 0)."""


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
    def sum_gradients(parameters) -> None:
        return None


LOCAL = LocalGroup()


def shared_step(model, codes: torch.Tensor, score: torch.Tensor, out: torch.Tensor, batch, params):
    """The q(pi) step and the theta loss of a step that ``model.step_group`` shares.

    Sums across the processes, in one float64 vector: the prior's statistics of the codes
    (K bit counts and |S_p|), the theta loss's normaliser c_{S_p}, the scores and the
    active bits, and what the theta penalty reads (``model._penalty_statistics``, e.g.
    (T,) summed mixtures). Then applies q(pi)'s step to the summed statistics and returns
    ``(loss, (score, bits))``: this process's part of the loss of S (its gradients summed
    over the processes are those of S) and the summed score and bits of S.

    Parameters
    ----------
    codes : torch.Tensor, shape (|S_p|, K)
    score : torch.Tensor, shape (|S_p|,)
    out : torch.Tensor, shape (|S_p|, n_out)
        The decoder's outputs at the codes (with autograd).
    batch, params
        The likelihood's batch of the share and the step's ``minibatch_params()``.
    """
    group, prior, likelihood = model.step_group, model.prior_, model.likelihood_
    stats = prior.statistics(codes)
    usage = model._penalty_statistics(out)
    dtype, device = stats.on.dtype, stats.on.device
    scalars = torch.stack([torch.as_tensor(float(v), dtype=dtype) for v in (
        stats.n_codes, float(likelihood.theta_normaliser(batch)), float(score.sum()), float(codes.sum()))])
    parts = [stats.on, scalars.to(device)]
    if usage is not None:
        parts.append(usage.detach().to(device=device, dtype=dtype))
    totals = group.sum_(torch.cat(parts))
    n_bits = stats.on.shape[0]
    on, (n_codes, normaliser, total_score, total_bits) = totals[:n_bits], totals[n_bits:n_bits + 4].tolist()
    stats.on, stats.n_codes = on, int(round(n_codes))
    prior.apply(stats)
    loss = likelihood.theta_loss(out, batch, params, normaliser=max(normaliser, 1.0))
    if group.rank == 0:
        mean_usage = None if usage is None else (totals[n_bits + 4:] / max(n_codes, 1.0)).to(out.dtype)
        loss = loss + model._theta_penalty(out, params, usage=mean_usage)
    return loss, (total_score, total_bits)
