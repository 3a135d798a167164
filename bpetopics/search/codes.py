"""Nearest documents by their binary codes (numpy only).

:class:`CodeIndex` packs codes (N x K bits) into 64-bit words (``np.packbits``, 8 bytes a
word) and finds each query code's nearest documents by Hamming distance, the popcount of
the words' XOR (``np.bitwise_count``), ties broken by the lower document index. PoissBPE's
codes are short and sparse, so many documents tie; :func:`rerank` orders the
Hamming-nearest ``pool`` by the cosine similarity of the documents' topic mixtures
(docs/results/search.md measures both against cosine over the mixtures alone).
:func:`cosine_nearest` is that exhaustive search, for comparison;
:class:`bpetopics.search.mixtures.MixtureIndex` is what similar-document search uses.

An index is saved as one ``.npy`` file of its words (read back with ``allow_pickle=False``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

#: Query rows whose distances to every document are held at once (bounds the memory:
#: rows x N distances).
QUERY_CHUNK_CELLS = 1 << 24


def pack_codes(codes) -> np.ndarray:
    """Codes (Q, K) of 0/1 -> (Q, ceil(K / 64)) uint64 words, bit k of a code in bit
    k % 64 of word k // 64 (the padding bits 0)."""
    codes = np.asarray(codes)
    if codes.ndim != 2:
        raise ValueError(f"codes must be a 2-D array (documents x bits); got shape {codes.shape}")
    packed = np.packbits(codes.astype(bool), axis=1, bitorder="little")
    packed = np.pad(packed, ((0, 0), (0, (-packed.shape[1]) % 8)))
    return np.ascontiguousarray(packed).view("<u8").astype(np.uint64, copy=False)


