"""Greedy pursuit for binary codes (the paper's Algorithm 1, made precise in docs/model.md).

For each point, starting from the empty code::

    Omega = {} ; best = L(z_Omega)
    repeat:
        j* = argmax_{j not in Omega} L(z_{Omega + j})
        if L(z_{Omega + j*}) > best:  Omega += j*, best = L(z_{Omega + j*})
        else: stop

with L(z) = data term + E_q[ln p(z | pi)]. Up to a constant shared by all codes,
E_q[ln p(z | pi)] = sum_k z_k (psi(a_k) - psi(b_k)), so the pursuit carries
``prior_score = sum_{k in Omega} log_odds_k`` and never needs the constant.

Everything is batched: one step scores every still-improving point against every
candidate bit in one tensor pass. The decoder's first layer is linear, so the
candidates' first layer is ``pre[:, None, :] + W1^T[None, :, :]`` (one broadcast add).
The Python loop runs over pursuit *steps* (at most the code's number of active bits),
never over points or bits.
"""

from __future__ import annotations

import numpy as np
import torch

from bpetopics.bpe.greedy_step import accept_best

# Largest number of float elements one candidate pass may hold (points x bits x width).
DEFAULT_BUDGET = 1 << 22
#: The same on a GPU (256 MiB of floats): at the CPU's budget an image minibatch of 128 is
#: cut into chunks of 19 points at K = 200 and of 4 at K = 800, each chunk a dozen kernel
#: launches and a gather, while the card has room for the whole minibatch in one pass.
CUDA_BUDGET = 1 << 26


def default_budget(device) -> int:
    """The candidate passes' memory budget (float elements) on ``device``."""
    return CUDA_BUDGET if torch.device(device).type == "cuda" else DEFAULT_BUDGET


def greedy_pursuit(decoder, likelihood, batch, log_odds, max_bits=None,
                   budget=None, return_score=False, params=None, shortlist=None,
                   exact_stop=True, mixture_entropy=0.0):
    """Codes for a batch of points by batched greedy pursuit.

    Parameters
    ----------
    decoder : CodeDecoder
        Gives ``first_layer``, ``bit_columns`` (K, H1) and ``forward_from_first``.
    likelihood : a likelihood from :mod:`bpetopics.bpe.likelihoods`
        Gives ``data_term(out, batch)`` and optionally ``data_upper_bound(batch)``.
    batch : PaddedCounts or DenseBatch
        The P points.
    log_odds : torch.Tensor, shape (K,)
        Score change for switching each bit on: psi(a_k) - psi(b_k), times the prior's
        weight during its ramp.
    max_bits : int, optional
        Cap on active bits per code.
    budget : int, optional
        Memory budget in float elements for one candidate pass; points are chunked.
        Default: :func:`default_budget` of the decoder's device.
    return_score : bool
        Also return each code's score (data term + sum of its bits' log-odds).
    params : optional
        ``likelihood.minibatch_params()`` when already computed (the topics beta).
    shortlist : int, optional
        Dense batches only: each step after the first scores exactly only this many bits
        an image, ranked by a first-order estimate of their gain
        (:func:`bpetopics.models.images.shortlist_pursuit.shortlist_pursuit`; a model change, not
        the exact greedy pursuit). None, or at least K: every bit.
    exact_stop : bool
        With a shortlist: an image whose shortlist gains nothing scores doubling lists of
        the next-ranked bits, then one exact step, before it stops (see ``shortlist_pursuit``).
    mixture_entropy : float
        PoissBPE's prior on its mixtures (``mixture_entropy``): a code scores epsilon L_n
        H(f(z)) more. Only a likelihood's own pursuit scores it (PoissBPE's packed
        batches); 0 elsewhere.

    A likelihood with an ``own_pursuit`` method pursues the batches it has tables for
    (the same pursuit, faster): PoissBPE's packed text batches by
    :func:`bpetopics.models.poissbpe.table_pursuit.table_pursuit`, the image models' dense
    batches on the CPU by :func:`bpetopics.models.images.dense_pursuit.dense_pursuit` or
    with a shortlist; it returns None for the others, which run here (padded batches,
    dense batches on a GPU).

    Returns
    -------
    codes : torch.BoolTensor, shape (P, K)
    score : torch.Tensor, shape (P,)  (only if ``return_score``)
    """
    if budget is None:
        budget = default_budget(decoder.bit_columns.device)
    own_pursuit = getattr(likelihood, "own_pursuit", None)
    if own_pursuit is not None:
        prior = {"mixture_entropy": mixture_entropy} if mixture_entropy else {}
        found = own_pursuit(decoder, batch, log_odds, max_bits, budget, return_score,
                            params=params, shortlist=shortlist, exact_stop=exact_stop, **prior)
        if found is not None:
            return found
    if mixture_entropy:
        raise ValueError("the mixtures' entropy prior is scored by PoissBPE's own pursuit of "
                         "packed batches only; pass the counts as a sparse matrix")
    with torch.no_grad():
        n_points = len(batch)
        bit_cols = decoder.bit_columns                      # (K, H1)
        n_bits = bit_cols.shape[0]
        device = bit_cols.device
        log_odds = log_odds.to(device=device, dtype=torch.float32)
        max_steps = n_bits if max_bits is None else min(int(max_bits), n_bits)

        codes = torch.zeros(n_points, n_bits, dtype=torch.bool, device=device)
        pre = decoder.first_layer(codes.float())            # (P, H1): the empty code
        data = likelihood.data_term(decoder.forward_from_first(pre), batch)  # (P,)
        prior_score = torch.zeros(n_points, device=device)
        bound = likelihood.data_upper_bound(batch)          # (P,) or None (Likelihood protocol)

        active = torch.arange(n_points, device=device)
        for _ in range(max_steps):
            if active.numel() == 0:
                break
            # Bits whose gain can never pay for their penalty, for any active point:
            # L(z + e_j) <= bound + prior_score + log_odds_j <= best  <=>  log_odds_j <= data - bound.
            candidates = torch.arange(n_bits, device=device)
            if bound is not None:
                slack = (data[active] - bound[active]).min()
                candidates = candidates[log_odds > slack]
            if candidates.numel() == 0:
                break
            cand_score = _score_candidates(decoder, likelihood, batch, pre, active,
                                           bit_cols[candidates], budget)      # (A, C)
            cand_score = cand_score + log_odds[candidates] + prior_score[active, None]
            cand_score = cand_score.masked_fill(codes[active][:, candidates], -torch.inf)
            step_taken = accept_best(cand_score, active, codes, data, prior_score, log_odds,
                                     candidates)
            if step_taken is None:
                break
            active, bits = step_taken
            pre[active] += bit_cols[bits]
        if return_score:
            return codes, data + prior_score
        return codes


