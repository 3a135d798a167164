"""The fused Poisson pursuit's loop, whose later steps bound their candidates before scoring.

Scoring every bit at a later step costs n K T multiply-adds and n K logarithms for a
document of n non-zeros (:mod:`bpetopics.models.poissbpe.compiled.fused_pursuit` has the
candidates' mixtures and the threads that share a batch). Most bits cannot win:
an exact upper bound on a candidate's score costs O(n T + K T) for all K of them, and
only the bits whose bound reaches the current score are scored, in one pass over the
document. A bit below it cannot improve on the code, so the step's choice, and the
codes, are those of scoring every bit.

The bound (:func:`_candidate_bounds`). With p = f(z) the current mixture, r_jt =
exp(w_jt - max_t w_jt) and R_j = sum_t p_t r_jt, a candidate's mixture is
f(z + e_j)_t = p_t r_jt / R_j, so its word rates are

    phi_ij = phi_i0 m_ij / R_j,   phi_i0 = sum_t beta_it p_t,   m_ij = sum_t q_it r_jt,
    q_it = beta_it p_t / phi_i0   (each word's posterior over topics, a distribution).

By Jensen's inequality over the words (weights x_i / N, N = sum_i x_i; ln is concave),

    sum_i x_i ln max(phi_ij, c) <= S_0 + N ln(M_j / R_j + C),

with S_0 = sum_i x_i ln phi_i0 (the current data term), M_j = sum_t qbar_t r_jt, qbar_t =
sum_i x_i q_it / N, c = 1e-30 (the reference's floor) and C = sum_i x_i c / (N phi_i0).
ln phi_i0 at the document's words is kept from the step before (the chosen candidate's
scores), so a bound costs one pass over the words for qbar and one K x T product.

With the mixtures' entropy prior a candidate also scores epsilon L H(f(z + e_j)), which
is computed exactly for every bit (:func:`~bpetopics.models.poissbpe.compiled.pursuit_loops.
candidate_entropies`, T K multiply-adds a step, the bound's own order) and added to its
bound as to its score, so the screen stays exact.

It pays at every size: from T = 2 to T = 200 at the default K = 64, training costs less
with the screen than with every bit scored (docs/results/speed.md), so it is the
pursuit's one path (:func:`bpetopics.models.poissbpe.compiled.fused_pursuit.run`, and
:mod:`~bpetopics.models.poissbpe.compiled.rows_pursuit` in training).
"""

from __future__ import annotations

import numpy as np

from bpetopics.models.poissbpe.compiled import kernels

numba = kernels.numba

#: The scored bits are padded with empty columns to a multiple of this: the compiled loops
#: over bits run 8 lanes at a time (256-bit vectors) and a remainder one by one. A later
#: step scores a few to a few dozen bits, and 8 wastes fewer empty columns than 16
#: (docs/results/speed.md, "The screen at every size").
PAD = 8


