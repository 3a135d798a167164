"""The split moves' sums in compiled passes over the non-zeros (numba, CPU): the steps of
:mod:`bpetopics.models.poissbpe.topic_split`, the reference."""

from __future__ import annotations

import numpy as np

from bpetopics.models.poissbpe.compiled import kernels

numba = kernels.numba

if numba is not None:
    from bpetopics.compiled.kernel_cache import cached_njit
    from bpetopics.models.poissbpe.compiled.two_means import two_means

    @cached_njit(nogil=True)
    def _explained_scales(indptr, indices, data, beta, mix):  # pragma: no cover - compiled
        """x_nw / sum_s beta_ws f_s(z_n) at each non-zero (nnz,): R^t_nw is
        (beta_wt f_t(z_n)) times it (:func:`bpetopics.models.poissbpe.topic_split.explained_counts`)."""
        n_topics = beta.shape[1]
        scales = np.empty(indices.shape[0])
        for d in range(indptr.shape[0] - 1):
            for i in range(indptr[d], indptr[d + 1]):
                w = indices[i]
                total = 0.0
                for t in range(n_topics):
                    total += beta[w, t] * mix[d, t]
                scales[i] = data[i] / max(total, 1e-300)
        return scales

    @cached_njit(nogil=True)
    def split_halves(indptr, indices, data, beta, mix, n_words, min_tokens, tolerance):  # pragma: no cover
        """:func:`split_gains`' loop over topics: for each topic t, the rows of R^t (the
        counts topic t explains, R^t_nw = x_nw beta_wt f_t(z_n) / sum_s beta_ws f_s(z_n))
        explaining at least ``min_tokens`` tokens, their 2-means (:func:`two_means`, its
        power iteration stopped at ``tolerance``) and the halves' summed rows. Returns
        halves (T, 2, W) and whether each topic was split (at least two rows).

        R is never held whole (T x nnz would be gigabytes at T = 200 on 10,000 documents):
        each row's tokens per topic (N, T) are summed in one pass, and a topic's kept rows
        are computed again when it is split, the same products in the same order."""
        n_topics = beta.shape[1]
        n_docs = indptr.shape[0] - 1
        scales = _explained_scales(indptr, indices, data, beta, mix)
        tokens = np.zeros((n_docs, n_topics))                      # sum_w R^t_nw
        for d in range(n_docs):
            for j in range(indptr[d], indptr[d + 1]):
                w, scale = indices[j], scales[j]
                for t in range(n_topics):
                    tokens[d, t] += beta[w, t] * mix[d, t] * scale
        halves = np.zeros((n_topics, 2, n_words))
        split = np.zeros(n_topics, dtype=np.bool_)
        kept_indptr = np.zeros(n_docs + 1, dtype=np.int64)
        kept_indices = np.empty(indices.shape[0], dtype=np.int64)
        kept_data = np.empty(indices.shape[0])
        for t in range(n_topics):
            n_kept, nnz = 0, 0
            for d in range(n_docs):                                # rows explaining enough
                if tokens[d, t] >= min_tokens:
                    for j in range(indptr[d], indptr[d + 1]):
                        kept_indices[nnz] = indices[j]
                        kept_data[nnz] = beta[indices[j], t] * mix[d, t] * scales[j]
                        nnz += 1
                    n_kept += 1
                    kept_indptr[n_kept] = nnz
            if n_kept < 2:
                continue
            split[t] = True
            second = two_means(kept_indptr[:n_kept + 1], kept_indices[:nnz], kept_data[:nnz], n_words, 10,
                               tolerance)
            for i in range(n_kept):                                # the halves' summed rows
                half = 1 if second[i] else 0
                for j in range(kept_indptr[i], kept_indptr[i + 1]):
                    halves[t, half, kept_indices[j]] += kept_data[j]
        return halves, split

    @cached_njit(nogil=True)
    def deletion_losses(indptr, indices, data, beta, mix):  # pragma: no cover - compiled
        """:func:`deletion_losses` of the CSR rows (indptr, indices, data float64), beta
        (W, T) and mix (N, T) float64: one pass over the non-zeros, a word's T shares kept.

        Only the topics with beta_wt > phi_nw (or f_t = 1) can lose anything: for 0 < f_t < 1,
        (phi - beta_wt f_t) / (1 - f_t) < phi  <=>  beta_wt > phi, and otherwise the
        renormalised rate, so the rate without t, is at least phi. The others are skipped
        before the division and the logarithm: the same losses, fewer operations."""
        n_docs = indptr.shape[0] - 1
        n_words, n_topics = beta.shape
        losses = np.zeros(n_topics)
        share = np.empty(n_topics)
        spread = 1.0 / max(n_topics - 1, 1)
        beta_sums = np.zeros(n_words)                  # sum_t beta_wt, in topic order
        for w in range(n_words):
            for t in range(n_topics):
                beta_sums[w] += beta[w, t]
        for d in range(n_docs):
            mix_d = mix[d]
            for i in range(indptr[d], indptr[d + 1]):
                w, x = indices[i], data[i]
                beta_w = beta[w]
                phi = 0.0
                for t in range(n_topics):
                    share[t] = beta_w[t] * mix_d[t]
                    phi += share[t]
                phi = max(phi, 1e-300)
                log_phi = np.nan                           # ln phi, once a topic needs it
                for t in range(n_topics):
                    if beta_w[t] <= phi and mix_d[t] < 1.0:   # the rate without t >= phi
                        continue
                    renormalised = max(phi - share[t], 0.0) / max(1.0 - mix_d[t], 1e-12)
                    rest = max(max(renormalised, (beta_sums[w] - beta_w[t]) * spread), 1e-300)
                    if rest < phi:                         # else ln phi - ln rest <= 0: nothing lost
                        if np.isnan(log_phi):
                            log_phi = np.log(phi)
                        losses[t] += x * max(log_phi - np.log(rest), 0.0)
        return losses
