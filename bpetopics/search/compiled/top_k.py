"""Keeping the k most similar documents of a query (:func:`offer`: most similar first,
ties by the lower row), and finding them among every document from float32
similarities (:func:`select_all`): the top-k steps of the compiled search loops
(:mod:`bpetopics.search.compiled`; numba, CPU).

A float32 dot product of two unit mixtures on the search's grid is within
:func:`float32_margin` of the exact one, so the documents whose float32 similarity is
more than twice that below the k-th best cannot be in the answer: they are passed over,
a block of :data:`BLOCK` at a time where the block's largest is, and the others are
scored exactly (float64, exact on the grid).
"""

from __future__ import annotations

import numpy as np

try:
    import numba
except ImportError:                                   # pragma: no cover - numba optional
    numba = None

#: Documents a block in the comparison with every document: the blocks whose largest
#: similarity cannot enter the top-k are passed over.
BLOCK = 16

#: Float32 similarities held at once by the comparison with every document (queries x
#: documents).
ALL_CELLS = 1 << 20

if numba is not None:
    from bpetopics.compiled.kernel_cache import cached_njit

    _EXACT_MAXIMA = {"reassoc", "nnan", "nsz"}  # the largest of numbers, none NaN: any order

    @cached_njit(nogil=True)
    def offer(sim, row, best_sim, best_row, size, k):  # pragma: no cover - compiled
        """Insert (sim, row) into the top-k (most similar first, ties by the lower row)
        holding ``size`` entries; returns the new size."""
        if size == k:
            if sim < best_sim[k - 1] or (sim == best_sim[k - 1] and row > best_row[k - 1]):
                return size
            i = k - 1
        else:
            i = size
            size += 1
        while i > 0 and (best_sim[i - 1] < sim or (best_sim[i - 1] == sim and best_row[i - 1] > row)):
            best_sim[i] = best_sim[i - 1]
            best_row[i] = best_row[i - 1]
            i -= 1
        best_sim[i] = sim
        best_row[i] = row
        return size

    @cached_njit(nogil=True)
    def float32_margin(n_topics):  # pragma: no cover - compiled
        """A bound on how far a float32 dot product of two (rounded) unit mixtures of
        ``n_topics`` entries, summed in any order, is from the exact one: n_topics
        roundings of at most 2^-24 of a sum of products below 1 in all (with room)."""
        return 3.0 * n_topics * 2.0 ** -24

    @cached_njit(nogil=True, fastmath=_EXACT_MAXIMA)
    def block_maxima(sims, tops):  # pragma: no cover - compiled
        """tops[i] = the largest of ``sims[i * BLOCK:(i + 1) * BLOCK]``."""
        whole = sims.shape[0] // BLOCK
        for i in range(whole):
            block = sims[i * BLOCK:(i + 1) * BLOCK]
            top = block[0]
            for j in range(1, BLOCK):
                top = block[j] if block[j] > top else top
            tops[i] = top
        if whole < tops.shape[0]:
            top = -np.inf
            for j in range(whole * BLOCK, sims.shape[0]):
                top = sims[j] if sims[j] > top else top
            tops[whole] = top

    @cached_njit(nogil=True)
    def select_all(approx, exclude, query, unit, best_sim, best_row, k, tops):  # pragma: no cover - compiled
        """The top-k of ``query`` (float64) among every document (``unit`` (N, T)),
        ``exclude`` left out, from ``approx``: its float32 similarities to them, within
        :func:`float32_margin` of the exact ones (the excluded row's set to -inf).
        Returns the top-k's size; ``tops``: room for the largest of each block.

        At least k documents reach the k-th largest block maximum ``bar`` in float32, so
        the k-th largest exact similarity is at least ``bar - margin`` and every
        document of the answer at least ``bar - 2 margin`` in float32: only those are
        scored exactly."""
        n, n_topics = approx.shape[0], query.shape[0]
        if 0 <= exclude < n:
            approx[exclude] = -np.inf
        block_maxima(approx, tops)
        size = 0
        for i in range(tops.shape[0]):
            size = offer(tops[i], i, best_sim, best_row, size, k)
        cut = best_sim[k - 1] - 2.0 * float32_margin(n_topics) if size == k else -np.inf
        size = 0
        for i in range(tops.shape[0]):
            if tops[i] < cut:
                continue
            for j in range(i * BLOCK, min(n, (i + 1) * BLOCK)):
                if j == exclude or approx[j] < cut:
                    continue
                sim = 0.0
                for t in range(n_topics):
                    sim += query[t] * unit[j, t]
                if size < k or sim >= best_sim[k - 1]:
                    size = offer(sim, j, best_sim, best_row, size, k)
        return size
