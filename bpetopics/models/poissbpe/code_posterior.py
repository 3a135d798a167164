"""The posterior over codes near a pursued code, and the mixture it predicts.

Greedy pursuit returns one code z per point, the best it finds. The model's posterior
over codes,

    p(z' | x)  propto  exp L(z'),    L(z') = data term + sum_k z'_k (psi(a_k) - psi(b_k)),

(L the pursuit's score, docs/model.md, without the prior for spread mixtures' term:
docs/defaults.md, "The posterior over nearby codes", says why) is not concentrated on z
when a document is short or could belong to several topics: on 20 Newsgroups' held-out
halves z holds about a third of the mass of its one-bit neighbourhood. Predicting with
f(z) alone throws that away.

``local_posterior`` restricts the posterior to z and its K one-bit neighbours z xor e_j
(the codes one pursuit step away: adding a bit, or dropping one of z's), normalised over
those K + 1 codes. ``local_mean`` is the posterior mean of the decoder's link output over
those codes and the M (M - 1) / 2 codes z xor e_a xor e_b that flip two of the M most
probable single flips (M = ``PAIR_FLIPS``, ties to the lower bit),

    E[f(z') | x]  ~=  sum_{c in N(z)} q(c) f(c),   q(c) propto exp L(c),

N(z) = {z, z xor e_1, .., z xor e_K} and those pairs: where a document's mass spreads
over two flips, the code with both is probable too.

``soft_codes`` keeps the few most probable of those codes for training (PoissBPE's
``soft_codes``: the theta step then averages the data term over them, a soft E-step).

Scoring the K neighbours costs what one pursuit step over every bit does (the pairs add
M (M - 1) / 2 codes). Codes with more than ``max_bits`` bits are left out, as the pursuit
never reaches them.
"""

from __future__ import annotations

import numpy as np
import torch

from bpetopics.models.poissbpe.compiled import fused_posterior

#: Largest number of float elements one pass may hold (non-zeros x (K + 1) x outputs).
DEFAULT_BUDGET = 1 << 24
#: local_mean also weighs the codes that flip two of the PAIR_FLIPS most probable single
#: flips (120 more codes for 16; 28 for 8, 0 for none): each widening lowered completion
#: perplexity (docs/defaults.md, "The posterior over nearby codes").
PAIR_FLIPS = 16


def neighbour_codes(codes: torch.Tensor) -> torch.Tensor:
    """The code and its one-bit neighbours: (P, K) bool -> (P, K + 1, K) bool, slot 0 the
    code itself and slot j + 1 the code with bit j flipped."""
    n_points, n_bits = codes.shape
    flips = torch.eye(n_bits, dtype=torch.bool, device=codes.device)
    return torch.cat([codes[:, None, :], codes[:, None, :] ^ flips[None]], dim=1)


def _local_scores(decoder, likelihood, batch, codes, log_odds, max_bits=None, params=None):
    """L over each point's code and its one-bit neighbours (-inf beyond max_bits), and the
    decoder's outputs there: :func:`local_posterior` before its softmax.

    Parameters
    ----------
    decoder, likelihood, batch, log_odds, params
        As for :func:`bpetopics.bpe.pursuit.greedy_pursuit` (``batch`` holds P points).
    codes : torch.BoolTensor, shape (P, K)
        The pursued codes.
    max_bits : int, optional
        Neighbours with more bits get no mass.

    Returns
    -------
    score : torch.Tensor, shape (P, K + 1)
        L(c); column 0 the code itself.
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
        return score, outputs


def local_posterior(decoder, likelihood, batch, codes, log_odds, max_bits=None, params=None):
    """q over each point's code and its one-bit neighbours (module docstring): weights
    (P, K + 1), rows summing to 1, column 0 the code itself; outputs (P, K + 1, n_out), the
    decoder's outputs at those codes. Arguments as :func:`_local_scores`."""
    score, outputs = _local_scores(decoder, likelihood, batch, codes, log_odds, max_bits, params)
    return torch.softmax(score, dim=1), outputs


def pair_flips(n_flips: int) -> tuple[list, list]:
    """The pairs (a, b), a < b, of ``n_flips`` ranked flips: two index lists of
    n_flips (n_flips - 1) / 2 entries each, in a fixed order (the compiled path's)."""
    first, second = [], []
    for a in range(n_flips):
        for b in range(a + 1, n_flips):
            first.append(a)
            second.append(b)
    return first, second


def _pair_scores(decoder, likelihood, batch, codes, log_odds, score, max_bits, params, n_flips):
    """L and the outputs of the codes that flip two of each point's ``n_flips`` best single
    flips (by ``score``, the one-bit neighbours' L from :func:`_local_scores`): (P, C2) and
    (P, C2, n_out), C2 = n_flips (n_flips - 1) / 2."""
    with torch.no_grad():
        z = codes.float()
        n_flips = min(int(n_flips), codes.shape[1])
        # the best flips, ties (-inf beyond max_bits too) to the lower bit, as compiled
        top = torch.sort(score[:, 1:], dim=1, descending=True, stable=True).indices[:, :n_flips]
        first, second = pair_flips(n_flips)
        i, j = top[:, first], top[:, second]                                        # (P, C2)
        sign = 1.0 - 2.0 * z                                                        # (P, K)
        s_i, s_j = sign.gather(1, i), sign.gather(1, j)
        cols = decoder.bit_columns                                                  # (K, H1)
        pre = decoder.first_layer(z)[:, None, :] + s_i[..., None] * cols[i] + s_j[..., None] * cols[j]
        outputs = decoder.forward_from_first(pre)                                   # (P, C2, n_out)
        pair = (likelihood.data_term(outputs, batch) if params is None
                else likelihood.data_term(outputs, batch, params))
        log_odds = log_odds.to(z)
        pair = pair + (z @ log_odds)[:, None] + s_i * log_odds[i] + s_j * log_odds[j]
        if max_bits is not None:
            pair = pair.masked_fill(z.sum(1, keepdim=True) + s_i + s_j > max_bits, -torch.inf)
        return pair, outputs


def local_mean(decoder, likelihood, batch, codes, log_odds, max_bits=None, params=None,
               budget=DEFAULT_BUDGET, n_flips=PAIR_FLIPS) -> torch.Tensor:
    """sum_c q(c) link(decoder(c)) over each point's code, its one-bit neighbours and the
    codes flipping two of its ``n_flips`` best single flips (none below 2), (P, n_out);
    the points are taken in groups whose candidate pass fits ``budget``.
    PoissBPE's packed batches with a linear decoder on the CPU go to the compiled
    :func:`bpetopics.models.poissbpe.compiled.fused_posterior.local_mean` (the same quantity)."""
    if params is None and fused_posterior.usable(decoder, likelihood, batch):
        return fused_posterior.local_mean(decoder, likelihood, batch, codes, log_odds, max_bits,
                                          n_flips=n_flips)
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
        part = batch.take(idx)
        score, outputs = _local_scores(decoder, likelihood, part, codes[begin:end], log_odds,
                                       max_bits, params)
        if n_flips >= 2:                          # and the pairs of the best flips
            pair, pair_out = _pair_scores(decoder, likelihood, part, codes[begin:end], log_odds,
                                          score, max_bits, params, n_flips)
            score, outputs = torch.cat([score, pair], 1), torch.cat([outputs, pair_out], 1)
        with torch.no_grad():
            weights = torch.softmax(score, dim=1)
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
