"""Greedy pursuit that scores a shortlist of bits per step (dense data: images).

An exact greedy step scores every candidate z + e_j through the decoder: K decoder passes
per image and step, where a VAE makes one (docs/results/speed.md has the
epochs measured). Here a later step ranks the K candidates by a first-order estimate of
their gain and scores only the ``shortlist`` best exactly.

The estimate. With p = W1 z + b1 the first layer's pre-activation, h = a(p) its
activation and L(h) the data term as a function of h (the rest of the decoder and the
likelihood), switching bit j on moves p by w_j = W1[:, j] (``decoder.bit_columns[j]``), so

    L(z + e_j) - L(z)  ~=  g' (a(p + w_j) - a(p)),        g = dL/dh at z,

exact through the first activation and linear after it (a decoder without hidden layers:
g = dL/dout and a(p + w_j) - a(p) = w_j). One backward pass per image gives g; the
estimates of all K bits are one (A, K, H1) product, about H1 / (the decoder's work per
candidate) of scoring them exactly (256 / 532k at 256-512-784).

The step. The ``shortlist`` bits with the highest estimate plus log-odds (bits already on
excluded) are scored exactly; the best of them is taken when it raises the code's exact
score, as in the greedy pursuit. When none does (``exact_stop``), the image scores the next
bits of the same ranking, in lists that double (ranks m to 2m, 2m to 4m, ... while twice
the list is below K), takes the best found as soon as one gains, and gets the exact step
when none does, so it stops only where the greedy pursuit would: the step scores the
ranks not scored yet (Bernoulli: the screened step over all K, skipping those), since
the best of all K is among them when the scored ones gain nothing (the exact step over
all K up to float rounding, a third of its candidates at K = 200 after the lists); without
``exact_stop`` the image stops at once (fewer bits, faster). On a trained GaussBPE at
sigma 0.1 half the later steps found no gain in the first 32 bits although one existed,
mostly within the estimate's top 256; the doubling lists find it for a fraction of the
exact step's cost (docs/defaults.md has the figures). Every accepted bit raises the exact objective,
but a step may take another bit than the best: the codes are a model change, and docs/defaults.md's
image sections have the quality this gives against the exact pursuit. Step 1 stays exact
and shared (every image starts from the empty code:
:func:`bpetopics.models.images.dense_pursuit.dense_pursuit`).

No host synchronisation beyond the exact pursuit's per step, so it runs on a GPU as is.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from bpetopics.models.images.compiled import relu_moves
from bpetopics.models.images.dense_pursuit import DEFAULT_BUDGET, dense_pursuit, head, score_later_step
from bpetopics.bpe.likelihoods import DenseBatch


def shortlist_pursuit(decoder, likelihood, batch, log_odds, shortlist, max_bits=None,
                      budget=DEFAULT_BUDGET, return_score=False, exact_stop=True):
    """Codes for a dense batch, each later step scoring ``shortlist`` bits an image.

    Parameters
    ----------
    decoder : CodeDecoder
    likelihood : an image likelihood (``data_term`` and ``shared_term``)
    batch : DenseBatch
        P points, ``batch.x`` (P, D).
    log_odds : torch.Tensor, shape (K,)
    shortlist : int
        Bits scored exactly per image in each step after the first (>= 1).
    max_bits : int, optional
    budget : int
        Most float elements one pass may hold (images are taken in chunks).
    return_score : bool
    exact_stop : bool
        An image none of whose shortlisted bits raises its score scores the next bits of
        the ranking in doubling lists and then gets the exact step (over the bits not
        scored yet) before it stops, so it stops only where the greedy pursuit would (the last step then
        costs what an exact step costs). False: it stops at once.

    Returns
    -------
    codes : torch.BoolTensor, shape (P, K)
    score : torch.Tensor, shape (P,)  (only if ``return_score``): data term + log-odds
    """
    shortlist = min(int(shortlist), decoder.bit_columns.shape[0])

    def step(x, codes, log_odds, prior_score, floor):
        return _shortlist_step(decoder, likelihood, x, codes, log_odds, prior_score, floor,
                               shortlist, budget, exact_stop)

    return dense_pursuit(decoder, likelihood, batch, log_odds, max_bits, budget, return_score,
                         later_step=step)


def first_order_gain(decoder, likelihood, x, codes, pre=None, budget=DEFAULT_BUDGET):
    """The estimate of L(z + e_j) - L(z) for every image and bit (module docstring).

    x (A, D), codes (A, K) bool, pre (A, H1) the codes' first layer when already
    computed -> (A, K); ``budget``: most floats one chunk of the (A, K, H1) moves holds
    (where the compiled pass does not serve: a GPU, another activation)
    """
    bit_cols = decoder.bit_columns.detach()
    layers = list(decoder.head)
    if pre is None:
        with torch.no_grad():
            pre = decoder.first_layer(codes.float())                    # (A, H1)
    if not layers:                                                      # out = p
        with torch.enable_grad():
            p = pre.requires_grad_(True)
            g, = torch.autograd.grad(likelihood.data_term(p, DenseBatch(x)).sum(), p)
        return g @ bit_cols.t()
    activation, rest = layers[0], torch.nn.Sequential(*layers[1:])
    with torch.enable_grad():
        h = activation(pre).requires_grad_(True)
        g, = torch.autograd.grad(likelihood.data_term(rest(h), DenseBatch(x)).sum(), h)
    with torch.no_grad():
        if isinstance(activation, nn.ReLU) and relu_moves.available(x.device) \
                and pre.dtype == torch.float32:
            # one compiled pass: sum_h g_h relu(p_h + w_jh), less g'h
            gain = torch.empty(x.shape[0], bit_cols.shape[0])
            relu_moves.relu_moves(pre.contiguous().numpy(), g.contiguous().numpy(),
                        bit_cols.contiguous().numpy(), gain.numpy())
            return gain - torch.linalg.vecdot(g, h)[:, None]
        # a(p + w_j) - a(p), contracted with g: (A, K, H1) in chunks of images
        gain = torch.empty(x.shape[0], bit_cols.shape[0], device=x.device)
        per_image = bit_cols.numel()
        step = max(1, budget // per_image)
        for a0 in range(0, x.shape[0], step):
            a1 = min(a0 + step, x.shape[0])
            moved = activation(pre[a0:a1, None, :] + bit_cols) - h[a0:a1, None, :]
            gain[a0:a1] = torch.linalg.vecdot(moved, g[a0:a1, None, :])
        return gain


def _screens(likelihood, device) -> bool:
    """Whether the exact stop's step is the dense pursuit's screened one (a likelihood with
    a linear bound, Bernoulli, on the CPU). On a GPU the screening's distinct codes, blocks
    of codes and rounds each wait on the host, which made the dense pursuit several times
    slower there (docs/results/images.md): the GPU scores the bits left instead (not yet timed)."""
    return hasattr(likelihood, "linear_bound") and torch.device(device).type == "cpu"


def _score_picks(decoder, likelihood, x, pre, codes, picks, log_odds, prior_score, budget):
    """Exact scores (data + prior) of z_n + e_j for the bits ``picks`` (A, m): (A, m)."""
    m = picks.shape[1]
    widths = [layer.out_features for layer in decoder.head if hasattr(layer, "out_features")]
    step = max(1, budget // max(m * (pre.shape[1] + sum(widths)), 1))
    exact = torch.empty(picks.shape, device=x.device)
    for a0 in range(0, x.shape[0], step):
        a1 = min(a0 + step, x.shape[0])
        cand_pre = pre[a0:a1, None, :] + decoder.bit_columns[picks[a0:a1]]   # (a, m, H1)
        out = head(decoder, cand_pre.reshape(-1, pre.shape[1]))
        exact[a0:a1] = likelihood.data_term(out.view(a1 - a0, m, -1), DenseBatch(x[a0:a1]))
    exact += log_odds[picks] + prior_score[:, None]
    # a picked bit already on (fewer free bits than picks) must not win
    return exact.masked_fill_(codes.gather(1, picks), -torch.inf)


def _shortlist_step(decoder, likelihood, x, codes, log_odds, prior_score, floor, shortlist,
                    budget, exact_stop):
    """Scores (data + prior) of the shortlisted z_n + e_j, -inf elsewhere: (A, K); with
    ``exact_stop`` an image none of whose shortlisted bits beats ``floor`` (A,) scores the
    next bits of its estimate's ranking in doubling lists, then the exact step."""
    with torch.no_grad():
        pre = decoder.first_layer(codes.float())                        # (A, H1)
    estimate = first_order_gain(decoder, likelihood, x, codes, pre, budget) + log_odds
    with torch.no_grad():
        estimate.masked_fill_(codes, -torch.inf)                        # bits already on
        if exact_stop:   # the whole ranking: the stuck images go down it (ranks m..K)
            order = estimate.argsort(1, descending=True)                # (A, K)
            picks = order[:, :shortlist]
        else:
            picks = estimate.topk(shortlist, dim=1).indices             # (A, m)
        exact = _score_picks(decoder, likelihood, x, pre, codes, picks, log_odds, prior_score, budget)
        cand = torch.full(codes.shape, -torch.inf, device=x.device)
        cand.scatter_(1, picks, exact)
        if not exact_stop:
            return cand
        stuck = (exact.max(1).values <= floor).nonzero().squeeze(1)
        if not stuck.numel():
            return cand
        K, width, order = codes.shape[1], shortlist, order[stuck]
        while stuck.numel() and 2 * width < K:
            rows = order[:, width:2 * width]
            more = _score_picks(decoder, likelihood, x[stuck], pre[stuck], codes[stuck], rows,
                                log_odds, prior_score[stuck], budget)
            widened = cand[stuck].scatter_(1, rows, more)
            cand[stuck] = widened
            keep = widened.max(1).values <= floor[stuck]
            stuck, order, width = stuck[keep], order[keep], 2 * width
        if not stuck.numel() or width >= K:          # (a shortlist of every bit: all scored)
            return cand
        if _screens(likelihood, x.device):
            # Bernoulli on the CPU: the exact step over all K, whose bound screens most
            # candidates out; those scored already are not scored again
            scored = cand[stuck]
            later = score_later_step(decoder, likelihood, x[stuck], codes[stuck], log_odds,
                                     prior_score[stuck], floor[stuck], budget, known=scored > -torch.inf)
            cand[stuck] = torch.maximum(scored, later)
        else:
            # the exact step over the ranks not scored yet (width..K): those scored gain
            # nothing, so the step's best is among these, as over all K
            rest = order[:, width:]
            more = _score_picks(decoder, likelihood, x[stuck], pre[stuck], codes[stuck], rest,
                                log_odds, prior_score[stuck], budget)
            cand[stuck] = cand[stuck].scatter_(1, rest, more)
        return cand
