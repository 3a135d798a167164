"""The Poisson pursuit of a batch in one compiled loop (numba, CPU, linear decoder).

Step 1 reads the batch's shared table ln [beta f(c)]_w of the codes 0, e_1..e_K
(:mod:`bpetopics.core.table_pursuit` computes it: one matrix product and one vectorised
logarithm); each document that improved then goes on alone. With a linear decoder
(``hidden=()``) its candidate mixtures are

    f(z + e_j) = softmax(a + w_j),    a = b + sum_{k in z} w_k   (T,),  w_j = W[:, j]

and a candidate's data term is ``sum_i x_i ln sum_t beta[w_i, t] f(z + e_j)_t`` over the
document's real non-zeros i. One compiled call runs every step of every document of the
minibatch: no Python and no torch operation per step, which is what the
step-by-step path spends most of its time on (a later step is ~25 small torch
operations for a few thousand multiply-adds). Documents are independent: with several
threads and enough work, each thread pursues its own share of them (:func:`thread_slots`)
by the same compiled call, which releases the GIL (``nogil``). Plain Python threads, not
numba's ``prange``: its pool left the calling thread idle during the loop and every torch
operation after it ran slower, so a training epoch on two threads took longer than on one.

A later step does not score every bit. An exact upper bound on each candidate's score
(Jensen's inequality over the document's words, :func:`_candidate_bounds`), from O(n T +
K T) work against the n K T of scoring them all, leaves only the bits whose bound reaches
the current score (about a quarter of them on 20 Newsgroups); those are scored exactly in
one pass, so the choice, and the codes, are those of scoring every bit.

The softmax is factored, ``exp(a_t + w_jt) = exp(a_t - max a) exp(w_jt - max_t w_jt) *
const_j``: T + K T exponentials per minibatch-step become T per document-step, and a
candidate whose factored sum under- or overflows is recomputed directly. The codes are
those of :func:`bpetopics.core.pursuit.reference_pursuit` up to float rounding (the
logarithm is Cephes' logf, :func:`_log_inplace`, and the exponential LLVM's: each within
one unit in the last place of torch's).
"""

from __future__ import annotations

import os

import numpy as np
import torch

from bpetopics.core import kernels

numba = kernels.numba

#: Candidates a later step scores exactly at a time, in order of their bounds.

#: Multiply-adds of one later step over the batch (non-zeros x bits x topics) under which
#: one thread pursues the whole batch whatever the thread count (handing half to another
#: thread costs ~0.1 ms; a T = 20 minibatch of 64 documents, ~3 M, gains nothing).
MIN_PARALLEL_WORK = 5_000_000

_workers = None                 # (pid, size, pool): the threads that pursue the other slots


def usable(decoder, device) -> bool:
    """Whether the fused loop serves this decoder on this device: numba, CPU, and a linear
    decoder (no hidden layer: the candidates' mixtures are a softmax of a + w_j)."""
    return kernels.available(device) and len(decoder.head) == 0


