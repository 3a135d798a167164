"""The posterior mean mixture of :mod:`bpetopics.models.poissbpe.code_posterior`, compiled: PoissBPE
with a linear decoder on the CPU.

For each document, its pursued code z and the K codes one bit away (z xor e_j) get the
mixtures

    f(z xor e_j) = softmax(a + s_j w_j),   a = b + sum_(k in z) w_k,   s_j = 1 - 2 z_j,

their scores L(c) = sum_i x_i ln max([beta f(c)]_(w_i), 1e-30) + sum_k c_k (psi(a_k) -
psi(b_k)) (the pursuit's objective); then the codes flipping two of the M best single
flips get theirs (softmax(a + s_a w_a + s_b w_b)), and the prediction is sum_c q(c) f(c)
with q(c) propto exp L(c) over all those codes (codes with more than ``max_bits`` bits
get none). The same quantity as :func:`bpetopics.models.poissbpe.code_posterior.local_mean`, in one
compiled pass over each document's real non-zeros, like the fused pursuit's later steps
(:mod:`bpetopics.models.poissbpe.compiled.fused_pursuit`): scoring the K + 1 codes costs one pursuit step
over every bit. The torch path (padded rows, a batched product per document) did the
same work at a fraction of the speed (docs/defaults.md has the figures).
"""

from __future__ import annotations

import numpy as np
import torch

from bpetopics.bpe.threads import kernel_threads
from bpetopics.models.poissbpe.compiled import fused_pursuit, kernels
from bpetopics.models.poissbpe.packed import PackedCounts

numba = kernels.numba

#: The columns (codes) are padded to a multiple of this (the compiled loops over them run
#: 16 lanes at a time).
PAD = 16


def usable(decoder, likelihood, batch) -> bool:
    """Whether :func:`local_mean` serves this case: numba, CPU, a linear decoder, topics
    (a likelihood with ``topic_word``) and a packed batch."""
    return (isinstance(batch, PackedCounts) and hasattr(likelihood, "topic_word")
            and fused_pursuit.usable(decoder, batch.cols.device))


def local_mean(decoder, likelihood, batch: PackedCounts, codes: torch.Tensor,
               log_odds: torch.Tensor, max_bits=None, threads=None, n_flips=8) -> torch.Tensor:
    """sum_c q(c) f(c) over each document's code, its one-bit neighbours and the codes that
    flip two of its ``n_flips`` best single flips (as
    :func:`bpetopics.models.poissbpe.code_posterior.local_mean`).

    Parameters
    ----------
    decoder : CodeDecoder
        Linear: its bit columns W^T (K, T) and bias b (T,).
    likelihood : PoissonLikelihood
        Gives the topics beta (W, T).
    batch : PackedCounts
        P documents, columns in the full vocabulary.
    codes : torch.BoolTensor, shape (P, K)
    log_odds : torch.Tensor, shape (K,)
    max_bits : int, optional
    threads : int, optional
        Default: :func:`bpetopics.bpe.threads.kernel_threads`.
    n_flips : int
        Pairs of the best n_flips single flips join the neighbourhood (0 or 1: none).

    Returns
    -------
    torch.Tensor, shape (P, T), rows summing to 1
    """
    with torch.no_grad():
        bit_w = decoder.bit_columns.detach().float().contiguous()            # (K, T)
        n_bits, n_topics = bit_w.shape
        # r+_jt = exp(w_jt - max_t w_jt), r-_jt = exp(min_t w_jt - w_jt): the factors of
        # softmax(a + w_j) and softmax(a - w_j), topic by topic
        up = torch.exp(bit_w - bit_w.max(dim=1, keepdim=True).values).t().contiguous()
        down = torch.exp(bit_w.min(dim=1, keepdim=True).values - bit_w).t().contiguous()
        beta = likelihood.topic_word().detach().float().contiguous()        # (W, T)
        out = torch.zeros(len(batch), n_topics)
        if len(batch) == 0:
            return out
        args = (batch.indptr.numpy(), batch.cols.numpy(), batch.vals.float().numpy(),
                beta.numpy(), bit_w.numpy(), up.numpy(), down.numpy(),
                decoder.first.bias.detach().float().contiguous().numpy(),
                log_odds.float().contiguous().numpy(), codes.contiguous().numpy().view(np.uint8),
                -1 if max_bits is None else int(max_bits),
                min(int(n_flips), n_bits) if n_flips >= 2 else 0, out.numpy())
        threads = kernel_threads() if threads is None else int(threads)
        work = batch.cols.shape[0] * (n_bits + 1) * n_topics
        threads = 1 if work < fused_pursuit.MIN_PARALLEL_WORK else max(1, min(threads, len(batch)))
        order, bounds = fused_pursuit.thread_slots(np.diff(args[0]), threads)
        slots = [order[bounds[s]:bounds[s + 1]] for s in range(threads)]
        others = [fused_pursuit.thread_pool(threads - 1).submit(_local_mean, *args, docs)
                  for docs in slots[1:]]
        _local_mean(*args, slots[0])
        for other in others:
            other.result()
        return out


