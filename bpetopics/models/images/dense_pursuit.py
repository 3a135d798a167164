"""Greedy pursuit for dense data (images) by shared candidate tables.

The same greedy pursuit as :func:`bpetopics.bpe.pursuit.greedy_pursuit` (the codes are
the ones it defines, up to float summation order), organised around what images share.
A point's data term for a candidate code c depends on c only through the decoder's
output f(c) (D,), and for the image likelihoods it is a sum over pixels that splits into
a part shared by every image and one inner product with the image:

    Gaussian:   ff_c = f_c'f_c (shared),  fx_nc = x_n'f_c    (one matrix product)
    Bernoulli:  sum_d softplus(o_cd) (shared),  x_n'o_c      (one matrix product)

(``likelihood.shared_term(out (C, D), batch) -> (P, C)``), so:

* Step 1: every image starts from the empty code, so the K + 1 codes {0, e_1..e_K} are
  the same for the whole batch: the decoder runs K + 1 times (not P x K times) and the
  scores are one (P x D) @ (D x (K + 1)) product.
* Later steps: images with the same current code z share the candidates z + e_j: the
  decoder runs once per distinct code and bit (C x K, C <= A), and the images of a block
  of codes are scored against the block's candidates by one matrix product, each image
  keeping the K columns of its own code.
* Bernoulli, later steps: the last layer (H x D, three quarters of the decoder's work at
  the default widths) runs only for candidates that can still win. softplus is convex,
  so softplus(o) >= softplus(a) + sigmoid(a) (o - a) at the current code's outputs a,
  and with o = W h + b linear in the last hidden layer h,

      data(z + e_j) <= (W'(x - sigmoid(a)))' h_j + const_n      (an exact upper bound)

  costs H per candidate. Candidates are taken in order of their bound; one whose bound
  (plus its log-odds) is below the best exact score found is never evaluated: it cannot
  win, so the codes do not change.

The Python loop runs over pursuit steps, memory-bounded blocks of codes and screening
rounds, never over images or bits.
"""

from __future__ import annotations

import torch
from torch import nn

from bpetopics.bpe.greedy_step import accept_best, distinct_codes
from bpetopics.bpe.likelihoods import DenseBatch

# Largest number of float elements one candidate pass may hold (codes x bits x width).
DEFAULT_BUDGET = 1 << 22
# Most codes in one block: its images are scored against all its codes' candidates
# (a x b K products), so a block wastes (b - 1) / b of that small product.
MAX_BLOCK = 32
# Bernoulli screening: candidates evaluated exactly per image in the first round (doubled
# in each further round, so an image whose bound is loose needs few rounds).
SCREEN_ROUND = 4
# Margin (nats, relative to the bound's size) that covers float rounding of the bound.
BOUND_SLACK = 1e-3


def dense_pursuit(decoder, likelihood, batch, log_odds, max_bits=None, budget=DEFAULT_BUDGET,
                  return_score=False, later_step=None):
    """Codes for a dense batch; same arguments and results as
    :func:`bpetopics.bpe.pursuit.greedy_pursuit`.

    Parameters
    ----------
    batch : DenseBatch
        P points, ``batch.x`` (P, D).
    later_step : callable, optional
        ``later_step(x (A, D), codes (A, K), log_odds (K,), prior_score (A,), floor (A,))
        -> (A, K)`` scores of each active image's candidates in the steps after the first
        (-inf for those not scored); default: every candidate, exactly (:func:`score_later_step`).
        :mod:`bpetopics.models.images.shortlist_pursuit` passes its shortlisted step.

    Returns
    -------
    codes : torch.BoolTensor, shape (P, K)
    score : torch.Tensor, shape (P,)  (only if ``return_score``)
    """
    with torch.no_grad():
        x = batch.x
        bit_cols = decoder.bit_columns                                  # (K, H1)
        n_bits, device = bit_cols.shape[0], bit_cols.device
        log_odds = log_odds.to(device=device, dtype=torch.float32)
        max_steps = n_bits if max_bits is None else min(int(max_bits), n_bits)
        n_points = x.shape[0]

        # Step 1, shared: the outputs of 0, e_1..e_K, scored against every image at once.
        pre0 = decoder.first_layer(torch.zeros(1, n_bits, device=device))       # (1, H1)
        outs = head(decoder, torch.cat([pre0, pre0 + bit_cols]))                # (K + 1, D)
        scores = likelihood.shared_term(outs, batch)                            # (P, K + 1)

        codes = torch.zeros(n_points, n_bits, dtype=torch.bool, device=device)
        data = scores[:, 0].contiguous()                                # L of the empty code
        prior_score = torch.zeros(n_points, device=device)
        cand = scores[:, 1:] + log_odds                                 # (P, K)
        active = torch.arange(n_points, device=device)
        for step in range(max_steps):
            if active.numel() == 0:
                break
            if step > 0:
                floor = data[active] + prior_score[active]              # must beat this
                if later_step is None:
                    cand = score_later_step(decoder, likelihood, x[active], codes[active], log_odds,
                                            prior_score[active], floor, budget)
                else:
                    cand = later_step(x[active], codes[active], log_odds, prior_score[active], floor)
            step_taken = accept_best(cand, active, codes, data, prior_score, log_odds)
            if step_taken is None:
                break
            active = step_taken[0]
        if return_score:
            return codes, data + prior_score
        return codes


def head(decoder, pre, upto=None):
    """The decoder after its first layer, without autograd and in place where it can:
    (N, H1) -> (N, n_out); with ``upto=-1`` it stops before the last linear layer
    (the last hidden layer, (N, H_last))."""
    layers = list(decoder.head)
    if upto is not None:
        layers = layers[:upto]
    h = pre
    fresh = False                     # may h be overwritten? (not the caller's tensor)
    for layer in layers:
        if isinstance(layer, nn.Linear):
            h, fresh = torch.addmm(layer.bias, h, layer.weight.t()), True
        elif isinstance(layer, nn.ReLU) and fresh:
            h = h.relu_()
        else:
            h, fresh = layer(h), True
    return h


