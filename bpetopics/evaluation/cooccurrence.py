"""Boolean sliding-window word counts of a reference corpus, as gensim accumulates them.

gensim's ``p_boolean_sliding_window`` (``WordOccurrenceAccumulator``) cuts every document
into windows of ``window_size`` consecutive tokens (stride 1; a document shorter than the
window is one window; an empty document still counts as one, empty, window). A word's
count is the number of windows that contain it, a pair's the number that contain both.
Here the same counts are computed without a Python loop over windows: each occurrence
of a counted word marks an interval of windows, and counts = B^T B for the boolean
window x word matrix B.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import scipy.sparse as sp

__all__ = ["EncodedTexts", "encode_texts", "window_cooccurrence"]


@dataclass(frozen=True)
class EncodedTexts:
    """Tokenised texts as one flat array of vocabulary ids.

    Attributes
    ----------
    ids : np.ndarray of int64, shape (n_tokens,)
        Vocabulary index of every token, documents concatenated; -1 for a token outside
        the vocabulary.
    offsets : np.ndarray of int64, shape (N + 1,)
        Document d is ``ids[offsets[d]:offsets[d + 1]]``.
    vocabulary : tuple of str, length W
    """

    ids: np.ndarray
    offsets: np.ndarray
    vocabulary: tuple

    @property
    def n_documents(self) -> int:
        return len(self.offsets) - 1


def encode_texts(texts: Sequence[Sequence[str]], vocabulary: Sequence[str]) -> EncodedTexts:
    """Map tokenised texts to vocabulary ids once, for repeated coherence calls.

    Parameters
    ----------
    texts : list of list of str, length N
    vocabulary : list of str, length W

    Returns
    -------
    EncodedTexts
    """
    index = {w: i for i, w in enumerate(vocabulary)}
    lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    get = index.get
    ids = np.fromiter((get(w, -1) for t in texts for w in t), dtype=np.int64, count=int(offsets[-1]))
    return EncodedTexts(ids=ids, offsets=offsets, vocabulary=tuple(vocabulary))


def window_cooccurrence(encoded: EncodedTexts, word_ids: np.ndarray, window_size: int = 10):
    """Boolean sliding-window counts of the given words, exactly as gensim accumulates them.

    Parameters
    ----------
    encoded : EncodedTexts
        The reference corpus.
    word_ids : np.ndarray of int, shape (R,)
        Distinct vocabulary ids to count.
    window_size : int

    Returns
    -------
    counts : np.ndarray of int64, shape (R, R)
        ``counts[i, j]`` = number of windows containing both words (i != j);
        ``counts[i, i]`` = number of windows containing word i.
    n_windows : int
        Number of windows ("virtual documents"), gensim's ``accumulator.num_docs``.

    Notes
    -----
    A document of length L has max(L - window_size + 1, 1) windows; window i covers
    positions [i, i + window_size - 1]. gensim tracks presence incrementally: window 0
    marks every word in it; each later step first marks the word of the token that left
    as absent, then the word of the token that entered as present. So for a word with
    occurrences at positions p_1 < p_2 < ..., with entry step s(p) = max(0, p - ws + 1):
    the occurrence p that entered last "owns" the windows [s(p), s(p_next) - 1], and the
    word is present in window i only while no earlier occurrence q with q >= s(p) has
    left, i.e. i <= q_first where q_first is the earliest occurrence in [s(p), p). Hence
    occurrence p marks windows [s(p), min(p, n_windows_d - 1, s(p_next) - 1, q_first)].
    These intervals are disjoint for one word, so a boolean window x word matrix B is a
    sum of interval indicators and counts = B^T B.
    """
    word_ids = np.asarray(word_ids, dtype=np.int64)
    n_rel = len(word_ids)
    ids, offsets = encoded.ids, encoded.offsets
    lengths = np.diff(offsets)
    n_win_doc = np.maximum(lengths - window_size + 1, 1)  # an empty document is one window
    win_offsets = np.concatenate([[0], np.cumsum(n_win_doc)])
    n_windows = int(win_offsets[-1])

    # relevant index of every token, -1 elsewhere (the extra last slot catches id -1)
    lookup = np.full(len(encoded.vocabulary) + 1, -1, dtype=np.int64)
    lookup[word_ids] = np.arange(n_rel)
    rel = lookup[ids]
    occ = np.flatnonzero(rel >= 0)
    if occ.size == 0:
        return np.zeros((n_rel, n_rel), dtype=np.int64), n_windows
    doc = np.searchsorted(offsets, occ, side="right") - 1
    pos = occ - offsets[doc]
    word = rel[occ]
    order = np.lexsort((pos, word, doc))  # group by (document, word), positions ascending
    doc, pos, word = doc[order], pos[order], word[order]

    same_as_prev = np.zeros(len(pos), dtype=bool)
    same_as_prev[1:] = (doc[1:] == doc[:-1]) & (word[1:] == word[:-1])
    group = np.cumsum(~same_as_prev) - 1
    has_next = np.zeros(len(pos), dtype=bool)
    has_next[:-1] = same_as_prev[1:]

    start = np.maximum(pos - window_size + 1, 0)  # entry step s(p)
    end = np.minimum(pos, n_win_doc[doc] - 1)
    next_start = np.zeros_like(start)
    next_start[:-1] = start[1:]
    end = np.where(has_next, np.minimum(end, next_start - 1), end)
    # earliest earlier occurrence q of the same word with q >= s(p): the word goes absent
    # when it leaves, at step q + 1
    big = int(lengths.max()) + 1
    key = group * big + pos
    first = np.searchsorted(key, group * big + start, side="left")
    killed = first < np.arange(len(pos))
    end = np.where(killed, np.minimum(end, pos[first]), end)

    span = end - start + 1
    keep = span > 0
    span, word = span[keep], word[keep]
    first_row = win_offsets[doc[keep]] + start[keep]
    total = int(span.sum())
    run_start = np.repeat(np.cumsum(span) - span, span)
    rows = np.repeat(first_row, span) + (np.arange(total) - run_start)
    cols = np.repeat(word, span)
    B = sp.csr_matrix(
        (np.ones(total, dtype=np.int64), (rows, cols)), shape=(n_windows, n_rel)
    )
    counts = (B.T @ B).toarray().astype(np.int64)
    return counts, n_windows
