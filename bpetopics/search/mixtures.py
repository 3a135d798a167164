"""Similar documents: those sharing an active bit with the query, ranked by the cosine
similarity of their topic mixtures.

PoissBPE's codes are sparse (a document has one or two of its K bits on), so the
documents holding one of a query's active bits, read from one inverted list per bit, are
a small share of the corpus, and mostly the documents whose mixtures are closest to the
query's. :class:`MixtureIndex` scores just those by the exact cosine of the mixtures and
keeps the ``k`` best, ties by the lower row. A query with fewer than ``k`` such documents
(an empty code, or rare bits) also takes the documents whose top topic (the largest
entry of the mixture, ties by the lower topic) is one of its own ``query_topics``
largest (two by default), read from one list per topic; only a query with fewer than
``k`` documents still is compared with every document.

The unit mixtures are rounded to multiples of 2^-24 (:func:`unit_mixtures`): each product
of two entries is then a multiple of 2^-48 below 1 and every partial sum of them a
multiple of 2^-48 below 2, all exact in float64, so a similarity does not depend on the
order of the sum. The compiled loop (:mod:`bpetopics.search.compiled`, numba) and the
numpy reference (:func:`nearest_reference`, used without numba) return the same rows and
the same similarities, bit for bit; duplicates tie exactly.
"""

from __future__ import annotations

import numpy as np

from bpetopics.search import compiled
from bpetopics.search.codes import QUERY_CHUNK_CELLS, pack_codes

#: The grid of the rounded unit mixtures: fine enough to keep float32's precision
#: (2^-24 near 1), coarse enough for exact float64 dot products.
GRID_BITS = 24


def unit_mixtures(mixtures) -> np.ndarray:
    """Rows (N, T) scaled to unit length and rounded to multiples of 2^-24 (float32,
    exactly; a zero row stays zero)."""
    m = np.atleast_2d(np.asarray(mixtures, dtype=np.float64))
    norms = np.linalg.norm(m, axis=-1, keepdims=True)
    unit = m / np.where(norms > 0, norms, 1.0)
    return np.ascontiguousarray(np.round(np.ldexp(unit, GRID_BITS)).astype(np.float32) * np.float32(2.0 ** -GRID_BITS))


def inverted_lists(codes) -> tuple[np.ndarray, np.ndarray]:
    """(start (K + 1,), rows (L,)) of 0/1 codes (N, K): the rows holding bit b are
    ``rows[start[b]:start[b + 1]]``, ascending."""
    holders, bits = np.nonzero(np.asarray(codes).T)
    start = np.zeros(np.asarray(codes).shape[1] + 1, dtype=np.int64)
    np.cumsum(np.bincount(holders, minlength=len(start) - 1), out=start[1:])
    return start, bits.astype(np.int64)


def top_topic_lists(unit) -> tuple[np.ndarray, np.ndarray]:
    """(start (T + 1,), rows (N,)) of mixtures (N, T): the rows whose largest entry (ties by
    the lower topic) is topic t are ``rows[start[t]:start[t + 1]]``, ascending; the lists
    :func:`inverted_lists` makes of the one-hot top topics, without an (N, T) matrix."""
    top = np.argmax(np.asarray(unit), axis=1)
    start = np.zeros(np.asarray(unit).shape[1] + 1, dtype=np.int64)
    np.cumsum(np.bincount(top, minlength=len(start) - 1), out=start[1:])
    return start, np.argsort(top, kind="stable").astype(np.int64)


