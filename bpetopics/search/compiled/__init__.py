"""The compiled loops of :class:`bpetopics.search.mixtures.MixtureIndex` (numba, CPU).

:func:`nearest_sharing_bits` answers a batch of queries in one call: for each query, the
documents on the inverted lists of its code's active bits, scored by the dot product of
unit mixtures and kept in a top-k, ties by the lower row. The batch's queries are
grouped by bit (:func:`group_by_bit`), and each inverted list is scored once for all the
queries holding its bit (:func:`score_lists`): one matrix product (queries x topics
times topics x the list's documents; BLAS), since each list keeps its documents'
mixtures beside each other, topic by topic (:func:`topic_major_lists`); a list held by
one query alone is scored in a few vectorised passes (:func:`score_list`). Then each
query's scores are read list by list, and only those that can enter its top-k are
looked at one by one. A document on several of a query's lists enters the top-k once: a
score that can enter it is checked against the rows it holds (a row offered earlier and
left out, or pushed out, cannot enter it again, since the bar only rises). The lists
are ordered most central first (:func:`bpetopics.search.mixtures.central_first`), so
the bar rises early.

The queries with fewer than k such documents are compared with every document
afterwards, a chunk of them at once: one float32 matrix product, from which
:func:`bpetopics.search.compiled.top_k.select_all` picks the documents that can be in the answer
and scores those alone exactly.

The mixtures are rounded to a grid on which every product and partial sum is exact in
float64 (:func:`bpetopics.search.mixtures.unit_mixtures`), so the order of a sum does
not matter: the loops may be vectorised (``fastmath`` reassociation), BLAS may sum in
any order, and the similarities are those of
:func:`bpetopics.search.mixtures.nearest_reference` bit for bit.
"""

from __future__ import annotations

import numpy as np

try:
    import numba
except ImportError:                                   # pragma: no cover - numba optional
    numba = None

#: Whether numba imports: the compiled loops exist.
AVAILABLE = numba is not None

#: Similarities to the documents of their lists held at once (float64): the queries of
#: a call are grouped by bit a chunk of about this many at a time.
SCORE_CELLS = 1 << 18

#: The largest topics of a query whose top-topic lists it searches when fewer than k
#: documents share an active bit with it (MixtureIndex's default).
QUERY_TOPICS = 2


def topic_major_lists(unit, list_start, list_rows) -> np.ndarray:
    """The inverted lists' mixtures (float64, flat, length L * T): list b's, a (T, n_b)
    block of its documents' mixtures topic by topic, from ``list_start[b] * T``."""
    n_topics = unit.shape[1]
    out = np.empty(len(list_rows) * n_topics)
    for b in range(len(list_start) - 1):
        begin, end = int(list_start[b]), int(list_start[b + 1])
        out[begin * n_topics:end * n_topics] = unit[list_rows[begin:end]].T.astype(np.float64).ravel()
    return out


