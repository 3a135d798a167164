"""Collocations: word pairs that occur side by side more often than chance.

The candidates of topic labels (:mod:`bpetopics.labels`), as tomotopy's ``PMIExtractor``
finds them: every pair of adjacent tokens of a document (its tokens restricted to the
vocabulary, in order: ``Corpus.texts``), kept when it occurs often enough and in enough
documents, ranked by pointwise mutual information

    PMI(a, b) = ln [ n(a b) n / (n(a .) n(. b)) ]

over the ``n`` adjacent pairs of the corpus (``n(a .)``: pairs that start with ``a``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


@dataclass
class Collocations:
    """Candidate word pairs of a corpus.

    Attributes
    ----------
    pairs : np.ndarray of int64, shape (C, 2)
        Word ids (columns of the vocabulary) of each pair, first word first.
    pmi : np.ndarray of float64, shape (C,)
        Each pair's PMI, in decreasing order.
    counts : np.ndarray of int64, shape (C,)
        How often each pair occurs.
    documents : scipy.sparse.csr_matrix of shape (N, C), bool
        Which documents hold each pair.
    """

    pairs: np.ndarray
    pmi: np.ndarray
    counts: np.ndarray
    documents: sp.csr_matrix

    def __len__(self) -> int:
        return len(self.pairs)

    def names(self, vocabulary) -> list[str]:
        """Each pair as text: ``"space shuttle"``."""
        return [f"{vocabulary[a]} {vocabulary[b]}" for a, b in self.pairs]


def token_ids(texts, vocabulary) -> list[np.ndarray]:
    """Each document's tokens as vocabulary indices (tokens outside it left out)."""
    index = {w: j for j, w in enumerate(vocabulary)}
    return [np.fromiter((index[t] for t in doc if t in index), dtype=np.int64) for doc in texts]


def find_collocations(texts, vocabulary, min_count: int = 10, min_docs: int = 5,
                      max_candidates: int = 5000) -> Collocations:
    """The adjacent word pairs of ``texts`` worth a label, best PMI first.

    Parameters
    ----------
    texts : sequence of sequence of str, length N
        Each document's tokens in order (``Corpus.texts``).
    vocabulary : sequence of str, length W
    min_count : int
        Keep pairs that occur at least this often (tomotopy's ``min_cf``).
    min_docs : int
        ... and in at least this many documents (``min_df``).
    max_candidates : int
        Keep at most this many pairs, those of highest PMI.

    Returns
    -------
    Collocations
        Possibly empty (a small corpus: no pair often enough).
    """
    width = len(vocabulary)
    docs = token_ids(texts, vocabulary)
    keys, rows = [], []
    for n, ids in enumerate(docs):
        if len(ids) > 1:
            pair = ids[:-1] * width + ids[1:]
            pair = pair[ids[:-1] != ids[1:]]          # "word word" says nothing more than "word"
            keys.append(pair)
            rows.append(np.full(len(pair), n, dtype=np.int64))
    empty = Collocations(np.zeros((0, 2), np.int64), np.zeros(0), np.zeros(0, np.int64),
                         sp.csr_matrix((len(docs), 0), dtype=bool))
    if not keys:
        return empty
    keys, rows = np.concatenate(keys), np.concatenate(rows)
    distinct, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
    doc_pairs = np.unique(rows * len(distinct) + inverse)     # (document, pair) once each
    df = np.bincount(doc_pairs % len(distinct), minlength=len(distinct))
    first, second = distinct // width, distinct % width
    left = np.bincount(first, weights=counts, minlength=width)
    right = np.bincount(second, weights=counts, minlength=width)
    pmi = np.log(counts * float(counts.sum()) / (left[first] * right[second]))
    keep = np.flatnonzero((counts >= min_count) & (df >= min_docs))
    keep = keep[np.argsort(-pmi[keep], kind="stable")[:max_candidates]]
    if not len(keep):
        return empty
    column = np.full(len(distinct), -1, dtype=np.int64)
    column[keep] = np.arange(len(keep))
    doc_of, pair_of = doc_pairs // len(distinct), column[doc_pairs % len(distinct)]
    held = pair_of >= 0
    documents = sp.csr_matrix((np.ones(int(held.sum()), dtype=bool), (doc_of[held], pair_of[held])),
                              shape=(len(docs), len(keep)))
    return Collocations(np.stack([first[keep], second[keep]], axis=1), pmi[keep], counts[keep], documents)