if numba is not None:
    from numba import njit

    from bpetopics.compiled.kernel_cache import cached_njit
    from bpetopics.models.poissbpe.compiled.pursuit_loops import factored_softmax, score_candidates

    def _local_mean_py(indptr, cols, vals, beta, bit_w, up, down, bias, log_odds, codes,
                       max_bits, n_flips, out, docs):  # pragma: no cover - compiled
        """out[d] = sum_c q(c) f(c) for the documents ``docs`` (the module's formula).

        indptr (P+1,), cols (nnz,) words, vals (nnz,) float32; beta (W, T); bit_w (K, T);
        up, down (T, K): exp(w_jt - max_t w_jt) and exp(min_t w_jt - w_jt); bias (T,);
        log_odds (K,); codes (P, K) uint8; max_bits (-1: none); n_flips (0: no pairs);
        out (P, T) float32."""
        n_bits, n_topics = bit_w.shape
        width = n_bits + 1                                      # column 0: the code itself
        padded = -(-width // PAD) * PAD
        longest = 0
        for q in range(docs.shape[0]):
            longest = max(longest, indptr[docs[q] + 1] - indptr[docs[q]])
        factor = np.empty((n_topics, padded), dtype=np.float32)  # r^(s_c)_(j_c t)
        mix = np.empty((n_topics, padded), dtype=np.float32)     # f(c)_t, column c
        totals = np.empty(padded, dtype=np.float32)
        inverse = np.empty(padded, dtype=np.float32)
        phi = np.empty(longest * padded, dtype=np.float32)
        scratch = np.empty(longest * padded, dtype=np.float32)
        score = np.empty(padded, dtype=np.float32)
        n_pairs = n_flips * (n_flips - 1) // 2
        pair_padded = max(PAD, -(-n_pairs // PAD) * PAD)
        pair_mix = np.empty((n_topics, pair_padded), dtype=np.float32)   # f(c)_t of the pairs
        pair_phi = np.empty(longest * pair_padded, dtype=np.float32)
        pair_scratch = np.empty(longest * pair_padded, dtype=np.float32)
        pair_score = np.empty(pair_padded, dtype=np.float32)
        best_flips = np.empty(max(n_flips, 1), dtype=np.int64)
        weight = np.empty(width + n_pairs, dtype=np.float64)
        pre = np.empty(n_topics, dtype=np.float32)
        exp_pre = np.empty(n_topics, dtype=np.float32)
        for q in range(docs.shape[0]):
            d = docs[q]
            prior, bits = np.float32(0.0), 0
            for t in range(n_topics):
                pre[t] = bias[t]
            for k in range(n_bits):                             # a = b + sum_(k in z) w_k
                if codes[d, k]:
                    prior += log_odds[k]
                    bits += 1
                    for t in range(n_topics):
                        pre[t] += bit_w[k, t]
            top = pre.max()
            for t in range(n_topics):
                exp_pre[t] = np.exp(pre[t] - top)
            for t in range(n_topics):                           # flip j: up if off, down if on
                factor[t, 0] = 1.0
                for j in range(n_bits):
                    factor[t, j + 1] = down[t, j] if codes[d, j] else up[t, j]
                for c in range(width, padded):
                    factor[t, c] = 0.0
            factored_softmax(exp_pre, factor, totals, inverse, mix)   # softmax(a + s_j w_j)
            for c in range(1, width):                           # direct, where not normal
                if inverse[c] == np.float32(0.0):
                    j = c - 1
                    sign = np.float32(-1.0) if codes[d, j] else np.float32(1.0)
                    peak = pre[0] + sign * bit_w[j, 0]
                    for t in range(1, n_topics):
                        peak = max(peak, pre[t] + sign * bit_w[j, t])
                    total = np.float32(0.0)
                    for t in range(n_topics):
                        mix[t, c] = np.exp(pre[t] + sign * bit_w[j, t] - peak)
                        total += mix[t, c]
                    for t in range(n_topics):
                        mix[t, c] /= total
            # L(c) = sum_i x_i ln max(phi_ic, 1e-30) + the prior's score
            start, n = indptr[d], indptr[d + 1] - indptr[d]
            score_candidates(start, n, cols, vals, beta, mix, phi, scratch, score)
            best = -np.inf
            for c in range(width):
                value = np.float64(score[c]) + prior
                if c > 0:
                    j = c - 1
                    if codes[d, j]:
                        value -= log_odds[j]
                    elif max_bits >= 0 and bits + 1 > max_bits:
                        value = -np.inf
                    else:
                        value += log_odds[j]
                weight[c] = value
                best = max(best, value)
            if n_pairs > 0:
                _pair_scores(d, start, n, cols, vals, beta, bit_w, up, down, pre, exp_pre,
                             log_odds, codes, prior, bits, max_bits, n_flips, weight, width,
                             best_flips, pair_mix, pair_phi, pair_scratch, pair_score)
                for c in range(width, width + n_pairs):
                    best = max(best, weight[c])
            total64 = 0.0
            for c in range(width + n_pairs):                    # q(c), a softmax
                weight[c] = np.exp(weight[c] - best)
                total64 += weight[c]
            for t in range(n_topics):
                acc = 0.0
                for c in range(width):
                    acc += weight[c] * mix[t, c]
                for c in range(n_pairs):
                    acc += weight[width + c] * pair_mix[t, c]
                out[d, t] = acc / total64

    @njit(nogil=True)
    def _pair_scores(d, start, n, cols, vals, beta, bit_w, up, down, pre, exp_pre, log_odds,
                     codes, prior, bits, max_bits, n_flips, weight, width, best_flips, mix,
                     phi, scratch, score):  # pragma: no cover - compiled
        """weight[width + p] = L of the code flipping bits a and b of document d, for the
        pairs p = (a, b), a < b, of its n_flips best single flips (by weight[1:width], ties
        to the lower bit), in code_posterior.pair_flips' order; mix (T, padded) their
        mixtures softmax(a + s_a w_a + s_b w_b)."""
        n_bits, n_topics = bit_w.shape
        for m in range(n_flips):                                # the best flips, in order
            pick, top = -1, -np.inf
            for j in range(n_bits):
                taken = False
                for k in range(m):
                    taken = taken or best_flips[k] == j
                if not taken and (pick < 0 or weight[j + 1] > top):
                    pick, top = j, weight[j + 1]
            best_flips[m] = pick
        p = 0
        for a in range(n_flips):
            for b in range(a + 1, n_flips):
                ja, jb = best_flips[a], best_flips[b]
                sa = np.float32(-1.0) if codes[d, ja] else np.float32(1.0)
                sb = np.float32(-1.0) if codes[d, jb] else np.float32(1.0)
                total = np.float32(0.0)                         # factored, as the flips'
                for t in range(n_topics):
                    fa = down[t, ja] if codes[d, ja] else up[t, ja]
                    fb = down[t, jb] if codes[d, jb] else up[t, jb]
                    mix[t, p] = exp_pre[t] * fa * fb
                    total += mix[t, p]
                if total > np.float32(1e-30) and total < np.float32(1e30):
                    for t in range(n_topics):
                        mix[t, p] /= total
                else:                                           # direct, stable softmax
                    peak = pre[0] + sa * bit_w[ja, 0] + sb * bit_w[jb, 0]
                    for t in range(1, n_topics):
                        peak = max(peak, pre[t] + sa * bit_w[ja, t] + sb * bit_w[jb, t])
                    total = np.float32(0.0)
                    for t in range(n_topics):
                        mix[t, p] = np.exp(pre[t] + sa * bit_w[ja, t] + sb * bit_w[jb, t] - peak)
                        total += mix[t, p]
                    for t in range(n_topics):
                        mix[t, p] /= total
                value = prior + sa * log_odds[ja] + sb * log_odds[jb]
                if max_bits >= 0 and bits + sa + sb > max_bits:
                    value = -np.inf
                weight[width + p] = value                       # the data term added below
                p += 1
        for t in range(n_topics):
            for c in range(p, mix.shape[1]):
                mix[t, c] = 0.0
        score_candidates(start, n, cols, vals, beta, mix, phi, scratch, score)
        for c in range(p):
            weight[width + c] += score[c]

    _local_mean = cached_njit(nogil=True)(_local_mean_py)