if numba is not None:
    from bpetopics.compiled.kernel_cache import cached_njit
    from bpetopics.search.compiled.top_k import ALL_CELLS, BLOCK, offer, select_all

    _EXACT_SUMS = {"reassoc", "contract"}     # exact arithmetic: any order, same result

    @cached_njit(nogil=True, fastmath=_EXACT_SUMS)
    def score_list(list_unit_t, begin, end, query, sims):  # pragma: no cover - compiled
        """sims[:end - begin] = the dot products of ``query`` with the mixtures of the
        list entries [begin, end) (:func:`topic_major_lists`), four topics a pass."""
        n, n_topics = end - begin, query.shape[0]
        block = list_unit_t[begin * n_topics:end * n_topics]
        for j in range(n):
            sims[j] = 0.0
        for t in range(0, n_topics - 3, 4):
            a, b, c, d = block[t * n:(t + 1) * n], block[(t + 1) * n:(t + 2) * n], \
                block[(t + 2) * n:(t + 3) * n], block[(t + 3) * n:(t + 4) * n]
            wa, wb, wc, wd = query[t], query[t + 1], query[t + 2], query[t + 3]
            for j in range(n):
                sims[j] += wa * a[j] + wb * b[j] + wc * c[j] + wd * d[j]
        for t in range(n_topics - n_topics % 4, n_topics):
            column, weight = block[t * n:(t + 1) * n], query[t]
            for j in range(n):
                sims[j] += weight * column[j]

    @cached_njit(nogil=True)
    def scan_scores(sims, list_rows, begin, end, exclude, best_sim, best_row, size, k):  # pragma: no cover - compiled
        """Offer the documents ``list_rows[begin:end]``, scored ``sims[:end - begin]``, to
        the top-k holding ``size`` entries, leaving out the row ``exclude`` and the rows
        it holds already; returns the new size."""
        check = size > 0                               # rows of earlier lists are held
        bar = best_sim[k - 1] if size == k else -np.inf
        for j in range(end - begin):
            sim = sims[j]
            if sim < bar:
                continue
            row = list_rows[begin + j]
            if row == exclude:
                continue
            held = False
            if check:
                for i in range(size):
                    if best_row[i] == row:
                        held = True
            if not held:
                size = offer(sim, row, best_sim, best_row, size, k)
                if size == k:
                    bar = best_sim[k - 1]
        return size

    @cached_njit(nogil=True)
    def active_bits(n_bits, query_words):  # pragma: no cover - compiled
        """(held_start (Q + 1,), held_bit (H,)): query q's active bits below ``n_bits``,
        ascending, are ``held_bit[held_start[q]:held_start[q + 1]]``."""
        n_queries, n_words = query_words.shape
        one = np.uint64(1)
        held_start = np.zeros(n_queries + 1, dtype=np.int64)
        for step in range(2):                          # count, then fill
            held_bit = np.empty(held_start[n_queries], dtype=np.int64)
            n_held = 0
            for q in range(n_queries):
                for w in range(n_words):
                    word = query_words[q, w]
                    bit = 0
                    while word:
                        if word & one and w * 64 + bit < n_bits:
                            if step == 1:
                                held_bit[n_held] = w * 64 + bit
                            n_held += 1
                        word >>= one
                        bit += 1
                held_start[q + 1] = n_held
        return held_start, held_bit

    @cached_njit(nogil=True)
    def group_by_bit(held_start, held_bit, n_bits, begin, stop):  # pragma: no cover - compiled
        """The queries [begin, stop) grouped by active bit (:func:`active_bits`):
        (holder_start (K + 1,), holder): those holding bit b, ascending, are
        ``holder[holder_start[b]:holder_start[b + 1]]``."""
        holder_start = np.zeros(n_bits + 1, dtype=np.int64)
        for e in range(held_start[begin], held_start[stop]):
            holder_start[held_bit[e] + 1] += 1
        for b in range(n_bits):
            holder_start[b + 1] += holder_start[b]
        holder = np.empty(holder_start[n_bits], dtype=np.int64)
        fill = holder_start[:n_bits].copy()
        for q in range(begin, stop):
            for e in range(held_start[q], held_start[q + 1]):
                holder[fill[held_bit[e]]] = q
                fill[held_bit[e]] += 1
        return holder_start, holder

    @cached_njit(nogil=True)
    def score_lists(list_start, list_unit_t, query_unit, holder_start, holder, score_start, scores):  # pragma: no cover - compiled
        """Each inverted list b scored once for the queries holding its bit (``holder``, as
        :func:`group_by_bit` gives): their similarities to its documents, a (queries,
        documents) block of ``scores`` from ``score_start[b]``."""
        n_topics = query_unit.shape[1]
        most = 1
        for b in range(list_start.shape[0] - 1):
            most = max(most, holder_start[b + 1] - holder_start[b])
        queries = np.empty((most, n_topics))
        for b in range(list_start.shape[0] - 1):
            m, n = holder_start[b + 1] - holder_start[b], list_start[b + 1] - list_start[b]
            if m == 0 or n == 0:
                continue
            for i in range(m):
                for t in range(n_topics):
                    queries[i, t] = query_unit[holder[holder_start[b] + i], t]
            out = scores[score_start[b]:score_start[b] + m * n].reshape((m, n))
            if m == 1:
                score_list(list_unit_t, list_start[b], list_start[b + 1], queries[0], out[0])
            else:                                      # exact sums: BLAS's order does not matter
                block = list_unit_t[list_start[b] * n_topics:list_start[b + 1] * n_topics].reshape((n_topics, n))
                np.dot(queries[:m], block, out)

    @cached_njit(nogil=True)
    def top_topics(query_unit, queries, m):  # pragma: no cover - compiled
        """(top_start (U + 1,), top_of (U * m',)): the ``m' = min(m, T)`` largest topics of
        each query ``queries[u]``, largest first, ties by the lower topic, are
        ``top_of[top_start[u]:top_start[u + 1]]`` (the order of a stable sort)."""
        n_topics = query_unit.shape[1]
        m = min(m, n_topics)
        top_start = np.arange(queries.shape[0] + 1) * m
        top_of = np.empty(queries.shape[0] * m, dtype=np.int64)
        taken = np.zeros(n_topics, dtype=np.bool_)
        for u in range(queries.shape[0]):
            taken[:] = False
            for i in range(m):
                pick = -1
                for t in range(n_topics):
                    if not taken[t] and (pick < 0 or query_unit[queries[u], t] > query_unit[queries[u], pick]):
                        pick = t
                taken[pick] = True
                top_of[u * m + i] = pick
        return top_start, top_of

    @cached_njit(nogil=True)
    def scan_held_lists(list_start, list_rows, list_unit_t, query_unit, exclude, held_start, held_list, queries,
                        sizes, out_rows, out_sims, short):  # pragma: no cover - compiled
        """Each query ``queries[u]`` (ascending) offered the documents of its lists
        ``held_list[held_start[u]:held_start[u + 1]]``, on top of the ``sizes[u]`` best it
        holds in ``out_rows``/``out_sims`` (a top-k, k: ``out_rows.shape[1]``; the rest
        -1 and -inf). The queries still holding fewer than k are listed in ``short``;
        returns their count."""
        n_lists, n_topics, k = list_start.shape[0] - 1, query_unit.shape[1], out_rows.shape[1]
        n_queries = queries.shape[0]
        best_sim = np.empty(k)
        best_row = np.empty(k, dtype=np.int64)
        query = np.empty(n_topics)
        sub_unit = np.empty((n_queries, n_topics))
        for u in range(n_queries):
            for t in range(n_topics):
                sub_unit[u, t] = query_unit[queries[u], t]
        score_start = np.zeros(n_lists + 1, dtype=np.int64)
        score_at = np.empty(held_list.shape[0], dtype=np.int64)   # where each (query, list)'s scores lie
        rank = np.empty(n_lists, dtype=np.int64)
        n_short = 0
        stop = 0
        while stop < n_queries:                        # chunks of about SCORE_CELLS scores
            begin, cells = stop, 0
            while stop < n_queries and (stop == begin or cells < SCORE_CELLS):
                for e in range(held_start[stop], held_start[stop + 1]):
                    cells += list_start[held_list[e] + 1] - list_start[held_list[e]]
                stop += 1
            scores = np.empty(cells)
            if stop - begin == 1:                      # one query: its lists one after the other
                at = 0
                for t in range(n_topics):
                    query[t] = sub_unit[begin, t]
                for e in range(held_start[begin], held_start[stop]):
                    score_at[e] = at
                    score_list(list_unit_t, list_start[held_list[e]], list_start[held_list[e] + 1], query,
                               scores[at:])
                    at += list_start[held_list[e] + 1] - list_start[held_list[e]]
            else:
                holder_start, holder = group_by_bit(held_start, held_list, n_lists, begin, stop)
                for b in range(n_lists):
                    score_start[b + 1] = score_start[b] + (holder_start[b + 1] - holder_start[b]) * \
                        (list_start[b + 1] - list_start[b])
                score_lists(list_start, list_unit_t, sub_unit, holder_start, holder, score_start, scores)
                for b in range(n_lists):
                    rank[b] = 0                        # the queries of list b met so far
                for u in range(begin, stop):
                    for e in range(held_start[u], held_start[u + 1]):
                        b = held_list[e]
                        score_at[e] = score_start[b] + rank[b] * (list_start[b + 1] - list_start[b])
                        rank[b] += 1
            for u in range(begin, stop):
                q = queries[u]
                size = sizes[u]
                for i in range(size):
                    best_row[i] = out_rows[q, i]
                    best_sim[i] = out_sims[q, i]
                for e in range(held_start[u], held_start[u + 1]):
                    b = held_list[e]
                    first, last = list_start[b], list_start[b + 1]
                    size = scan_scores(scores[score_at[e]:score_at[e] + last - first], list_rows, first, last,
                                       exclude[q], best_sim, best_row, size, k)
                for i in range(k):
                    out_rows[q, i] = best_row[i] if i < size else -1
                    out_sims[q, i] = best_sim[i] if i < size else -np.inf
                if size < k:
                    short[n_short] = q
                    n_short += 1
        return n_short

    @cached_njit(nogil=True)
    def nearest_sharing_bits(list_start, list_rows, list_unit_t, topic_start, topic_rows, topic_unit_t, unit, unit_t,
                             query_words, query_unit, exclude, query_topics, out_rows, out_sims):  # pragma: no cover - compiled
        """The top-k of each query (k: ``out_rows.shape[1]``) into ``out_rows`` and
        ``out_sims``.

        list_start (K + 1,), list_rows (L,): the inverted lists (the rows holding bit b
        are ``list_rows[list_start[b]:list_start[b + 1]]``); list_unit_t (L * T,)
        float64: their rounded unit mixtures (:func:`topic_major_lists`); topic_start
        (T + 1,), topic_rows (N,), topic_unit_t (N * T,): the same of the top-topic lists
        (the rows whose largest mixture entry is topic t); unit (N, T) and
        unit_t (T, N) float32: every document's; query_words (Q, B) uint64: the packed query codes;
        query_unit (Q, T) float32; exclude (Q,) int64: a row to leave out of each
        answer, -1 for none; query_topics: the top-topic lists a query with fewer than k
        documents sharing a bit searches (those of its largest topics).
        """
        n_topics, n_docs, n_queries = query_unit.shape[1], unit_t.shape[1], query_unit.shape[0]
        n_bits = list_start.shape[0] - 1
        k = out_rows.shape[1]
        held_start, held_bit = active_bits(n_bits, query_words)
        best_sim = np.empty(k)
        best_row = np.empty(k, dtype=np.int64)
        query = np.empty(n_topics)
        unanswered = np.empty(n_queries, dtype=np.int64)
        n_unanswered = scan_held_lists(list_start, list_rows, list_unit_t, query_unit, exclude, held_start, held_bit,
                                       np.arange(n_queries), np.zeros(n_queries, dtype=np.int64), out_rows, out_sims,
                                       unanswered)
        if n_unanswered > 0:                           # too few share a bit: the query's top topics' lists
            top_start, top_of = top_topics(query_unit, unanswered[:n_unanswered], query_topics)
            sizes = np.full(n_unanswered, k, dtype=np.int64)
            for i in range(n_unanswered):
                q = unanswered[i]
                while sizes[i] > 0 and out_rows[q, sizes[i] - 1] < 0:
                    sizes[i] -= 1
            short = np.empty(n_unanswered, dtype=np.int64)
            n_unanswered = scan_held_lists(topic_start, topic_rows, topic_unit_t, query_unit, exclude, top_start,
                                           top_of, unanswered[:n_unanswered].copy(), sizes, out_rows, out_sims, short)
            unanswered[:n_unanswered] = short[:n_unanswered]
        chunk = max(1, ALL_CELLS // max(n_docs, 1))
        tops = np.empty((n_docs + BLOCK - 1) // BLOCK)
        for begin in range(0, n_unanswered, chunk):
            stop = min(n_unanswered, begin + chunk)
            queries = np.empty((stop - begin, n_topics), dtype=np.float32)
            for i in range(stop - begin):
                for t in range(n_topics):
                    queries[i, t] = query_unit[unanswered[begin + i], t]
            approx = np.dot(queries, unit_t)            # float32: within top_k.float32_margin
            for i in range(stop - begin):
                q = unanswered[begin + i]
                query[:] = queries[i]
                size = select_all(approx[i], exclude[q], query, unit, best_sim, best_row, k, tops)
                for j in range(k):
                    out_rows[q, j] = best_row[j] if j < size else -1
                    out_sims[q, j] = best_sim[j] if j < size else -np.inf