if numba is not None:
    from numba import njit

    from bpetopics.compiled.kernel_cache import cached_njit
    from bpetopics.models.poissbpe.compiled.pursuit_loops import (candidate_entropies, first_step, log_factors,
                                                                  log_inplace, prior_weight, score_candidates,
                                                                  stable_softmax_column)

    @njit(nogil=True)
    def _candidate_bounds(start, n, cols, vals, beta, exp_pre, exp_w_t, log_odds, code,
                          log_phi0, data, bound, q, r_sum, ratio, scratch):  # pragma: no cover
        """bound[j] >= data(z + e_j) + log_odds[j] for every bit j off in ``code`` (-inf for
        bits on, +inf where no bound is known), by the module's inequality; and r_sum[j] =
        sum_t exp_pre_t r_jt, the candidates' softmax denominators (the mixtures reuse them).

        start, n: the document's non-zeros in cols (words), vals (counts); beta (U, T);
        exp_pre (T,) = exp(a - max a); exp_w_t (T, K) = exp(w_jt - max_t w_jt); log_odds (K,);
        code (K,) uint8; log_phi0 (n,) ln phi_i0 of the current code at the words; data its
        data term S_0; outputs bound (K,) float64 and r_sum (K,) float32; q (T,), ratio and
        scratch (K,) float32 scratch. Float32 sums of positive terms: the caller's slack
        covers their rounding."""
        n_topics, n_bits = exp_w_t.shape
        tokens, c_sum, valid = np.float32(0.0), np.float32(0.0), True
        for t in range(n_topics):
            q[t] = 0.0
        for ii in range(n):
            if log_phi0[ii] < np.float32(-60.0):                # phi_i0 near the floor c
                valid = False
                break
            i = start + ii
            w, x = cols[i], vals[i]
            weight = x * np.exp(-log_phi0[ii])                  # x_i / phi_i0
            tokens += x
            c_sum += weight
            for t in range(n_topics):
                q[t] += weight * beta[w, t]
        valid = valid and tokens > 0.0
        scale = np.float32(1.0) / tokens if valid else np.float32(0.0)
        for t in range(n_topics):                               # N qbar_t / N p_total
            q[t] *= exp_pre[t] * scale
        # r_sum_j = sum_t exp_pre_t r_jt = R_j p_total and scratch_j = M_j p_total, 8 topics
        # a pass over the bits (as pursuit_loops._word_rates); r_sum topic after topic, the
        # order the mixtures' softmax has always summed in (same mixtures, same training)
        for j in range(n_bits):
            r_sum[j] = 0.0
            scratch[j] = 0.0
        t = 0
        while t + 8 <= n_topics:
            e0, e1, e2, e3 = exp_w_t[t], exp_w_t[t + 1], exp_w_t[t + 2], exp_w_t[t + 3]
            e4, e5, e6, e7 = exp_w_t[t + 4], exp_w_t[t + 5], exp_w_t[t + 6], exp_w_t[t + 7]
            p0, p1, p2, p3 = exp_pre[t], exp_pre[t + 1], exp_pre[t + 2], exp_pre[t + 3]
            p4, p5, p6, p7 = exp_pre[t + 4], exp_pre[t + 5], exp_pre[t + 6], exp_pre[t + 7]
            q0, q1, q2, q3 = q[t], q[t + 1], q[t + 2], q[t + 3]
            q4, q5, q6, q7 = q[t + 4], q[t + 5], q[t + 6], q[t + 7]
            for j in range(n_bits):
                r = r_sum[j] + p0 * e0[j]
                r = r + p1 * e1[j]
                r = r + p2 * e2[j]
                r = r + p3 * e3[j]
                r = r + p4 * e4[j]
                r = r + p5 * e5[j]
                r = r + p6 * e6[j]
                r_sum[j] = r + p7 * e7[j]
                scratch[j] += (((q0 * e0[j] + q1 * e1[j]) + (q2 * e2[j] + q3 * e3[j]))
                               + ((q4 * e4[j] + q5 * e5[j]) + (q6 * e6[j] + q7 * e7[j])))
            t += 8
        while t < n_topics:
            e0, p0, q0 = exp_w_t[t], exp_pre[t], q[t]
            for j in range(n_bits):
                r_sum[j] += p0 * e0[j]
                scratch[j] += q0 * e0[j]
            t += 1
        if not valid:
            for j in range(n_bits):
                bound[j] = -np.inf if code[j] else np.inf
            return
        c_mean = np.float32(1e-30) * c_sum / tokens             # C
        for j in range(n_bits):
            if r_sum[j] > np.float32(1e-30):
                ratio[j] = scratch[j] / r_sum[j] + c_mean       # M_j / R_j + C
            else:
                ratio[j] = np.float32(-1.0)                     # no bound for this bit
        for j in range(n_bits):
            bound[j] = ratio[j]
        for j in range(n_bits):                                 # ln of positive normals only
            if not ratio[j] > np.float32(1e-30):
                ratio[j] = np.float32(1.0)
        log_inplace(ratio, scratch, n_bits)
        for j in range(n_bits):
            if code[j]:
                bound[j] = -np.inf
            elif not bound[j] > np.float32(1e-30):
                bound[j] = np.inf
            else:
                bound[j] = data + tokens * ratio[j] + log_odds[j]

    def _screened_pursuit_py(indptr, cols, vals, beta, table, bit_w, exp_w_t, bias, log_odds,
                             strength, first_entropy, codes, data, prior, mixture, max_steps,
                             docs):  # pragma: no cover
        """The greedy pursuit of the documents ``docs`` of a batch, written into codes,
        data, prior, mixture (rows ``docs`` only: threads may share the outputs), each
        later step scoring only the bits whose bound (less a slack for float rounding)
        reaches the current score. The entropy prior's term of a candidate is exact, so
        it is added to its bound as it is to its score.

        indptr (P+1,), cols (nnz,) words in the batch's vocabulary, vals (nnz,) float32;
        beta (U, T); table (U, K+1) = ln [beta f(c)]_w for c = 0, e_1..e_K (step 1);
        bit_w (K, T) = W^T; exp_w_t (T, K) = exp(w_jt - max_t w_jt), topic by topic; bias
        (T,); log_odds (K,); strength (float32) epsilon of the mixtures' entropy prior, 0 for
        none, and first_entropy (K+1,) H(f(c)) of the step-1 codes (a candidate scores
        epsilon L_d H(f(z + e_j)) more: :mod:`bpetopics.models.poissbpe.mixture_prior`);
        codes (P, K) uint8, zero; data, prior, mixture (P,) float32 (outputs: the data
        term, the summed log-odds, the entropy prior's term); docs (S,) int64, the rows to
        pursue."""
        n_bits, n_topics = bit_w.shape
        longest = 0                                             # scratch, once a call
        for q in range(docs.shape[0]):
            longest = max(longest, indptr[docs[q] + 1] - indptr[docs[q]])
        first = np.empty(n_bits + 1, dtype=np.float32)
        mix_flat = np.empty(n_topics * n_bits, dtype=np.float32)   # f(z + e_j)_t, (T, width)
        score = np.empty(n_bits, dtype=np.float32)
        r_sum = np.empty(n_bits, dtype=np.float32)             # sum_t exp_pre_t r_jt, all bits
        inverse = np.empty(n_bits, dtype=np.float32)           # 1 / r_sum of the scored bits
        block = np.empty(n_bits, dtype=np.int64)                # the bits scored this step
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
        entropy = np.zeros(n_bits, dtype=np.float32)           # H(f(z + e_j)), with the prior
        log_totals, entropy_scratch = np.empty((2, n_bits), dtype=np.float32)
        log_r_t = np.empty((n_topics, n_bits) if strength > 0.0 else (0, 0), dtype=np.float32)
        if strength > 0.0:
            log_factors(bit_w, log_r_t)
        for q in range(docs.shape[0]):
            d = docs[q]
            weight = prior_weight(strength, d, indptr, vals)    # epsilon L_d
            arg = first_step(d, indptr, cols, vals, table, bit_w, bias, log_odds, weight,
                             first_entropy, codes, data, prior, mixture, first, pre)
            if arg < 0:
                continue
            n = indptr[d + 1] - indptr[d]
            for ii in range(n):                                 # ln phi_i0 from the table
                log_phi0[ii] = table[cols[indptr[d] + ii], arg + 1]
            taken = 1
            while taken < max_steps:
                top = pre.max()
                for t in range(n_topics):
                    exp_pre[t] = np.exp(pre[t] - top)
                _candidate_bounds(indptr[d], n, cols, vals, beta, exp_pre, exp_w_t, log_odds,
                                  codes[d], log_phi0, data[d], bound, q32, r_sum, ratio,
                                  ratio_scratch)
                if strength > 0.0:                              # H(f(z + e_j)), every bit
                    candidate_entropies(pre, top, exp_pre, exp_w_t, log_r_t, bit_w, r_sum, entropy,
                                        log_totals, entropy_scratch)
                threshold = data[d] + prior[d] + mixture[d]     # a bit must improve on it
                slack = np.float32(1e-4) * abs(threshold) + np.float32(1e-2)
                width = 0                                       # the bits that still can
                for j in range(n_bits):
                    if bound[j] + prior[d] + weight * entropy[j] >= threshold - slack:
                        block[width] = j
                        width += 1
                if width == 0:
                    break
                padded = min(-(-width // PAD) * PAD, n_bits)     # columns width.. are empty
                mix = mix_flat[:n_topics * padded].reshape((n_topics, padded))
                for b in range(width):                          # softmax(a + w_j), factored:
                    total = r_sum[block[b]]                     # exp_pre_t r_jt / r_sum_j
                    normal = total > np.float32(1e-30) and total < np.float32(1e30)
                    inverse[b] = np.float32(1.0) / total if normal else np.float32(0.0)
                for t in range(n_topics):
                    e = exp_pre[t]
                    for b in range(width):
                        mix[t, b] = e * exp_w_t[t, block[b]] * inverse[b]
                    for b in range(width, padded):
                        mix[t, b] = 0.0
                for b in range(width):
                    if inverse[b] == np.float32(0.0):           # direct, stable softmax
                        stable_softmax_column(pre, bit_w, block[b], mix, b)
                score_candidates(indptr[d], n, cols, vals, beta, mix, phi, scratch, score)
                best, arg, chosen = -np.inf, -1, 0
                for b in range(width):                          # first best, as argmax
                    j = block[b]
                    cand = score[b] + log_odds[j] + prior[d] + weight * entropy[j]
                    if cand > best:
                        best, arg, chosen = cand, j, b
                if arg < 0 or not best > threshold:
                    break
                for ii in range(n):                             # its ln phi, for the next bounds
                    log_phi_best[ii] = phi[ii * padded + chosen]
                codes[d, arg] = 1
                prior[d] += log_odds[arg]
                mixture[d] = weight * entropy[arg]
                data[d] = best - prior[d] - mixture[d]
                for t in range(n_topics):
                    pre[t] += bit_w[arg, t]
                log_phi0, log_phi_best = log_phi_best, log_phi0
                taken += 1

    screened_kernel = cached_njit(nogil=True)(_screened_pursuit_py)
