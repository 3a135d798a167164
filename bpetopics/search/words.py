"""Similar documents by topics and words together.

A topic mixture says what a document is about, not which of a topic's documents say the
same thing: the documents of one topic have nearly the same mixture, and their order
within it carries little. The words tell them apart, and the topics join documents that
say one thing in different words. :class:`TopicWordIndex` scores every indexed document
``d`` for a query ``q`` by

    s(q, d) = (1 - w) cos(theta_q, theta_d) + w cos(v_q, v_d)

(``theta``: the topic mixtures; ``v``: TF-IDF vectors; ``w``: :data:`WORD_WEIGHT`), mixing
a topic model with a word model as retrieval with topic models has done since Wei and
Croft (2006): either alone finds fewer documents of the query's own class than both
together (docs/results/search.md). The cost of a query is that of a TF-IDF search (a
sparse product over the documents holding its words) plus one dense product of its
mixture with the documents'.

TF-IDF as scikit-learn's ``TfidfTransformer`` with its defaults makes it: ``idf(w) =
ln((1 + N) / (1 + df(w))) + 1`` over the N indexed documents, ``v = counts x idf``
scaled to unit length (a document without a counted word has the zero vector).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from bpetopics.search.codes import QUERY_CHUNK_CELLS, normalized

#: ``w``: the words' share of the score (0: the topic mixtures alone, 1: the words alone).
WORD_WEIGHT = 0.7


class WordVectors:
    """TF-IDF vectors with the IDF of a set of documents.

    Parameters
    ----------
    counts : scipy.sparse matrix or array, shape (N, W)
        The documents' word counts; the IDF is theirs.

    Attributes
    ----------
    idf : np.ndarray of float64, shape (W,)
    unit : scipy.sparse.csr_matrix of float32, shape (N, W)
        The documents' TF-IDF vectors, unit length (computed in float64, kept in float32:
        half the memory of the counts' float64 copy, and cosines within 1e-6).
    """

    def __init__(self, counts):
        counts = sp.csr_matrix(counts)
        n_docs = counts.shape[0]
        df = np.bincount(counts.indices[counts.data != 0], minlength=counts.shape[1])
        self.idf = np.log((1.0 + n_docs) / (1.0 + df)) + 1.0          # smooth idf, as scikit-learn's
        self.unit = self.vectors(counts)

    def vectors(self, counts) -> sp.csr_matrix:
        """Unit TF-IDF vectors (Q, W), float32, of counts (Q, W) with these documents' IDF."""
        weighted = sp.csr_matrix(counts, dtype=np.float64) @ sp.diags(self.idf)
        norms = np.sqrt(np.asarray(weighted.multiply(weighted).sum(axis=1)).ravel())
        return sp.csr_matrix(sp.diags(1.0 / np.where(norms > 0, norms, 1.0)) @ weighted, dtype=np.float32)


