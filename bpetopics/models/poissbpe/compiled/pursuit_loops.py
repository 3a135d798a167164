"""Compiled pieces the fused loops share (:mod:`bpetopics.models.poissbpe.compiled.screened_pursuit`,
the pursuit, whose later steps bound their candidates before scoring them,
:mod:`bpetopics.models.poissbpe.compiled.rows_preparation`, the first step's table, and
:mod:`bpetopics.models.poissbpe.compiled.fused_posterior`, which scores a code's
neighbours): step 1 from the batch's shared table, a document's word rates under the
candidates' mixtures (:func:`_word_rates`; :func:`wide_word_rates`, the same values, for
the wide products of the shared table) and a vectorised logarithm (inlined into the
loops that call them, ``inline="always"``), and the candidates' data terms over a
document's words (:func:`score_candidates`, a function of its own); absent without
numba.

After editing this file in a working copy, delete ``bpetopics/models/poissbpe/compiled/__pycache__/*.nbi`` and
``*.nbc``: numba keys its on-disk cache of a compiled function by that function's own
file, so the kernels that inline these pieces (screened_pursuit.py, rows_preparation.py,
rows_pursuit.py) would otherwise keep their old builds (an installed package is fresh throughout)."""

from __future__ import annotations

import numpy as np

from bpetopics.models.poissbpe.compiled import kernels

numba = kernels.numba