if numba is not None:
    from numba import njit

    @njit(inline="always", nogil=True)
    def _add_products(phi, row, beta, w, mix):  # pragma: no cover - compiled
        """phi[row + j] += sum_t beta[w, t] mix[t, j] for every j, topics taken 8 and 4 at
        a time: each pass over the row then reads and writes it once for 8 (or 4)
        multiply-adds instead of one (1.4-1.7x faster at T = 20 and 50 than one topic a
        pass; the sums are grouped in pairs, a different rounding order only). The loops
        run to mix.shape: with a bound LLVM cannot tie to the arrays they do not vectorise
        (4x slower)."""
        n_topics, n_bits = mix.shape
        t = 0
        while t + 8 <= n_topics:
            b0, b1, b2, b3 = beta[w, t], beta[w, t + 1], beta[w, t + 2], beta[w, t + 3]
            b4, b5, b6, b7 = beta[w, t + 4], beta[w, t + 5], beta[w, t + 6], beta[w, t + 7]
            for j in range(n_bits):
                phi[row + j] += (((b0 * mix[t, j] + b1 * mix[t + 1, j])
                                  + (b2 * mix[t + 2, j] + b3 * mix[t + 3, j]))
                                 + ((b4 * mix[t + 4, j] + b5 * mix[t + 5, j])
                                    + (b6 * mix[t + 6, j] + b7 * mix[t + 7, j])))
            t += 8
        while t + 4 <= n_topics:
            b0, b1, b2, b3 = beta[w, t], beta[w, t + 1], beta[w, t + 2], beta[w, t + 3]
            for j in range(n_bits):
                phi[row + j] += ((b0 * mix[t, j] + b1 * mix[t + 1, j])
                                 + (b2 * mix[t + 2, j] + b3 * mix[t + 3, j]))
            t += 4
        while t < n_topics:
            b = beta[w, t]
            for j in range(n_bits):
                phi[row + j] += b * mix[t, j]
            t += 1

    @njit(inline="always", nogil=True)
    def _log_inplace(values, scratch, n):  # pragma: no cover - compiled
        """values[:n] = ln values[:n] for positive normal float32 values, by Cephes'
        logf (exponent and mantissa from the bits, then a degree-9 polynomial): pure
        arithmetic, so the loop is vectorised (libm's logf is one call per value). Within
        one unit in the last place of torch's log (0.4% of values differ, by one unit)."""
        bits = values.view(np.int32)
        mant = scratch.view(np.int32)
        for j in range(n):
            b = bits[j]
            e = ((b >> 23) & 0xFF) - 126
            mant[j] = (b & -2139095041) | 0x3F000000             # mantissa m in [0.5, 1)
            m = scratch[j]
            small = m < np.float32(0.70710677)                   # m < sqrt(1/2)
            e = e - 1 if small else e
            m = (m + m - np.float32(1.0)) if small else (m - np.float32(1.0))
            z = m * m
            y = np.float32(7.0376836292e-2) * m - np.float32(1.1514610310e-1)
            y = y * m + np.float32(1.1676998740e-1)
            y = y * m - np.float32(1.2420140846e-1)
            y = y * m + np.float32(1.4249322787e-1)
            y = y * m - np.float32(1.6668057665e-1)
            y = y * m + np.float32(2.0000714765e-1)
            y = y * m - np.float32(2.4999993993e-1)
            y = y * m + np.float32(3.3333331174e-1)
            y = y * m * z
            fe = np.float32(e)                                   # ln 2 = 0.693359375 - 2.12194440e-4
            y = y + np.float32(-2.12194440e-4) * fe - np.float32(0.5) * z
            values[j] = (m + y) + np.float32(0.693359375) * fe

    @njit(inline="always", nogil=True)
    def _candidate_mixture(mix, b, j, pre, exp_pre, bit_w, exp_w):  # pragma: no cover
        """mix[:, b] = f(z + e_j) = softmax(a + w_j), factored: exp(a_t - max a) exp(w_jt -
        max_t w_jt) over their sum; directly (stable softmax) when that sum under- or
        overflows. pre (T,) = a, exp_pre (T,) = exp(a - max a)."""
        n_topics = pre.shape[0]
        total = np.float32(0.0)
        for t in range(n_topics):
            total += exp_pre[t] * exp_w[j, t]
        if total > np.float32(1e-30) and total < np.float32(1e30):
            inverse = np.float32(1.0) / total
            for t in range(n_topics):
                mix[t, b] = exp_pre[t] * exp_w[j, t] * inverse
        else:
            peak = pre[0] + bit_w[j, 0]
            for t in range(1, n_topics):
                peak = max(peak, pre[t] + bit_w[j, t])
            total = np.float32(0.0)
            for t in range(n_topics):
                mix[t, b] = np.exp(pre[t] + bit_w[j, t] - peak)
                total += mix[t, b]
            for t in range(n_topics):
                mix[t, b] /= total

    @njit(nogil=True)
    def _candidate_bounds(start, n, cols, vals, beta, exp_pre, exp_w_t, log_odds, code,
                          log_phi0, data, bound, q, ratio, scratch):  # pragma: no cover
        """bound[j] >= data(z + e_j) + log_odds[j] for every bit j off in ``code`` (-inf for
        bits on, +inf where no bound is known), from O(n T + K T) work instead of a
        candidate's n T. log_phi0 (n,): ln phi_i0 of the current code's mixture at the
        document's words; data its data term; q (T,), ratio and scratch (K,) scratch.

        With p = f(z), r_jt = exp(w_jt - max_t w_jt) and R_j = sum_t p_t r_jt, the candidate's
        mixture is f(z + e_j)_t = p_t r_jt / R_j, so phi_ij = phi_i0 m_ij / R_j with
        phi_i0 = sum_t beta_it p_t and m_ij = sum_t q_it r_jt, q_it = beta_it p_t / phi_i0.
        The clamped data term is sum_i x_i ln max(phi_ij, c), c = 1e-30, and by Jensen's
        inequality over the words (weights x_i / N, N = sum_i x_i, ln concave):

            sum_i x_i ln max(phi_ij, c) <= sum_i x_i ln phi_i0 + sum_i x_i ln(m_ij / R_j + c / phi_i0)
                                        <= S_0 + N ln(M_j / R_j + C)

        with S_0 = sum_i x_i ln phi_i0 (the data term), M_j = sum_t qbar_t r_jt, qbar_t =
        sum_i x_i q_it / N and C = sum_i x_i c / (N phi_i0). Float32 sums of positive
        terms: the caller's slack covers their rounding."""
        n_topics, n_bits = exp_w_t.shape
        p_total = np.float32(0.0)
        for t in range(n_topics):
            p_total += exp_pre[t]
            q[t] = 0.0
        tokens, c_sum, valid = np.float32(0.0), np.float32(0.0), True
        for ii in range(n):
            if log_phi0[ii] < np.float32(-60.0):                # phi_i0 near the clamp
                valid = False
                break
            i = start + ii
            w, x = cols[i], vals[i]
            weight = x * np.exp(-log_phi0[ii])                  # x_i / phi_i0
            tokens += x
            c_sum += weight
            for t in range(n_topics):
                q[t] += weight * beta[w, t]
        if not valid or not tokens > 0.0:
            for j in range(n_bits):
                bound[j] = -np.inf if code[j] else np.inf
            return
        for t in range(n_topics):                               # qbar_t = p_t q_t / N
            q[t] *= exp_pre[t] / (p_total * tokens)
        for j in range(n_bits):                                 # R_j (here) and M_j
            ratio[j] = 0.0
            scratch[j] = 0.0
        for t in range(n_topics):
            pt, qt = exp_pre[t] / p_total, q[t]
            for j in range(n_bits):
                ratio[j] += pt * exp_w_t[t, j]
                scratch[j] += qt * exp_w_t[t, j]
        c_mean = np.float32(1e-30) * c_sum / tokens
        for j in range(n_bits):
            if ratio[j] > np.float32(1e-30):
                ratio[j] = scratch[j] / ratio[j] + c_mean
            else:
                ratio[j] = np.float32(-1.0)                     # no bound for this bit
        for j in range(n_bits):
            bound[j] = ratio[j]
        for j in range(n_bits):                                 # ln on positive normals only
            if not ratio[j] > np.float32(1e-30):
                ratio[j] = np.float32(1.0)
        _log_inplace(ratio, scratch, n_bits)
        for j in range(n_bits):
            if code[j]:
                bound[j] = -np.inf
            elif not bound[j] > np.float32(1e-30):
                bound[j] = np.inf
            else:
                bound[j] = data + tokens * ratio[j] + log_odds[j]

    @njit(nogil=True)
    def _score_candidates(start, n, cols, vals, beta, mix, phi, scratch, score):  # pragma: no cover
        """score[b] = sum_i x_i ln max(sum_t beta[w_i, t] mix[t, b], 1e-30) for the
        columns b of mix (T, width), over the document's n non-zeros from ``start``.
        A function of its own: its loops run to mix.shape, which LLVM vectorises."""
        width = mix.shape[1]
        for ii in range(n):                                     # phi_b(w_i)
            w, row = cols[start + ii], ii * width
            for b in range(width):
                phi[row + b] = 0.0
            _add_products(phi, row, beta, w, mix)
            for b in range(width):                              # as the reference: phi >= 1e-30
                phi[row + b] = max(phi[row + b], np.float32(1e-30))
        _log_inplace(phi, scratch, n * width)
        for b in range(width):
            score[b] = 0.0
        for ii in range(n):                                     # sum_i x_i ln phi_b(w_i)
            x, row = vals[start + ii], ii * width
            for b in range(width):
                score[b] += x * phi[row + b]

    def _pursuit_py(indptr, cols, vals, beta, table, bit_w, exp_w, exp_w_t, bias, log_odds,
                    codes, data, prior, max_steps, docs):  # pragma: no cover - compiled
        """The greedy pursuit of the documents ``docs`` of a batch, written into codes,
        data, prior (rows ``docs`` only: threads may share the outputs).

        indptr (P+1,), cols (nnz,) words in the batch's vocabulary, vals (nnz,) float32;
        beta (U, T); table (U, K+1) = ln [beta f(c)]_w for c = 0, e_1..e_K (step 1);
        bit_w (K, T) = W^T; exp_w (K, T) = exp(w_jt - max_t w_jt), exp_w64 the same in
        float64; bias (T,); log_odds (K,); codes (P, K) uint8, zero; data, prior (P,)
        float32 (outputs); docs (S,) int64, the rows to pursue.

        A later step bounds every candidate first (:func:`_candidate_bounds`, from the
        current code's ln phi at the document's words, kept from the step before) and
        scores exactly, in one pass, only the bits whose bound reaches the current score
        (less a slack for float rounding): a bit below it cannot improve on the code, so
        the step's choice, and the codes, are those of scoring every bit.
        """
        n_bits, n_topics = bit_w.shape
        longest = 0                                             # scratch, once a call
        for q in range(docs.shape[0]):
            longest = max(longest, indptr[docs[q] + 1] - indptr[docs[q]])
        first = np.empty(n_bits + 1, dtype=np.float32)
        mix_flat = np.empty(n_topics * n_bits, dtype=np.float32)   # f(z + e_j)_t, (T, width)
        score = np.empty(n_bits, dtype=np.float32)
        block = np.empty(n_bits, dtype=np.int64)                # the block's candidates j
        bound = np.empty(n_bits, dtype=np.float64)
        ratio = np.empty(n_bits, dtype=np.float32)
        ratio_scratch = np.empty(n_bits, dtype=np.float32)
        q32 = np.empty(n_topics, dtype=np.float32)
        exp_pre = np.empty(n_topics, dtype=np.float32)
        pre = np.empty(n_topics, dtype=np.float32)
        phi = np.empty(longest * n_bits, dtype=np.float32)     # (n_d, width), flat
        scratch = np.empty(longest * n_bits, dtype=np.float32)
        log_phi0 = np.empty(longest, dtype=np.float32)          # ln phi_i0 of the current code
        log_phi_best = np.empty(longest, dtype=np.float32)      # ... of the best candidate
        for q in range(docs.shape[0]):
            d = docs[q]
            first[:] = 0.0                                      # step 1: the shared table
            for i in range(indptr[d], indptr[d + 1]):
                x, row = vals[i], cols[i]
                for j in range(n_bits + 1):
                    first[j] += x * table[row, j]
            data[d], prior[d] = first[0], 0.0
            best, arg = -np.inf, -1
            for j in range(n_bits):
                cand = first[j + 1] + log_odds[j]
                if cand > best:
                    best, arg = cand, j
            if arg < 0 or not best > data[d]:
                continue
            codes[d, arg] = 1
            prior[d] += log_odds[arg]
            data[d] = best - prior[d]
            for t in range(n_topics):                           # a = b + sum_{k in z} w_k
                pre[t] = bias[t] + bit_w[arg, t]
            n = indptr[d + 1] - indptr[d]
            for ii in range(n):                                 # ln phi_i0 from the table
                log_phi0[ii] = table[cols[indptr[d] + ii], arg + 1]
            taken = 1
            while taken < max_steps:
                top = pre.max()
                for t in range(n_topics):
                    exp_pre[t] = np.exp(pre[t] - top)
                _candidate_bounds(indptr[d], n, cols, vals, beta, exp_pre, exp_w_t, log_odds,
                                  codes[d], log_phi0, data[d], bound, q32, ratio, ratio_scratch)
                threshold = data[d] + prior[d]                  # a bit must improve on it
                slack = np.float32(1e-4) * abs(threshold) + np.float32(1e-2)
                width = 0                                       # the bits that still can
                for j in range(n_bits):
                    if bound[j] + prior[d] >= threshold - slack:
                        block[width] = j
                        width += 1
                best, arg = -np.inf, -1
                if width > 0:
                    mix = mix_flat[:n_topics * width].reshape((n_topics, width))
                    for b in range(width):                      # softmax(a + w_j), factored
                        _candidate_mixture(mix, b, block[b], pre, exp_pre, bit_w, exp_w)
                    _score_candidates(indptr[d], n, cols, vals, beta, mix, phi, scratch, score)
                    for b in range(width):                      # first best, as argmax
                        j = block[b]
                        cand = score[b] + log_odds[j] + prior[d]
                        if cand > best:
                            best, arg = cand, j
                            for ii in range(n):                 # its ln phi, for the next bounds
                                log_phi_best[ii] = phi[ii * width + b]
                if arg < 0 or not best > threshold:
                    break
                codes[d, arg] = 1
                prior[d] += log_odds[arg]
                data[d] = best - prior[d]
                for t in range(n_topics):
                    pre[t] += bit_w[arg, t]
                log_phi0, log_phi_best = log_phi_best, log_phi0
                taken += 1

    _pursuit = njit(cache=True, nogil=True)(_pursuit_py)


