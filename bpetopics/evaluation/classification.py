"""Usefulness of document representations: label prediction by logistic regression."""

from __future__ import annotations

import numpy as np

__all__ = ["classification_accuracy"]


def classification_accuracy(
    train_features,
    train_labels,
    test_features,
    test_labels,
    seed: int = 0,
    max_iter: int = 2000,
    standardize: bool = True,
    C: float = 1.0,
) -> float:
    """Test accuracy of a multinomial logistic regression trained on the train features.

    Parameters
    ----------
    train_features : np.ndarray, shape (N_train, T)
        E.g. document-topic mixtures (or codes) of the training documents.
    train_labels : np.ndarray of int, shape (N_train,)
    test_features : np.ndarray, shape (N_test, T)
    test_labels : np.ndarray of int, shape (N_test,)
    seed : int
        ``random_state`` of the classifier.
    max_iter : int
        Enough for lbfgs to converge on standardised mixtures.
    standardize : bool
        Scale each feature to zero mean and unit variance on the training set first
        (mixtures live on the simplex, where an unscaled L2-penalised regression
        underfits; scaling makes the comparison between models depend less on how peaked
        their mixtures are).
    C : float
        Inverse L2 penalty.

    Returns
    -------
    float
        Share of test documents whose label is predicted correctly.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    clf = LogisticRegression(C=C, max_iter=max_iter, random_state=seed)
    if standardize:
        clf = make_pipeline(StandardScaler(), clf)
    clf.fit(np.asarray(train_features, dtype=np.float64), np.asarray(train_labels))
    pred = clf.predict(np.asarray(test_features, dtype=np.float64))
    return float(np.mean(pred == np.asarray(test_labels)))
