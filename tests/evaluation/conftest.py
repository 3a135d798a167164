"""Shared fixtures: a small 20 Newsgroups corpus built with scikit-learn only."""

import os

import numpy as np
import pytest

DATA_HOME = os.environ.get("BPETOPICS_SKLEARN_DATA", "/work/shared/data/sklearn")
CATEGORIES = ["sci.space", "rec.sport.hockey", "comp.graphics"]


@pytest.fixture(scope="session")
def news3():
    """Three 20NG categories, 500-word vocabulary, train counts and test texts.

    Returns a dict with ``X_train`` (csr N x W), ``X_test``, ``y_train``, ``y_test``,
    ``vocabulary`` (list of W str), ``test_texts`` (list of token lists restricted to the
    vocabulary) and ``class_topics`` (3 x W class-conditional word distributions).
    """
    sklearn_datasets = pytest.importorskip("sklearn.datasets")
    from sklearn.feature_extraction.text import CountVectorizer

    kw = dict(
        data_home=DATA_HOME,
        download_if_missing=False,
        categories=CATEGORIES,
        remove=("headers", "footers", "quotes"),
    )
    try:
        train = sklearn_datasets.fetch_20newsgroups(subset="train", **kw)
        test = sklearn_datasets.fetch_20newsgroups(subset="test", **kw)
    except (OSError, IOError):
        pytest.skip("20 Newsgroups not available offline")
    cv = CountVectorizer(
        stop_words="english", max_features=500, min_df=5, max_df=0.5,
        token_pattern=r"(?u)\b[a-zA-Z]{3,}\b",
    )
    X_train = cv.fit_transform(train.data).tocsr()
    X_test = cv.transform(test.data).tocsr()
    vocabulary = list(cv.get_feature_names_out())
    keep = set(vocabulary)
    analyze = cv.build_analyzer()
    test_texts = [[w for w in analyze(doc) if w in keep] for doc in test.data]
    class_topics = np.vstack(
        [np.asarray(X_train[train.target == c].sum(axis=0)).ravel() + 0.01 for c in range(3)]
    )
    class_topics /= class_topics.sum(axis=1, keepdims=True)
    return dict(
        X_train=X_train, X_test=X_test, y_train=train.target, y_test=test.target,
        vocabulary=vocabulary, test_texts=test_texts, class_topics=class_topics,
    )