class CodeIndex:
    """Documents' binary codes, packed for Hamming search.

    Parameters
    ----------
    words : np.ndarray of uint64, shape (N, B)
        Packed codes (:func:`pack_codes`); build from 0/1 codes with :meth:`from_codes`.
    """

    def __init__(self, words):
        words = np.asarray(words)
        if words.ndim != 2 or words.dtype != np.uint64:
            raise ValueError(f"a code index holds (N, B) uint64 words; got {words.dtype} of shape {words.shape}")
        self.words = np.ascontiguousarray(words)

    @classmethod
    def from_codes(cls, codes) -> "CodeIndex":
        """The index of codes (N, K) of 0/1 (uint8 or bool, dense or scipy sparse)."""
        if hasattr(codes, "toarray"):
            codes = codes.toarray()
        return cls(pack_codes(codes))

    def __len__(self) -> int:
        return self.words.shape[0]

    @property
    def n_words(self) -> int:
        """B, the 64-bit words of each code."""
        return self.words.shape[1]

    def _query_words(self, codes) -> np.ndarray:
        codes = np.asarray(codes.toarray() if hasattr(codes, "toarray") else codes)
        codes = codes[None, :] if codes.ndim == 1 else codes
        words = pack_codes(codes)
        if words.shape[1] != self.n_words:
            raise ValueError(f"query codes of {codes.shape[1]} bits do not match the index's "
                             f"({self.n_words * 64} bits at most, {self.n_words} words)")
        return words

    def distances(self, codes) -> np.ndarray:
        """Hamming distances (Q, N) of query codes (Q, K) (or one code, (K,)) to the
        documents; uint8 for codes of at most 255 bits, else uint16."""
        query = self._query_words(codes)
        dtype = np.uint8 if self.n_words <= 3 else np.uint16
        out = np.zeros((len(query), len(self)), dtype=dtype)
        for b in range(self.n_words):
            out += np.bitwise_count(query[:, b, None] ^ self.words[None, :, b]).astype(dtype, copy=False)
        return out

    def nearest(self, codes, k: int = 10, exclude=None) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` documents nearest each query code by Hamming distance.

        Parameters
        ----------
        codes : array, shape (Q, K) or (K,)
        k : int
            At most the index's documents (fewer are returned when it holds fewer).
        exclude : array of int, shape (Q,), optional
            A document to leave out of each query's answer (the query itself, when it
            is an indexed document); -1 for none.

        Returns
        -------
        indices : np.ndarray of int64, shape (Q, k)
            Nearest first, ties by the lower document index.
        distances : np.ndarray, shape (Q, k)
        """
        query = np.asarray(codes.toarray() if hasattr(codes, "toarray") else codes)
        query = query[None, :] if query.ndim == 1 else query
        exclude = np.full(len(query), -1) if exclude is None else np.asarray(exclude, dtype=np.int64)
        k = max(0, min(int(k), len(self) - int((exclude >= 0).any())))
        indices = np.zeros((len(query), k), dtype=np.int64)
        distances = np.zeros((len(query), k), dtype=np.uint16)
        chunk = max(1, QUERY_CHUNK_CELLS // max(len(self), 1))
        for begin in range(0, len(query), chunk):
            rows = slice(begin, begin + chunk)
            dist = self.distances(query[rows])
            held = np.flatnonzero(exclude[rows] >= 0)
            dist[held, exclude[rows][held]] = np.iinfo(dist.dtype).max
            # a stable sort of small integers (numpy sorts 8- and 16-bit keys by radix)
            order = np.argsort(dist, axis=1, kind="stable")[:, :k]
            indices[rows] = order
            distances[rows] = np.take_along_axis(dist, order, axis=1)
        return indices, distances

    def save(self, path) -> Path:
        """Write the words to ``path`` (a ``.npy`` file); returns the path."""
        path = Path(path)
        with path.open("wb") as f:
            np.save(f, self.words, allow_pickle=False)
        return path

    @classmethod
    def load(cls, path) -> "CodeIndex":
        """Read an index written by :meth:`save` (never executes code: no pickle)."""
        return cls(np.load(Path(path), allow_pickle=False))


def normalized(mixtures, dtype=np.float32) -> np.ndarray:
    """Rows scaled to unit length, in ``dtype`` (float32 by default; a zero row stays zero)."""
    m = np.asarray(mixtures, dtype=dtype)
    norms = np.linalg.norm(m, axis=-1, keepdims=True)
    return m / np.where(norms > 0, norms, 1.0)


def rerank(query_mixtures, candidates, candidate_mixtures, k: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """Order each query's candidates by the cosine similarity of topic mixtures.

    Parameters
    ----------
    query_mixtures : np.ndarray, shape (Q, T)
    candidates : np.ndarray of int, shape (Q, P)
        Document indices, e.g. :meth:`CodeIndex.nearest`'s pool.
    candidate_mixtures : np.ndarray, shape (Q, P, T)
        The candidates' mixtures.
    k : int

    Returns
    -------
    indices : np.ndarray of int64, shape (Q, min(k, P))
        Most similar first (ties in the candidates' order).
    similarities : np.ndarray of float32, shape (Q, min(k, P))
    """
    sims = np.einsum("qt,qpt->qp", normalized(query_mixtures), normalized(candidate_mixtures))
    order = np.argsort(-sims, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(np.asarray(candidates), order, 1), np.take_along_axis(sims, order, 1)


def cosine_nearest(query_mixtures, mixtures, k: int = 10, exclude=None) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` documents whose mixtures (N, T) are most cosine-similar to each query's
    (Q, T), by exhaustive search; ``exclude`` as for :meth:`CodeIndex.nearest`.
    Returns (indices (Q, k), similarities (Q, k)), most similar first."""
    q, m = normalized(np.atleast_2d(query_mixtures)), normalized(mixtures)
    exclude = np.full(len(q), -1) if exclude is None else np.asarray(exclude, dtype=np.int64)
    k = max(0, min(int(k), len(m) - int((exclude >= 0).any())))
    indices, sims = np.zeros((len(q), k), dtype=np.int64), np.zeros((len(q), k), dtype=np.float32)
    chunk = max(1, QUERY_CHUNK_CELLS // max(len(m), 1))
    for begin in range(0, len(q), chunk):
        rows = slice(begin, begin + chunk)
        s = q[rows] @ m.T
        held = np.flatnonzero(exclude[rows] >= 0)
        s[held, exclude[rows][held]] = -np.inf
        top = np.argpartition(-s, k - 1, axis=1)[:, :k] if 0 < k < len(m) else np.argsort(-s, axis=1)[:, :k]
        order = np.argsort(-np.take_along_axis(s, top, 1), axis=1, kind="stable")
        indices[rows] = np.take_along_axis(top, order, 1)
        sims[rows] = np.take_along_axis(s, indices[rows], 1)
    return indices, sims