class TopicWordIndex:
    """Documents indexed by their topic mixtures and their words, searched exhaustively
    by the blended score s(q, d) of the module docstring.

    Parameters
    ----------
    mixtures : array, shape (N, T)
        The documents' topic mixtures.
    counts : scipy.sparse matrix or array, shape (N, W)
        Their word counts (the IDF is theirs).
    """

    def __init__(self, mixtures, counts):
        mixtures = np.asarray(mixtures)
        if mixtures.ndim != 2 or mixtures.shape[0] != counts.shape[0]:
            raise ValueError(f"mixtures (N, T) and counts (N, W) of the same documents are needed; got shapes "
                             f"{mixtures.shape} and {counts.shape}")
        self.unit_mixtures = normalized(mixtures, np.float64)
        self.words = WordVectors(counts)
        self.postings = sp.csr_matrix(self.words.unit.T)               # (W, N): the documents holding each word

    def __len__(self) -> int:
        return len(self.unit_mixtures)

    def scores(self, query_mixtures, query_vectors, word_weight: float = WORD_WEIGHT) -> np.ndarray:
        """s(q, d) (Q, N) of queries' mixtures (Q, T) and unit TF-IDF vectors (Q, W) with
        every indexed document."""
        w = float(word_weight)
        topics = normalized(np.atleast_2d(query_mixtures), np.float64) @ self.unit_mixtures.T
        if w == 0.0:
            return topics
        words = (_csr(query_vectors) @ self.postings).toarray()                 # cos(v_q, v_d)
        topics *= 1.0 - w
        topics += w * words
        return topics

    def nearest(self, query_mixtures, query_vectors, k: int = 10, exclude=None,
                word_weight: float = WORD_WEIGHT) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` documents with the highest s(q, d) for each query.

        Parameters
        ----------
        query_mixtures : array, shape (Q, T)
        query_vectors : scipy.sparse matrix, shape (Q, W)
            Unit TF-IDF vectors (``self.words.vectors(counts)``).
        k : int
            At most the index's documents.
        exclude : array of int, shape (Q,), optional
            A document to leave out of each query's answer; -1 for none.
        word_weight : float
            ``w`` of s(q, d), from 0 to 1.

        Returns
        -------
        rows : np.ndarray of int64, shape (Q, k)
            Highest score first, ties by the lower row.
        scores : np.ndarray of float64, shape (Q, k)
        """
        query_mixtures, query_vectors = np.atleast_2d(query_mixtures), _csr(query_vectors)
        if query_mixtures.shape[1] != self.unit_mixtures.shape[1] or query_vectors.shape[1] != self.postings.shape[0] \
                or len(query_mixtures) != query_vectors.shape[0]:
            raise ValueError(f"queries of {query_mixtures.shape[1]} topics and {query_vectors.shape[1]} words do not "
                             f"match the index's ({self.unit_mixtures.shape[1]} topics, {self.postings.shape[0]} "
                             f"words), or their counts differ")
        n_queries, n = len(query_mixtures), len(self)
        exclude = np.full(n_queries, -1, dtype=np.int64) if exclude is None else np.asarray(exclude, np.int64)
        k = max(0, min(int(k), n - int(bool((exclude >= 0).any()))))
        rows, scores = np.zeros((n_queries, k), dtype=np.int64), np.zeros((n_queries, k))
        chunk = max(1, QUERY_CHUNK_CELLS // max(n, 1))
        for begin in range(0, n_queries, chunk):
            part = slice(begin, begin + chunk)
            vectors = query_vectors if chunk >= n_queries else query_vectors[part]
            s = self.scores(query_mixtures[part], vectors, word_weight)
            held = np.flatnonzero(exclude[part] >= 0)
            s[held, exclude[part][held]] = -np.inf
            rows[part], scores[part] = top_k(s, k)
        return rows, scores

    def nearest_rows(self, rows, k: int = 10, word_weight: float = WORD_WEIGHT) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`nearest` for indexed documents ``rows`` as queries, each left out of its
        own answer."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        return self.nearest(self.unit_mixtures[rows], self.words.unit[rows], k, rows, word_weight)


def _csr(x):
    """``x`` as a CSR matrix (itself when it is one)."""
    return x.tocsr() if sp.issparse(x) else sp.csr_matrix(x)


def top_k(scores, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` highest of each row of ``scores`` (Q, N), ties by the lower column:
    (columns (Q, k) int64, scores (Q, k))."""
    scores = np.asarray(scores)
    n_queries, n = scores.shape
    if k == 0:
        return np.zeros((n_queries, 0), dtype=np.int64), np.zeros((n_queries, 0))
    part = np.argpartition(scores, n - k, axis=1)[:, n - k:]           # k columns holding the k highest values
    kth = np.take_along_axis(scores, part, 1).min(axis=1, keepdims=True)
    columns = np.empty((n_queries, k), dtype=np.int64)
    for q in np.flatnonzero((scores == kth).sum(axis=1) > 1):          # a tie at the k-th value: the lower columns
        above, at = np.flatnonzero(scores[q] > kth[q]), np.flatnonzero(scores[q] == kth[q])
        part[q] = np.concatenate([above, at[:k - len(above)]])
    values = np.take_along_axis(scores, part, 1)
    order = np.lexsort((part, -values), axis=-1)
    columns[:] = np.take_along_axis(part, order, 1)
    return columns, np.take_along_axis(scores, columns, 1).astype(np.float64)
