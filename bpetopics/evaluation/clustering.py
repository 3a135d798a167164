"""Documents' dominant topics as a clustering, scored against labels.

The standard protocol of neural topic-model papers (e.g. TopMost): assign each document
to its top topic (argmax of its mixture) and compare the partition with the class labels
by purity and normalised mutual information.
"""

from __future__ import annotations

import numpy as np

__all__ = ["topic_purity", "topic_nmi"]


def _clusters(doc_topic: np.ndarray, labels) -> tuple[np.ndarray, np.ndarray]:
    doc_topic = np.asarray(doc_topic)
    labels = np.asarray(labels)
    if doc_topic.ndim != 2 or doc_topic.shape[0] != labels.shape[0]:
        raise ValueError(f"doc_topic has {doc_topic.shape[0]} rows but there are "
                         f"{labels.shape[0]} labels")
    return np.argmax(doc_topic, axis=1), labels


def topic_purity(doc_topic: np.ndarray, labels) -> float:
    """Purity of the top-topic clustering.

    purity = (1/N) sum_t max_c |{n : argmax_s theta_ns = t and y_n = c}|

    Parameters
    ----------
    doc_topic : np.ndarray, shape (N, T)
    labels : array-like, shape (N,)

    Returns
    -------
    float in (0, 1]
    """
    clusters, labels = _clusters(doc_topic, labels)
    if clusters.size == 0:
        return float("nan")
    _, y = np.unique(labels, return_inverse=True)
    table = np.zeros((clusters.max() + 1, y.max() + 1), dtype=np.int64)
    np.add.at(table, (clusters, y), 1)
    return float(table.max(axis=1).sum() / clusters.size)


def topic_nmi(doc_topic: np.ndarray, labels) -> float:
    """Normalised mutual information (arithmetic mean normalisation, scikit-learn's
    default) between the top-topic clustering and the labels.

    Parameters
    ----------
    doc_topic : np.ndarray, shape (N, T)
    labels : array-like, shape (N,)

    Returns
    -------
    float in [0, 1]
    """
    from sklearn.metrics import normalized_mutual_info_score

    clusters, labels = _clusters(doc_topic, labels)
    return float(normalized_mutual_info_score(labels, clusters))
