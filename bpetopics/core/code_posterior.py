"""The posterior over codes near a pursued code, and the mixture it predicts.

Greedy pursuit returns one code z per point, the best it finds. The model's posterior
over codes,

    p(z' | x)  propto  exp L(z'),    L(z') = data term + sum_k z'_k (psi(a_k) - psi(b_k)),

(L the pursuit's score, MODEL.md) is not concentrated on z when a document is short or
could belong to several topics: on 20 Newsgroups' held-out halves z holds about a third of
the mass of its one-bit neighbourhood. Predicting with f(z) alone throws that away.

``local_posterior`` restricts the posterior to z and its K one-bit neighbours z xor e_j
(the codes one pursuit step away: adding a bit, or dropping one of z's), normalised over
those K + 1 codes, and ``local_mean`` is the posterior mean of the decoder's link output,

    E[f(z') | x]  ~=  sum_{c in {z, z xor e_1, .., z xor e_K}} q(c) f(c),  q(c) propto exp L(c).

``soft_codes`` keeps the few most probable of those codes for training (PoissBPE's
``soft_codes``: the theta step then averages the data term over them, a soft E-step).

Scoring the K neighbours costs what one pursuit step over every bit does. Neighbours
with more than ``max_bits`` bits are left out, as the pursuit never reaches them.
"""

from __future__ import annotations

import numpy as np
import torch

from bpetopics.core import fused_posterior

#: Largest number of float elements one pass may hold (non-zeros x (K + 1) x outputs).
DEFAULT_BUDGET = 1 << 24


def neighbour_codes(codes: torch.Tensor) -> torch.Tensor:
    """The code and its one-bit neighbours: (P, K) bool -> (P, K + 1, K) bool, slot 0 the
    code itself and slot j + 1 the code with bit j flipped."""
    n_points, n_bits = codes.shape
    flips = torch.eye(n_bits, dtype=torch.bool, device=codes.device)
    return torch.cat([codes[:, None, :], codes[:, None, :] ^ flips[None]], dim=1)


def local_posterior(decoder, likelihood, batch, codes, log_odds, max_bits=None, params=None):
    """q over each point's code and its one-bit neighbours (module docstring).

    Parameters
    ----------
    decoder, likelihood, batch, log_odds, params
        As for :func:`bpetopics.core.pursuit.greedy_pursuit` (``batch`` holds P points).
    codes : torch.BoolTensor, shape (P, K)
        The pursued codes.
    max_bits : int, optional
        Neighbours with more bits get no mass.

    Returns
    -------
    weights : torch.Tensor, shape (P, K + 1)
        q(c), each row summing to 1; column 0 the code itself.
    outputs : torch.Tensor, shape (P, K + 1, n_out)
        The decoder's outputs at those codes.
    """
    with torch.no_grad():
        z = codes.float()
        # flipping bit j adds (1 - 2 z_j) times its column to the linear first layer,
        # its log-odds to the prior's score and one bit to the count
        sign = 1.0 - 2.0 * z                                            # (P, K)
        pre = decoder.first_layer(z)                                    # (P, H1)
        pre_near = torch.cat([pre[:, None, :], pre[:, None, :] + sign[..., None] * decoder.bit_columns],
                             dim=1)                                     # (P, K + 1, H1)
        outputs = decoder.forward_from_first(pre_near)                  # (P, K + 1, n_out)
        if params is None:
            score = likelihood.data_term(outputs, batch)                # (P, K + 1)
        else:
            score = likelihood.data_term(outputs, batch, params)
        log_odds = log_odds.to(z)
        prior = z @ log_odds                                            # (P,)
        score = score + torch.cat([prior[:, None], prior[:, None] + sign * log_odds], dim=1)
        if max_bits is not None:
            bits = z.sum(1, keepdim=True)
            score = score.masked_fill(torch.cat([bits, bits + sign], dim=1) > max_bits, -torch.inf)
        return torch.softmax(score, dim=1), outputs


def local_mean(decoder, likelihood, batch, codes, log_odds, max_bits=None, params=None,
               budget=DEFAULT_BUDGET) -> torch.Tensor:
    """sum_c q(c) link(decoder(c)) over each point's code and its one-bit neighbours,
    (P, n_out); the points are taken in groups whose candidate pass fits ``budget``.
    PoissBPE's packed batches with a linear decoder on the CPU go to the compiled
    :func:`bpetopics.core.fused_posterior.local_mean` (the same quantity)."""
    if params is None and fused_posterior.usable(decoder, likelihood, batch):
        return fused_posterior.local_mean(decoder, likelihood, batch, codes, log_odds, max_bits)
    n_points, n_bits = codes.shape
    n_out = decoder(codes[:1].float()).shape[-1]
    if n_points == 0:
        return torch.zeros(0, n_out, device=codes.device)
    cap = max(1, budget // ((n_bits + 1) * n_out))                 # non-zeros a group
    ends = torch.cumsum(batch.lengths, 0).cpu().numpy()
    result, begin = [], 0
    while begin < n_points:                       # a loop over groups of points
        before = ends[begin - 1] if begin else 0
        end = max(begin + 1, int(np.searchsorted(ends, before + cap, side="right")))
        idx = torch.arange(begin, end, device=codes.device)
        weights, outputs = local_posterior(decoder, likelihood, batch.take(idx), codes[begin:end],
                                           log_odds, max_bits, params)
        with torch.no_grad():
            result.append(torch.einsum("pc,pcd->pd", weights, likelihood.link(outputs)))
        begin = end
    return torch.cat(result)


def soft_codes(decoder, likelihood, batch, codes, log_odds, n_codes, max_bits=None, params=None):
    """The ``n_codes`` most probable codes of each point under :func:`local_posterior`,
    with their weights renormalised: a soft E-step's codes for the theta step, which then
    fits sum_c w_c data(f(c)) over them instead of data(f(z)) at the pursued code alone.

    Returns
    -------
    near : torch.BoolTensor, shape (P, n_codes, K)
    weights : torch.Tensor, shape (P, n_codes), rows summing to 1
    """
    weights, _ = local_posterior(decoder, likelihood, batch, codes, log_odds, max_bits, params)
    top = weights.topk(min(int(n_codes), weights.shape[1]), dim=1)
    near = neighbour_codes(codes)[torch.arange(codes.shape[0], device=codes.device)[:, None], top.indices]
    return near, top.values / top.values.sum(1, keepdim=True)
