"""Top words of topics, computed in one place (numpy only).

Every caller (topics.csv and summary.json of a run, ``bpetopics topics``, coherence,
diversity, the graph's labels, the LDA baseline) orders a topic's words by decreasing
weight with ties broken by the lower word index (a stable sort), so they all agree.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def top_word_ids(topic_word: np.ndarray, top_n: int = 10) -> np.ndarray:
    """Indices of each topic's ``top_n`` most probable words, most probable first.

    Parameters
    ----------
    topic_word : np.ndarray, shape (T, W)
    top_n : int

    Returns
    -------
    np.ndarray of int64, shape (T, top_n)
        Ties are broken by the lower word index (stable sort).
    """
    topic_word = np.asarray(topic_word)
    return np.argsort(-topic_word, axis=1, kind="stable")[:, :top_n].astype(np.int64)


def top_words(topic_word: np.ndarray, vocabulary: Sequence[str], top_n: int = 10) -> list:
    """Each topic's ``top_n`` words as strings, shape (T, top_n) as a list of lists."""
    return [[vocabulary[i] for i in row] for row in top_word_ids(topic_word, top_n)]