def nearest_reference(unit, words, query_words, query_unit, exclude, k,
                      query_topics=compiled.QUERY_TOPICS) -> tuple[np.ndarray, np.ndarray]:
    """The numpy search :class:`MixtureIndex` compiles (the arguments as
    :func:`bpetopics.search.compiled.nearest_sharing_bits` takes them): rows (Q, k),
    similarities (Q, k) float64."""
    n, n_queries = len(unit), len(query_unit)
    top_topic = np.argmax(unit, axis=1)
    rows, sims = np.zeros((n_queries, k), dtype=np.int64), np.zeros((n_queries, k))
    chunk = max(1, QUERY_CHUNK_CELLS // max(n, 1))
    for begin in range(0, n_queries, chunk):
        part = slice(begin, begin + chunk)
        shares = np.zeros((len(query_unit[part]), n), dtype=bool)
        for b in range(words.shape[1]):
            shares |= (query_words[part, b, None] & words[None, :, b]) != 0
        allowed = np.ones_like(shares)                              # all but the row left out
        held = np.flatnonzero(exclude[part] >= 0)
        allowed[held, exclude[part][held]] = False
        shares &= allowed
        few = shares.sum(axis=1) < k                                # widen: the top-topic lists
        tops = np.argsort(-query_unit[part][few], axis=1, kind="stable")[:, :query_topics]
        shares[few] |= (top_topic[None, :] == tops[:, :, None]).any(axis=1) & allowed[few]
        few = shares.sum(axis=1) < k                                # still too few: every row
        shares[few] = allowed[few]
        s = np.where(shares, query_unit[part].astype(np.float64) @ unit.astype(np.float64).T, -np.inf)
        order = np.argsort(-s, axis=1, kind="stable")[:, :k]       # ties: the lower row first
        rows[part], sims[part] = order, np.take_along_axis(s, order, 1)
    return rows, sims


def central_first(unit, list_start, list_rows) -> np.ndarray:
    """Each inverted list's rows ordered by the cosine of their mixtures (N, T) to the
    list's mean mixture, the most central first (ties by the lower row)."""
    rows = np.array(list_rows, dtype=np.int64)
    for b in range(len(list_start) - 1):
        members = rows[list_start[b]:list_start[b + 1]]
        if len(members) < 2:
            continue
        centre = unit[members].astype(np.float64).mean(axis=0)
        members[:] = members[np.argsort(-(unit[members].astype(np.float64) @ centre), kind="stable")]
    return rows


class MixtureIndex:
    """Documents' codes and topic mixtures, for similar-document search.

    Parameters
    ----------
    codes : array of 0/1, shape (N, K)
        The documents' binary codes (dense, or scipy sparse).
    mixtures : array, shape (N, T)
        Their topic mixtures (e.g. ``PoissBPE.posterior_topic``).
    query_topics : int
        A query with fewer than ``k`` documents sharing an active bit also takes those
        whose top topic is one of its ``query_topics`` largest; 0: every document.
    """

    def __init__(self, codes, mixtures, query_topics: int = compiled.QUERY_TOPICS):
        codes = np.asarray(codes.toarray() if hasattr(codes, "toarray") else codes)
        mixtures = np.asarray(mixtures)
        if codes.ndim != 2 or mixtures.ndim != 2 or len(codes) != len(mixtures):
            raise ValueError(f"codes (N, K) and mixtures (N, T) of the same documents are needed; got shapes "
                             f"{codes.shape} and {mixtures.shape}")
        self.n_bits, self.query_topics = codes.shape[1], max(0, int(query_topics))
        self.words = pack_codes(codes)
        self.unit = unit_mixtures(mixtures)
        self.list_start, self.list_rows = inverted_lists(codes)
        self.list_rows = central_first(self.unit, self.list_start, self.list_rows)
        self.list_unit_t = compiled.topic_major_lists(self.unit, self.list_start, self.list_rows)
        self.topic_start, self.topic_rows = top_topic_lists(self.unit)     # the rows whose top topic is t
        self.topic_rows = central_first(self.unit, self.topic_start, self.topic_rows)
        self.topic_unit_t = compiled.topic_major_lists(self.unit, self.topic_start, self.topic_rows)
        self.unit_t = np.ascontiguousarray(self.unit.T)

    def __len__(self) -> int:
        return len(self.unit)

    def nearest(self, codes, mixtures, k: int = 10, exclude=None) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` documents most like each query (its code and mixture).

        Parameters
        ----------
        codes : array of 0/1, shape (Q, K) or (K,)
        mixtures : array, shape (Q, T) or (T,)
        k : int
            At most the index's documents (fewer are returned when it holds fewer).
        exclude : array of int, shape (Q,), optional
            A document to leave out of each query's answer; -1 for none.

        Returns
        -------
        rows : np.ndarray of int64, shape (Q, k)
            Most similar first, ties by the lower row.
        similarities : np.ndarray of float64, shape (Q, k)
            Cosine similarities of the (rounded) mixtures.
        """
        codes = np.asarray(codes.toarray() if hasattr(codes, "toarray") else codes)
        codes = codes[None, :] if codes.ndim == 1 else codes
        unit = unit_mixtures(mixtures)
        if codes.shape[1] != self.n_bits or unit.shape[1] != self.unit.shape[1] or len(codes) != len(unit):
            raise ValueError(f"queries of {codes.shape[1]} bits and {unit.shape[1]} topics do not match the "
                             f"index's ({self.n_bits} bits, {self.unit.shape[1]} topics), or their counts differ")
        exclude = np.full(len(unit), -1, dtype=np.int64) if exclude is None else np.asarray(exclude, np.int64)
        return self.search(pack_codes(codes), unit, exclude, k)

    def nearest_rows(self, rows, k: int = 10) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`nearest` for indexed documents ``rows`` as queries, each left out of its
        own answer."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        return self.search(self.words[rows], self.unit[rows], rows, k)

    def search(self, query_words, query_unit, exclude, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The search itself: packed query codes (Q, B), rounded unit mixtures (Q, T) and
        rows to leave out (Q,) int64, as :meth:`nearest` prepares them."""
        k = max(0, min(int(k), len(self) - int(bool((exclude >= 0).any()))))
        if not compiled.AVAILABLE or k == 0:
            return nearest_reference(self.unit, self.words, query_words, query_unit, exclude, k, self.query_topics)
        rows = np.empty((len(query_unit), k), dtype=np.int64)
        sims = np.empty((len(query_unit), k))
        compiled.nearest_sharing_bits(self.list_start, self.list_rows, self.list_unit_t, self.topic_start,
                                      self.topic_rows, self.topic_unit_t, self.unit, self.unit_t,
                                      np.ascontiguousarray(query_words), np.ascontiguousarray(query_unit),
                                      np.ascontiguousarray(exclude), self.query_topics, rows, sims)
        return rows, sims


def compile_search_loops() -> None:
    """Compile (or load from numba's cache) :class:`MixtureIndex`'s loops for this
    machine, by searching a small planted index (``bpetopics compile`` runs it);
    nothing without numba."""
    if not compiled.AVAILABLE:
        return
    rng = np.random.default_rng(0)
    codes = (rng.random((64, 16)) < 0.1).astype(np.uint8)
    MixtureIndex(codes, rng.dirichlet(np.full(4, 0.5), size=64)).nearest_rows(np.arange(64), 5)
