"""The compiled loops of :class:`bpetopics.search.mixtures.MixtureIndex` (numba, CPU).

:func:`nearest_sharing_bits` answers a batch of queries in one call: for each query, the
documents on the inverted lists of its code's active bits (each once), scored by the dot
product of unit mixtures and kept in a top-k, ties by the lower row. The queries with
fewer than k such documents are compared with every document afterwards, all at once
(one matrix product). The mixtures are rounded to a grid on which every product and
partial sum is exact in float64 (:func:`bpetopics.search.mixtures.unit_mixtures`), so the
order of a sum does not matter: the loops may be vectorised (``fastmath``
reassociation), the matrix product may sum in any order, and the similarities are those
of :func:`bpetopics.search.mixtures.nearest_reference` bit for bit.

Documents are scored a block at a time; a block whose best similarity cannot enter the
full top-k is passed over without looking at its rows one by one.
"""

from __future__ import annotations

import numpy as np

try:
    import numba
except ImportError:                                   # pragma: no cover - numba optional
    numba = None

#: Whether numba imports: the compiled loops exist.
AVAILABLE = numba is not None

#: Documents scored before the block is compared with the top-k.
BLOCK = 8

#: Similarities held at once by the comparison with every document (queries x documents).
ALL_CELLS = 1 << 22

if numba is not None:
    _EXACT_SUMS = {"reassoc", "contract"}     # exact arithmetic: any order, same result

    @numba.njit(cache=True, nogil=True)
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

    @numba.njit(cache=True, nogil=True, fastmath=_EXACT_SUMS)
    def score_block(vectors, begin, end, query, sims):  # pragma: no cover - compiled
        """sims[j - begin] = vectors[j] . query for j in [begin, end); returns the largest."""
        top = -np.inf
        for j in range(begin, end):
            row = vectors[j]
            total = 0.0
            for t in range(query.shape[0]):
                total += query[t] * row[t]
            sims[j - begin] = total
            top = max(top, total)
        return top

    @numba.njit(cache=True, nogil=True)
    def scan_list(vectors, rows, begin, end, query, exclude, words, earlier, best_sim, best_row, size, k,
                  sims):  # pragma: no cover - compiled
        """Offer the documents ``rows[begin:end]`` (mixtures ``vectors[begin:end]``) to the
        top-k, leaving out the row ``exclude`` and any whose code shares a bit with
        ``earlier`` (offered already). Returns the new size."""
        check = False
        for w in range(earlier.shape[0]):
            if earlier[w]:
                check = True
        for block in range(begin, end, BLOCK):
            stop = min(end, block + BLOCK)
            top = score_block(vectors, block, stop, query, sims)
            if size == k and top < best_sim[k - 1]:
                continue
            for j in range(block, stop):
                row = rows[j]
                if row == exclude:
                    continue
                if check:
                    seen = False
                    for w in range(earlier.shape[0]):
                        if words[row, w] & earlier[w]:
                            seen = True
                    if seen:
                        continue
                size = offer(sims[j - block], row, best_sim, best_row, size, k)
        return size

    @numba.njit(cache=True, nogil=True)
    def select_all(sims, exclude, best_sim, best_row, k):  # pragma: no cover - compiled
        """The top-k of one row of similarities to every document, ``exclude`` left out;
        returns its size."""
        size = 0
        for block in range(0, sims.shape[0], BLOCK):
            stop = min(sims.shape[0], block + BLOCK)
            if size == k:
                top = sims[block]
                for j in range(block + 1, stop):
                    top = max(top, sims[j])
                if top < best_sim[k - 1]:
                    continue
            for j in range(block, stop):
                if j != exclude:
                    size = offer(sims[j], j, best_sim, best_row, size, k)
        return size

    @numba.njit(cache=True, nogil=True)
    def nearest_sharing_bits(words, list_rows, list_unit, list_start, unit_t, query_words, query_unit, exclude,
                             out_rows, out_sims):  # pragma: no cover - compiled
        """The top-k of each query (k: ``out_rows.shape[1]``) into ``out_rows`` and
        ``out_sims``.

        words (N, B) uint64: the documents' packed codes; list_start (K + 1,), list_rows
        (L,): the inverted lists (the rows holding bit b are
        ``list_rows[list_start[b]:list_start[b + 1]]``, ascending); list_unit (L, T)
        float64: their rounded unit mixtures; unit_t (T, N) float64: every document's;
        query_words (Q, B), query_unit (Q, T) float32; exclude (Q,) int64: a row to
        leave out of each answer, -1 for none.
        """
        n_topics, n_words, n_docs = query_unit.shape[1], words.shape[1], unit_t.shape[1]
        k = out_rows.shape[1]
        best_sim = np.empty(k)
        best_row = np.empty(k, dtype=np.int64)
        sims = np.empty(BLOCK)
        query = np.empty(n_topics)
        earlier = np.zeros(n_words, dtype=np.uint64)
        one = np.uint64(1)
        unanswered = np.empty(query_words.shape[0], dtype=np.int64)
        n_unanswered = 0
        for q in range(query_words.shape[0]):
            for t in range(n_topics):
                query[t] = query_unit[q, t]
            earlier[:] = 0
            size = 0
            for w in range(n_words):
                word = query_words[q, w]
                if not word:
                    continue
                for bit in range(64):
                    mask = one << np.uint64(bit)
                    if not word & mask:
                        continue
                    b = w * 64 + bit
                    size = scan_list(list_unit, list_rows, list_start[b], list_start[b + 1], query, exclude[q],
                                     words, earlier, best_sim, best_row, size, k, sims)
                    earlier[w] |= mask
            if size < k:                               # too few share a bit: every document, below
                unanswered[n_unanswered] = q
                n_unanswered += 1
                continue
            for i in range(k):
                out_rows[q, i] = best_row[i]
                out_sims[q, i] = best_sim[i]
        chunk = max(1, ALL_CELLS // max(n_docs, 1))
        for begin in range(0, n_unanswered, chunk):
            stop = min(n_unanswered, begin + chunk)
            queries = np.empty((stop - begin, n_topics))
            for i in range(stop - begin):
                for t in range(n_topics):
                    queries[i, t] = query_unit[unanswered[begin + i], t]
            all_sims = np.dot(queries, unit_t)         # exact: any order of summation
            for i in range(stop - begin):
                q = unanswered[begin + i]
                size = select_all(all_sims[i], exclude[q], best_sim, best_row, k)
                for j in range(k):
                    out_rows[q, j] = best_row[j] if j < size else -1
                    out_sims[q, j] = best_sim[j] if j < size else -np.inf