def score_later_step(decoder, likelihood, x, codes, log_odds, prior_score, floor, budget, known=None):
    """Scores (data + prior) of z_n + e_j for each active image n and bit j, (A, K);
    bits already in a code get -inf. Candidates that provably cannot beat ``floor`` (A,)
    or the image's best candidate may be left at -inf (Bernoulli screening), and so may
    those of ``known`` (A, K) bool, scored before and known not to beat ``floor`` (the
    screening scores none of them)."""
    n_bits = codes.shape[1]
    uniq, code_of = distinct_codes(codes)                          # (C, K), (A,)
    order = torch.argsort(code_of, stable=True)
    sorted_codes = code_of[order]
    widths = [layer.out_features for layer in decoder.head if isinstance(layer, nn.Linear)]
    per_code = n_bits * (decoder.bit_columns.shape[1] + sum(widths))   # floats per code
    block = max(1, min(MAX_BLOCK, budget // per_code))
    pre = decoder.first_layer(uniq.float())                         # (C, H1)
    cand = torch.empty(x.shape[0], n_bits, device=x.device)
    # screening needs a last linear layer after a hidden one (o = W h + b)
    screen = hasattr(likelihood, "linear_bound") and len(widths) >= 1
    for c0 in range(0, uniq.shape[0], block):
        c1 = min(c0 + block, uniq.shape[0])
        lo, hi = torch.searchsorted(sorted_codes, torch.tensor([c0, c1], device=x.device)).tolist()
        if hi == lo:
            continue
        rows = order[lo:hi]
        cand_pre = (pre[c0:c1, None, :] + decoder.bit_columns).reshape(-1, pre.shape[1])  # (bK, H1)
        local = sorted_codes[lo:hi] - c0                            # each image's code in the block
        if screen:
            cand[rows] = _screened(decoder, likelihood, x[rows], codes[rows], cand_pre, local,
                                   pre[c0:c1], log_odds, prior_score[rows], floor[rows],
                                   None if known is None else known[rows])
        else:
            out = head(decoder, cand_pre)                           # (bK, D)
            term = likelihood.shared_term(out, x[rows])             # (a, bK)
            own = term.view(len(rows), c1 - c0, n_bits)[torch.arange(len(rows)), local]
            cand[rows] = own + log_odds + prior_score[rows, None]
    return cand.masked_fill_(codes, -torch.inf)


def _screened(decoder, likelihood, x, codes, cand_pre, local, pre_own, log_odds, prior_score,
              floor, known=None):
    """The later step for the images of one block of codes when the likelihood has a
    linear upper bound (Bernoulli; module docstring): exact scores for every candidate
    that can still win, -inf for the others, (a, K).

    x (a, D); codes (a, K) the images' codes; cand_pre (bK, H1) the block's candidates;
    local (a,) each image's code in the block; pre_own (b, H1) the block's codes;
    log_odds (K,); prior_score, floor (a,) (a candidate must score above floor); known
    (a, K) bool or None: candidates already known not to beat floor, left at -inf.
    """
    last = decoder.head[-1]                                        # o = W h + b, W (D, H)
    n_bits = codes.shape[1]
    hidden = head(decoder, cand_pre, upto=-1)                       # (bK, H)
    n_img = x.shape[0]
    rows = torch.arange(n_img, device=x.device)
    current = head(decoder, pre_own)[local]                         # (a, D): o of z_n
    slope, const = likelihood.linear_bound(x, current)              # data(o) <= slope'o + const
    g = slope @ last.weight                                          # (a, H)
    const = const + slope @ last.bias                                # (a,)
    bound = (g @ hidden.t()).view(n_img, -1, n_bits)[rows, local]   # (a, K)
    bound += const[:, None] + log_odds + prior_score[:, None]
    bound += BOUND_SLACK * (1.0 + bound.abs())                      # float rounding
    bound.masked_fill_(codes, -torch.inf)                           # bits already on
    if known is not None:
        bound.masked_fill_(known, -torch.inf)
    exact = torch.full_like(bound, -torch.inf)
    best = floor.clone()                                            # to beat: the current score
    take = SCREEN_ROUND
    while True:
        open_ = bound >= best[:, None]                              # may still win
        if not open_.any():
            return exact
        picks = bound.masked_fill(~open_, -torch.inf).topk(min(take, n_bits), dim=1)
        take *= 2                                                   # few rounds, few wasted
        img, slot = (picks.values > -torch.inf).nonzero(as_tuple=True)
        bits = picks.indices[img, slot]
        out = torch.addmm(last.bias, hidden[local[img] * n_bits + bits], last.weight.t())
        score = likelihood.paired_term(out, x[img]) + log_odds[bits] + prior_score[img]
        exact[img, bits] = score
        bound[img, bits] = -torch.inf
        best = torch.maximum(best, exact.max(1).values)


def uses_dense_tables(batch, likelihood, device) -> bool:
    """Whether a batch goes to the dense pursuit's shared tables: dense batches of a
    likelihood that has them, on the CPU only. On a GPU the tables' bookkeeping (codes
    made distinct by ``torch.unique(dim=0)``, a loop over blocks of codes, screening rounds,
    each ending in a host synchronisation) costs more than the candidates it saves, several
    times this module's one pass per step (measured in docs/results/images.md)."""
    return (isinstance(batch, DenseBatch) and hasattr(likelihood, "shared_term")
            and torch.device(device).type == "cpu")
