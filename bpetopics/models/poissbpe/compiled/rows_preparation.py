"""A minibatch's preparation for the pursuit from its CSR rows, written into buffers that
two threads share (:mod:`bpetopics.models.poissbpe.compiled.rows_pursuit`; compiled, numba): the packed rows,
their vocabulary, the first step's shared table (:func:`prepare_into`), and the
documents dealt into shares of decreasing work (:func:`guided_bounds`).
"""

from __future__ import annotations

import numpy as np

from bpetopics.models.poissbpe.compiled import kernels

numba = kernels.numba

if numba is not None:
    from bpetopics.compiled.kernel_cache import cached_njit
    from bpetopics.models.poissbpe.compiled.packed import distinct_in_range
    from bpetopics.models.poissbpe.compiled.pursuit_loops import log_inplace, wide_word_rates

    @cached_njit(nogil=True)
    def prepare_into(indptr_in, indices, counts, beta_t, weight, bias, indptr, cols, vals, rows,
                     words, local, beta_u, table, bit_w, exp_w_t, strength,
                     first_entropy):  # pragma: no cover - compiled
        """Written into the buffers: the packed rows (explicit zeros dropped, as
        ``PackedCounts.from_csr``), their vocabulary (words sorted, each non-zero's position
        there), beta's rows there (U, T), the first step's table ln max(beta_u f(c), 1e-30)
        over c = 0, e_1..e_K ((U, K + 1), flat), W^T (K, T) and exp(w_jt - max_t w_jt) (T, K)
        for the later steps' factored softmax; with the mixtures' entropy prior (``strength``
        > 0) the first codes' entropies H(f(c)) (K + 1,), as ln total - sum_t f_t (a_t -
        max a) of each softmax. Returns (U, non-zeros kept)."""
        n_docs = indptr_in.shape[0] - 1
        n_topics, n_words = beta_t.shape
        n_bits = weight.shape[1]
        indptr[0] = 0
        k = 0
        for d in range(n_docs):
            for i in range(indptr_in[d], indptr_in[d + 1]):
                if counts[i] != 0:
                    cols[k], vals[k], rows[k] = indices[i], counts[i], d
                    k += 1
            indptr[d + 1] = k
        distinct, position = distinct_in_range(cols[:k], n_words)
        used = distinct.shape[0]
        words[:used] = distinct
        local[:k] = position
        for u in range(used):
            for t in range(n_topics):
                beta_u[u, t] = beta_t[t, distinct[u]]
        mix = np.empty((n_topics, n_bits + 1), dtype=np.float32)       # f(c) as columns
        for j in range(n_bits + 1):
            top = np.float32(-np.inf)
            for t in range(n_topics):
                top = max(top, bias[t] + (weight[t, j - 1] if j > 0 else np.float32(0.0)))
            total = np.float32(0.0)
            for t in range(n_topics):
                a = bias[t] + (weight[t, j - 1] if j > 0 else np.float32(0.0))
                mix[t, j] = np.exp(a - top)
                total += mix[t, j]
            for t in range(n_topics):
                mix[t, j] /= total
            if strength > 0.0:                                      # H(f(c)) = ln total - E[a - top]
                moment = np.float32(0.0)
                for t in range(n_topics):
                    a = bias[t] + (weight[t, j - 1] if j > 0 else np.float32(0.0))
                    moment += mix[t, j] * (a - top)
                first_entropy[j] = np.log(total) - moment
        for j in range(n_bits):
            top = weight[0, j]
            for t in range(n_topics):
                bit_w[j, t] = weight[t, j]
                top = max(top, weight[t, j])
            for t in range(n_topics):
                exp_w_t[t, j] = np.exp(weight[t, j] - top)
        width = n_bits + 1
        flat = table[:used * width]
        wide_word_rates(0, used, np.arange(used), beta_u[:used], mix, flat)
        log_inplace(flat, np.empty(used * width, dtype=np.float32), used * width)
        return used, k

    @cached_njit(nogil=True)
    def guided_bounds(indptr, n_shares, order, bounds):  # pragma: no cover - compiled
        """The documents in ``n_shares`` shares of decreasing work (1/2, 1/4, ..., the
        last two equal), written as ``order[bounds[s]:bounds[s + 1]]``: 2^(S-1) slots of
        about equal non-zeros (longest documents first, dealt in a snake 0, 1, .., 1, 0,
        0, ...), share k taking the next half of the slots left."""
        n_docs = indptr.shape[0] - 1
        if n_shares <= 1:
            for d in range(n_docs):
                order[d] = d
            bounds[0], bounds[1] = 0, n_docs
            return
        slots = 1 << (n_shares - 1)
        lengths = np.empty(n_docs, dtype=np.int64)
        for d in range(n_docs):
            lengths[d] = indptr[d] - indptr[d + 1]                  # negated: longest first
        by_length = np.argsort(lengths, kind="mergesort")
        slot_of = np.empty(n_docs, dtype=np.int64)
        starts = np.zeros(slots + 1, dtype=np.int64)
        for p in range(n_docs):
            within, round_ = p % slots, p // slots
            slot_of[p] = within if round_ % 2 == 0 else slots - 1 - within
            starts[slot_of[p] + 1] += 1
        for s in range(slots):
            starts[s + 1] += starts[s]
        fill = starts[:slots].copy()
        for p in range(n_docs):
            order[fill[slot_of[p]]] = by_length[p]
            fill[slot_of[p]] += 1
        bounds[0] = 0
        for k in range(1, n_shares):
            bounds[k] = starts[slots - slots // (1 << k) if k < n_shares - 1 else slots - 1]
        bounds[n_shares] = n_docs