def run(decoder, batch, beta_u, table, log_odds, max_steps, threads=1):
    """The greedy pursuit of a packed batch in one compiled call (see the module).

    Parameters
    ----------
    decoder : CodeDecoder
        Linear (``usable``): its bit columns W^T (K, T) and bias b (T,).
    batch : PackedCounts
        The P documents, columns in the batch's own vocabulary of U words.
    beta_u : torch.Tensor, shape (U, T)
    table : torch.Tensor, shape (U, K + 1)
        ln [beta f(c)]_w for the codes c = 0, e_1..e_K of the first step.
    log_odds : torch.Tensor, shape (K,)
    max_steps : int
        Largest number of bits a code may have.
    threads : int

    Returns
    -------
    codes : torch.BoolTensor, shape (P, K)
    data, prior_score : torch.Tensor, shape (P,)
        Each code's data term and summed log-odds.
    """
    n_docs = len(batch)
    bit_w = decoder.bit_columns.detach().float().contiguous()                # (K, T)
    shifted = bit_w - bit_w.max(dim=1, keepdim=True).values
    exp_w = torch.exp(shifted)
    exp_w_t = exp_w.t().contiguous()
    bias = decoder.first.bias.detach().float().contiguous()
    codes = torch.zeros(n_docs, bit_w.shape[0], dtype=torch.bool)
    data, prior_score = torch.empty(n_docs), torch.empty(n_docs)
    work = batch.cols.shape[0] * bit_w.shape[0] * bit_w.shape[1]
    # Each thread's share is at least half the threshold (a hand-over must pay for itself
    # on machines with many cores too).
    threads = 1 if work < MIN_PARALLEL_WORK else max(1, min(int(threads), n_docs,
                                                            work // max(1, MIN_PARALLEL_WORK // 2)))
    args = (batch.indptr.numpy(), batch.cols.numpy(), batch.vals.float().numpy(),
            beta_u.float().contiguous().numpy(), table.float().contiguous().numpy(),
            bit_w.numpy(), exp_w.numpy(), exp_w_t.numpy(), bias.numpy(),
            log_odds.float().contiguous().numpy(),
            codes.numpy().view(np.uint8), data.numpy(), prior_score.numpy(), int(max_steps))
    order, bounds = thread_slots(np.diff(args[0]), threads)
    slots = [order[bounds[s]:bounds[s + 1]] for s in range(threads)]
    others = [_thread_pool(threads - 1).submit(_pursuit, *args, docs) for docs in slots[1:]]
    _pursuit(*args, slots[0])                                      # this thread's own share
    for other in others:
        other.result()
    return codes, data, prior_score


def _thread_pool(size: int):
    """A pool of at least ``size`` threads for :func:`run`'s other slots, kept for later
    calls; made again when more threads are asked for, or in a forked child (a pool's
    threads do not survive a fork: the child would wait on them for ever)."""
    global _workers
    pid = os.getpid()
    if _workers is None or _workers[0] != pid or _workers[1] < size:
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(max_workers=size, thread_name_prefix="bpetopics-pursuit")
        _workers = (pid, size, pool)
    return _workers[2]


def thread_slots(lengths: np.ndarray, n_slots: int) -> tuple[np.ndarray, np.ndarray]:
    """Documents dealt to ``n_slots`` threads with about equal work each.

    A document's pursuit costs about its number of non-zeros times its steps, and one long
    document can outweigh dozens of short ones, so an even split by count leaves one
    thread waiting. The documents,
    longest first, are dealt in a snake: 0, 1, .., S-1, S-1, .., 1, 0, 0, 1, ...

    Parameters
    ----------
    lengths : np.ndarray, shape (P,)
        Non-zeros of each document.
    n_slots : int
        S, the threads.

    Returns
    -------
    order : np.ndarray of int64, shape (P,)
        Document indices, slot by slot.
    slot_bounds : np.ndarray of int64, shape (S + 1,)
        Slot s has ``order[slot_bounds[s]:slot_bounds[s + 1]]``.
    """
    n_docs = lengths.shape[0]
    if n_slots <= 1:
        return np.arange(n_docs, dtype=np.int64), np.array([0, n_docs], dtype=np.int64)
    by_length = np.argsort(-lengths, kind="stable")
    position = np.arange(n_docs)
    within, round_ = position % n_slots, position // n_slots
    slot = np.where(round_ % 2 == 0, within, n_slots - 1 - within)
    order = by_length[np.argsort(slot, kind="stable")].astype(np.int64)
    slot_bounds = np.concatenate([[0], np.cumsum(np.bincount(slot, minlength=n_slots))])
    return order, slot_bounds.astype(np.int64)