def _score_candidates(decoder, likelihood, batch, pre, active, cand_cols, budget):
    """Data term of z + e_j for every active point and candidate bit.

    Points are sorted by length (non-zeros of a document) and cut into chunks that fit
    ``budget``, so that a chunk pads its rows only to its own longest row.

    pre (P, H1), active (A,), cand_cols (C, H1) -> (A, C)
    """
    n_cand, hidden = cand_cols.shape
    lengths = batch.lengths[active]
    order = torch.argsort(lengths, stable=True)
    sorted_len = lengths[order].cpu().numpy()
    bounds = _chunk_bounds(sorted_len, n_cand, hidden, budget)
    result = torch.empty(active.numel(), n_cand, device=pre.device)
    for begin, end in zip(bounds[:-1], bounds[1:]):
        pos = order[begin:end]
        idx = active[pos]
        cand_pre = pre[idx][:, None, :] + cand_cols[None, :, :]          # (a, C, H1)
        outputs = decoder.forward_from_first(cand_pre)                     # (a, C, D)
        result[pos] = likelihood.data_term(outputs, batch.take(idx))      # (a, C)
    return result


def _chunk_bounds(sorted_len, n_cand, hidden, budget):
    """Chunk boundaries over points sorted by length: a chunk of points [i, j) costs
    (j - i) * n_cand * (hidden + len[j-1]) elements, kept under ``budget``."""
    n = len(sorted_len)
    bounds = [0]
    while bounds[-1] < n:
        start = bounds[-1]
        cost = (np.arange(1, n - start + 1) * n_cand
                * (hidden + 64 + sorted_len[start:].astype(np.int64)))
        bounds.append(start + max(1, int(np.searchsorted(cost, budget, side="right"))))
    return bounds


def reference_pursuit(decoder, likelihood, batch, log_odds, max_bits=None):
    """The slow, obvious pursuit: one point at a time, one candidate bit at a time.

    Used by the tests (the batched pursuit must return exactly this) and by the
    benchmark (as the speed baseline). Same arguments as :func:`greedy_pursuit`.
    """
    with torch.no_grad():
        n_bits = decoder.bit_columns.shape[0]
        log_odds = log_odds.float()
        max_steps = n_bits if max_bits is None else min(int(max_bits), n_bits)
        codes = torch.zeros(len(batch), n_bits, dtype=torch.bool)

        def score(point, code):
            one = batch.take(torch.tensor([point]))
            data = likelihood.data_term(decoder(code.float()[None]), one)[0]
            return data + (log_odds * code.float()).sum()

        for n in range(len(batch)):
            code = torch.zeros(n_bits, dtype=torch.bool)
            best = score(n, code)
            for _ in range(max_steps):
                best_j, best_val = None, best
                for j in range(n_bits):
                    if code[j]:
                        continue
                    trial = code.clone()
                    trial[j] = True
                    val = score(n, trial)
                    if val > best_val:
                        best_j, best_val = j, val
                if best_j is None:
                    break
                code[best_j], best = True, best_val
            codes[n] = code
        return codes
