"""One greedy step's decision, shared by every batched pursuit (dense, padded, packed).

Each still-improving point takes its best candidate bit when that beats its current
score (docs/model.md, "Greedy pursuit": ``L(z + e_j*) > L(z)``, strictly), and its code, data
term and summed log-odds are updated in place.
"""

from __future__ import annotations

import torch


def accept_best(cand, active, codes, data, prior_score, log_odds, candidates=None):
    """Apply one step's best candidates.

    Parameters
    ----------
    cand : torch.Tensor, shape (A, C)
        Score of each active point with each candidate bit (data term + log-odds).
    active : torch.LongTensor, shape (A,)
        The points still improving.
    codes : torch.BoolTensor, shape (P, K); data, prior_score : torch.Tensor, shape (P,)
        Updated in place for the points that improve.
    log_odds : torch.Tensor, shape (K,)
    candidates : torch.LongTensor, shape (C,), optional
        The bit of each column of ``cand`` (default: column j is bit j).

    Returns
    -------
    (winners, bits) : torch.LongTensor, shape (A',) each, or None when no point improves.
    """
    new_best, arg = cand.max(dim=1)
    improved = new_best > data[active] + prior_score[active]
    if not improved.any():
        return None
    winners = active[improved]
    bits = arg[improved] if candidates is None else candidates[arg[improved]]
    codes[winners, bits] = True
    prior_score[winners] += log_odds[bits]
    data[winners] = new_best[improved] - prior_score[winners]
    return winners, bits


def distinct_codes(codes):
    """Distinct rows of a bool matrix (A, K) -> (C, K) and each row's index (A,).

    Up to 64 bits a code is one int64 key, sum_k z_k 2^k (bit 63 wraps to the sign: still
    one key per code), and a 1-D unique replaces the slower row-wise one.
    """
    n_bits = codes.shape[1]
    if n_bits > 64:
        return torch.unique(codes, dim=0, return_inverse=True)
    powers = torch.ones(n_bits, dtype=torch.long, device=codes.device) << torch.arange(
        n_bits, device=codes.device)
    keys = (codes.long() * powers).sum(1)
    uniq, inverse = torch.unique(keys, return_inverse=True)
    first = torch.empty_like(uniq).scatter_(0, inverse, torch.arange(
        keys.numel(), device=codes.device))                     # a row holding each key
    return codes[first], inverse