if numba is not None:
    from numba import njit

    @njit(inline="always", nogil=True)
    def _word_rates(start, n, cols, beta, mix, phi):  # pragma: no cover - compiled
        """phi[ii * width + j] = max(sum_t beta[w_ii, t] mix[t, j], 1e-30) for the
        document's n non-zeros from ``start`` (words w_ii = cols[start + ii]) and the
        columns j of mix (T, width).

        Topics are taken 8 (then 4, then 1) at a time, and a block of topics is the outer
        loop, the document's words the inner one: a pass over a word's row reads and writes
        it once for 8 multiply-adds, and the block's 8 rows of mix are addressed once for
        all the words (faster than the words outside, docs/results/speed.md: the rows
        are a few dozen bits long, so per-row set-up counts). The sums are grouped in
        pairs; each element's rounding does not depend on the loop order."""
        n_topics, width = mix.shape
        for k in range(n * width):
            phi[k] = 0.0
        t = 0
        while t + 8 <= n_topics:
            m0, m1, m2, m3 = mix[t], mix[t + 1], mix[t + 2], mix[t + 3]
            m4, m5, m6, m7 = mix[t + 4], mix[t + 5], mix[t + 6], mix[t + 7]
            for ii in range(n):
                w, row = cols[start + ii], ii * width
                b0, b1, b2, b3 = beta[w, t], beta[w, t + 1], beta[w, t + 2], beta[w, t + 3]
                b4, b5, b6, b7 = beta[w, t + 4], beta[w, t + 5], beta[w, t + 6], beta[w, t + 7]
                for j in range(width):
                    phi[row + j] += (((b0 * m0[j] + b1 * m1[j]) + (b2 * m2[j] + b3 * m3[j]))
                                     + ((b4 * m4[j] + b5 * m5[j]) + (b6 * m6[j] + b7 * m7[j])))
            t += 8
        while t + 4 <= n_topics:
            m0, m1, m2, m3 = mix[t], mix[t + 1], mix[t + 2], mix[t + 3]
            for ii in range(n):
                w, row = cols[start + ii], ii * width
                b0, b1, b2, b3 = beta[w, t], beta[w, t + 1], beta[w, t + 2], beta[w, t + 3]
                for j in range(width):
                    phi[row + j] += (b0 * m0[j] + b1 * m1[j]) + (b2 * m2[j] + b3 * m3[j])
            t += 4
        while t < n_topics:
            m0 = mix[t]
            for ii in range(n):
                w, row = cols[start + ii], ii * width
                b0 = beta[w, t]
                for j in range(width):
                    phi[row + j] += b0 * m0[j]
            t += 1
        for k in range(n * width):                              # as the reference: phi >= 1e-30
            phi[k] = max(phi[k], np.float32(1e-30))

    @njit(inline="always", nogil=True)
    def wide_word_rates(start, n, cols, beta, mix, phi):  # pragma: no cover - compiled
        """:func:`_word_rates`, the same values bit for bit, for wide mixtures (the first
        step's table of K + 1 columns): words are taken 4 at a time, so
        each vectorised pass over j reads 8 rows of mix once for 4 words' 32 products
        and each of the 4 rows of phi once (one word at a time, the 8 loads of mix per 8
        products make the loop wait on loads). Faster at 64-128 columns; slower at the
        16-48 of a screened step (shorter passes), which keeps :func:`_word_rates`.
        Each element receives its sums in :func:`_word_rates`' order (the 8 or 4
        products of a topic block grouped in pairs, the blocks in topic order); the last
        n % 4 words are :func:`_word_rates`' own."""
        n_topics, width = mix.shape
        head = n - n % 4
        _word_rates(start + head, n - head, cols, beta, mix, phi[head * width:])
        for k in range(head * width):
            phi[k] = 0.0
        for ii in range(0, head, 4):
            wa, wb, wc, wd = cols[start + ii], cols[start + ii + 1], cols[start + ii + 2], cols[start + ii + 3]
            ra, rb, rc, rd = ii * width, (ii + 1) * width, (ii + 2) * width, (ii + 3) * width
            t = 0
            while t + 8 <= n_topics:
                m0, m1, m2, m3 = mix[t], mix[t + 1], mix[t + 2], mix[t + 3]
                m4, m5, m6, m7 = mix[t + 4], mix[t + 5], mix[t + 6], mix[t + 7]
                a0, a1, a2, a3 = beta[wa, t], beta[wa, t + 1], beta[wa, t + 2], beta[wa, t + 3]
                a4, a5, a6, a7 = beta[wa, t + 4], beta[wa, t + 5], beta[wa, t + 6], beta[wa, t + 7]
                b0, b1, b2, b3 = beta[wb, t], beta[wb, t + 1], beta[wb, t + 2], beta[wb, t + 3]
                b4, b5, b6, b7 = beta[wb, t + 4], beta[wb, t + 5], beta[wb, t + 6], beta[wb, t + 7]
                c0, c1, c2, c3 = beta[wc, t], beta[wc, t + 1], beta[wc, t + 2], beta[wc, t + 3]
                c4, c5, c6, c7 = beta[wc, t + 4], beta[wc, t + 5], beta[wc, t + 6], beta[wc, t + 7]
                d0, d1, d2, d3 = beta[wd, t], beta[wd, t + 1], beta[wd, t + 2], beta[wd, t + 3]
                d4, d5, d6, d7 = beta[wd, t + 4], beta[wd, t + 5], beta[wd, t + 6], beta[wd, t + 7]
                for j in range(width):
                    x0, x1, x2, x3 = m0[j], m1[j], m2[j], m3[j]
                    x4, x5, x6, x7 = m4[j], m5[j], m6[j], m7[j]
                    phi[ra + j] += (((a0 * x0 + a1 * x1) + (a2 * x2 + a3 * x3))
                                    + ((a4 * x4 + a5 * x5) + (a6 * x6 + a7 * x7)))
                    phi[rb + j] += (((b0 * x0 + b1 * x1) + (b2 * x2 + b3 * x3))
                                    + ((b4 * x4 + b5 * x5) + (b6 * x6 + b7 * x7)))
                    phi[rc + j] += (((c0 * x0 + c1 * x1) + (c2 * x2 + c3 * x3))
                                    + ((c4 * x4 + c5 * x5) + (c6 * x6 + c7 * x7)))
                    phi[rd + j] += (((d0 * x0 + d1 * x1) + (d2 * x2 + d3 * x3))
                                    + ((d4 * x4 + d5 * x5) + (d6 * x6 + d7 * x7)))
                t += 8
            while t + 4 <= n_topics:
                m0, m1, m2, m3 = mix[t], mix[t + 1], mix[t + 2], mix[t + 3]
                a0, a1, a2, a3 = beta[wa, t], beta[wa, t + 1], beta[wa, t + 2], beta[wa, t + 3]
                b0, b1, b2, b3 = beta[wb, t], beta[wb, t + 1], beta[wb, t + 2], beta[wb, t + 3]
                c0, c1, c2, c3 = beta[wc, t], beta[wc, t + 1], beta[wc, t + 2], beta[wc, t + 3]
                d0, d1, d2, d3 = beta[wd, t], beta[wd, t + 1], beta[wd, t + 2], beta[wd, t + 3]
                for j in range(width):
                    x0, x1, x2, x3 = m0[j], m1[j], m2[j], m3[j]
                    phi[ra + j] += (a0 * x0 + a1 * x1) + (a2 * x2 + a3 * x3)
                    phi[rb + j] += (b0 * x0 + b1 * x1) + (b2 * x2 + b3 * x3)
                    phi[rc + j] += (c0 * x0 + c1 * x1) + (c2 * x2 + c3 * x3)
                    phi[rd + j] += (d0 * x0 + d1 * x1) + (d2 * x2 + d3 * x3)
                t += 4
            while t < n_topics:
                m0 = mix[t]
                a0, b0, c0, d0 = beta[wa, t], beta[wb, t], beta[wc, t], beta[wd, t]
                for j in range(width):
                    x0 = m0[j]
                    phi[ra + j] += a0 * x0
                    phi[rb + j] += b0 * x0
                    phi[rc + j] += c0 * x0
                    phi[rd + j] += d0 * x0
                t += 1
        for k in range(head * width):                           # as the reference: phi >= 1e-30
            phi[k] = max(phi[k], np.float32(1e-30))

    @njit(inline="always", nogil=True)
    def log_inplace(values, scratch, n):  # pragma: no cover - compiled
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
    def first_step(d, indptr, cols, vals, table, bit_w, bias, log_odds, weight, first_entropy,
                   codes, data, prior, mixture, first, pre):  # pragma: no cover - compiled
        """Step 1 of document d from the shared table (U, K+1): data[d], prior[d],
        mixture[d] and, when a bit improves on the empty code, that bit in codes[d] and
        pre = a = b + w_bit (T,). With the mixtures' entropy prior a code c scores
        ``weight`` H(f(c)) more (weight = epsilon L_d, :func:`prior_weight`; 0 without the
        prior), first_entropy (K+1,) holding H(f(c)) of c = 0, e_1..e_K; mixture[d] is that
        term of the code kept. first (K+1,) scratch. Returns the bit taken, or -1 (the
        empty code is final)."""
        n_bits, n_topics = bit_w.shape
        first[:] = 0.0
        for i in range(indptr[d], indptr[d + 1]):
            x, row = vals[i], cols[i]
            for j in range(n_bits + 1):
                first[j] += x * table[row, j]
        data[d], prior[d], mixture[d] = first[0], 0.0, weight * first_entropy[0]
        best, arg = -np.inf, -1
        for j in range(n_bits):                                 # first best, as argmax
            cand = first[j + 1] + log_odds[j] + weight * first_entropy[j + 1]
            if cand > best:
                best, arg = cand, j
        if arg < 0 or not best > data[d] + mixture[d]:
            return -1
        codes[d, arg] = 1
        prior[d] += log_odds[arg]
        mixture[d] = weight * first_entropy[arg + 1]
        data[d] = best - prior[d] - mixture[d]
        for t in range(n_topics):                               # a = b + sum_{k in z} w_k
            pre[t] = bias[t] + bit_w[arg, t]
        return arg

    @njit(inline="always", nogil=True)
    def prior_weight(strength, d, indptr, vals):  # pragma: no cover - compiled
        """epsilon L_d, the weight of the entropy prior's term in document d's scores
        (L_d = sum_i x_i its tokens); 0 without the prior (``strength`` 0), not summed."""
        if not strength > 0.0:
            return np.float32(0.0)
        total = np.float32(0.0)
        for i in range(indptr[d], indptr[d + 1]):
            total += vals[i]
        return strength * total

    @njit(inline="always", nogil=True)
    def log_factors(bit_w, log_r_t):  # pragma: no cover - compiled
        """log_r_t[t, j] = w_jt - max_t w_jt = ln r_jt, topic by topic (T, K), of bit_w
        (K, T) = W^T."""
        for j in range(bit_w.shape[0]):
            peak = bit_w[j].max()
            for t in range(bit_w.shape[1]):
                log_r_t[t, j] = bit_w[j, t] - peak

    @njit(nogil=True)
    def candidate_entropies(pre, top, exp_pre, exp_w_t, log_r_t, bit_w, totals, entropy,
                            log_totals, scratch):  # pragma: no cover - compiled
        """entropy[j] = H(softmax(a + w_j)) for every bit j.

        pre (T,) = a; top = max a; exp_pre (T,) = exp(a - top); exp_w_t (T, K) = r_jt =
        exp(w_jt - max_t w_jt) and log_r_t (T, K) its logarithm (:func:`log_factors`);
        bit_w (K, T) = W^T; totals (K,) = sum_t exp_pre_t r_jt, the candidates' softmax
        denominators. With s_jt = (a_t - top) + ln r_jt <= 0 and the mixture m_jt =
        exp(s_jt) / totals_j,

            H_j = -sum_t m_jt ln m_jt = ln totals_j - sum_t m_jt s_jt,

        T multiply-adds a bit in passes over contiguous rows and one logarithm a bit
        (:func:`log_inplace`), all vectorised; none per topic. A bit whose totals_j is not
        a normal float is computed directly (:func:`direct_entropy`). log_totals and
        scratch (K,) float32 scratch."""
        n_topics, n_bits = exp_w_t.shape
        for j in range(n_bits):
            entropy[j] = 0.0
            total = totals[j]
            normal = total > np.float32(1e-30) and total < np.float32(1e30)
            log_totals[j] = total if normal else np.float32(1.0)
        for t in range(n_topics):
            e, a = exp_pre[t], pre[t] - top
            r, lr = exp_w_t[t], log_r_t[t]
            for j in range(n_bits):
                entropy[j] += e * r[j] * (a + lr[j])
        log_inplace(log_totals, scratch, n_bits)
        for j in range(n_bits):
            total = totals[j]
            if total > np.float32(1e-30) and total < np.float32(1e30):
                entropy[j] = log_totals[j] - entropy[j] / total
            else:
                entropy[j] = direct_entropy(pre, bit_w, j)

    @njit(inline="always", nogil=True)
    def direct_entropy(pre, bit_w, j):  # pragma: no cover - compiled
        """H(softmax(pre + w_j)) in float64, its maximum taken off first."""
        n_topics = pre.shape[0]
        peak = pre[0] + bit_w[j, 0]
        for t in range(1, n_topics):
            peak = max(peak, pre[t] + bit_w[j, t])
        total, moment = 0.0, 0.0
        for t in range(n_topics):
            s = np.float64(pre[t] + bit_w[j, t] - peak)
            e = np.exp(s)
            total += e
            moment += e * s
        return np.float32(np.log(total) - moment / total)

    @njit(nogil=True)
    def score_candidates(start, n, cols, vals, beta, mix, phi, scratch, score):  # pragma: no cover
        """score[b] = sum_i x_i ln max(sum_t beta[w_i, t] mix[t, b], 1e-30) for the
        columns b of mix (T, width), over the document's n non-zeros from ``start``; phi
        keeps the logarithms (n, width), flat. A function of its own: its loops run to
        mix.shape, which LLVM vectorises (to a plain variable they run several times
        slower)."""
        _word_rates(start, n, cols, beta, mix, phi)             # phi_b(w_i)
        _sum_log_rates(start, n, vals, mix.shape[1], phi, scratch, score)

    @njit(inline="always", nogil=True)
    def _sum_log_rates(start, n, vals, width, phi, scratch, score):  # pragma: no cover - compiled
        """phi <- ln phi (n, width), and score[b] = sum_i x_i phi[i, b]."""
        log_inplace(phi, scratch, n * width)
        for b in range(width):
            score[b] = 0.0
        for ii in range(n):                                     # sum_i x_i ln phi_b(w_i)
            x, row = vals[start + ii], ii * width
            for b in range(width):
                score[b] += x * phi[row + b]

    @njit(nogil=True)
    def factored_softmax(exp_pre, factor, totals, inverse, mix):  # pragma: no cover
        """mix[:, c] = softmax(a + v_c) for the columns c of factor (T, width) =
        exp(v_ct - const_c), from exp_pre (T,) = exp(a - max a): mix[t, c] = exp_pre_t
        factor_tc / totals_c, totals_c = sum_t exp_pre_t factor_tc, in loops over the
        columns (vectorised; a loop over topics per column waits on each add). inverse[c]
        = 1 / totals_c, or 0 where totals_c is not a normal float: the caller computes
        those columns directly."""
        n_topics, width = factor.shape
        for c in range(width):
            totals[c] = 0.0
        for t in range(n_topics):
            e = exp_pre[t]
            for c in range(width):
                totals[c] += e * factor[t, c]
        for c in range(width):
            normal = totals[c] > np.float32(1e-30) and totals[c] < np.float32(1e30)
            inverse[c] = np.float32(1.0) / totals[c] if normal else np.float32(0.0)
        for t in range(n_topics):
            e = exp_pre[t]
            for c in range(width):
                mix[t, c] = e * factor[t, c] * inverse[c]

    @njit(inline="always", nogil=True)
    def stable_softmax_column(pre, bit_w, j, mix, c):  # pragma: no cover - compiled
        """mix[:, c] = softmax(pre + w_j) directly, its maximum taken off first: for the
        columns :func:`factored_softmax` leaves (inverse 0)."""
        n_topics = pre.shape[0]
        peak = pre[0] + bit_w[j, 0]
        for t in range(1, n_topics):
            peak = max(peak, pre[t] + bit_w[j, t])
        total = np.float32(0.0)
        for t in range(n_topics):
            mix[t, c] = np.exp(pre[t] + bit_w[j, t] - peak)
            total += mix[t, c]
        for t in range(n_topics):
            mix[t, c] /= total
