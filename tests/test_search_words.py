"""Search by topics and words: TF-IDF as scikit-learn makes it, the blended score ranked
exactly (ties by the lower row), and what the blend finds that neither part finds alone."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfTransformer

from bpetopics.runs.search import DocumentSearch
from bpetopics.search import TopicWordIndex, WordVectors
from bpetopics.search.words import top_k


def _counts(n=120, w=40, seed=0):
    counts = np.random.default_rng(seed).poisson(0.4, size=(n, w))
    counts[3] = 0                                           # a document without a counted word
    counts[:, 7] = 0                                        # a word no document holds
    return sp.csr_matrix(counts)


def test_word_vectors_are_scikit_learns_tfidf():
    counts = _counts()
    words = WordVectors(counts)
    expected = TfidfTransformer().fit(counts).transform(counts).toarray()
    assert words.unit.dtype == np.float32                   # cosines within float32's error: 1e-6
    np.testing.assert_allclose(words.unit.toarray(), expected, rtol=0, atol=1e-7)
    queries = _counts(5, seed=1)
    np.testing.assert_allclose(words.vectors(queries).toarray(),
                               TfidfTransformer().fit(counts).transform(queries).toarray(), rtol=0, atol=1e-7)


def _scores(mixtures, counts, q, w):
    """Every document's blended score for query document ``q``, in plain numpy."""
    unit = mixtures / np.maximum(np.linalg.norm(mixtures, axis=1, keepdims=True), 1e-300)
    tfidf = TfidfTransformer().fit(counts).transform(counts).toarray()
    return (1 - w) * unit @ unit[q] + w * tfidf @ tfidf[q]


@pytest.mark.parametrize("w", [0.0, 0.3, 0.7, 1.0])
def test_nearest_ranks_every_document_by_the_blended_score(w):
    rng = np.random.default_rng(2)
    counts = _counts(seed=2)
    mixtures = rng.dirichlet(np.full(6, 0.3), size=counts.shape[0])
    mixtures[10:20] = mixtures[9]                             # documents of equal mixtures: ties at w = 0
    index = TopicWordIndex(mixtures, counts)
    queries, k, tol = np.array([0, 3, 9, 15, 60]), 12, 1e-6
    rows, scores = index.nearest_rows(queries, k=k, word_weight=w)
    assert rows.shape == scores.shape == (len(queries), k)
    # the index's own scores, in one batch as nearest_rows computes them
    own_scores = index.scores(mixtures[queries], index.words.unit[queries], w)
    for q, found, got, own in zip(queries, rows, scores, own_scores):
        s = _scores(mixtures, counts, q, w)
        assert q not in found and len(set(found)) == k
        np.testing.assert_allclose(got, s[found], rtol=0, atol=tol)             # the score, to float32's error
        own[q] = -np.inf
        np.testing.assert_array_equal(got, own[found])
        order = sorted(range(len(own)), key=lambda d: (-own[d], d))[:k]         # highest first, ties by the lower row
        assert found.tolist() == order


def test_queries_of_another_shape_are_refused():
    index = TopicWordIndex(np.ones((5, 3)), _counts(5, 8))
    with pytest.raises(ValueError, match="do not match"):
        index.nearest(np.ones((1, 4)), sp.csr_matrix(np.ones((1, 8))))
    with pytest.raises(ValueError, match="do not match"):
        index.nearest(np.ones((1, 3)), sp.csr_matrix(np.ones((1, 9))))
    with pytest.raises(ValueError, match="do not match"):
        index.nearest(np.ones((2, 3)), sp.csr_matrix(np.ones((1, 8))))


def test_equal_scores_go_to_the_lower_row_and_k_is_clipped():
    rows, scores = top_k(np.array([[1.0, 2.0, 2.0, 0.0], [3.0, 3.0, 3.0, 3.0]]), 3)
    assert rows.tolist() == [[1, 2, 0], [0, 1, 2]] and scores.tolist() == [[2.0, 2.0, 1.0], [3.0, 3.0, 3.0]]
    counts = sp.csr_matrix(np.ones((4, 3)))
    index = TopicWordIndex(np.ones((4, 2)), counts)             # four identical documents
    found, _ = index.nearest_rows([2], k=10)
    assert found.tolist() == [[0, 1, 3]]


def _planted(seed=0, n=40):
    """Two groups of documents with the same topic mixture, told apart only by their words,
    and a third group in another topic."""
    rng = np.random.default_rng(seed)
    group = np.repeat([0, 1, 2], n)
    counts = np.zeros((3 * n, 30), dtype=np.int64)
    for d, g in enumerate(group):
        counts[d, rng.choice(np.arange(10 * g, 10 * g + 10), size=4, replace=False)] = 1
        counts[d, rng.choice(30, size=3)] += 1                  # a few words from anywhere
    mixtures = np.where(group[:, None] == 2, [0.1, 0.9], [0.9, 0.1])
    return sp.csr_matrix(counts), mixtures, group


def test_the_words_tell_apart_the_documents_the_topics_cannot():
    counts, mixtures, group = _planted()
    index = TopicWordIndex(mixtures, counts)
    every = np.arange(len(group))

    def precision(w):
        found, _ = index.nearest_rows(every, k=10, word_weight=w)
        return float(np.mean(group[found] == group[:, None]))

    # the topics alone rank the first two groups' documents by row: half of them wrong
    assert precision(0.0) < 0.75
    assert precision(0.7) > 0.95 and precision(0.7) >= precision(0.0) + 0.2
    # the words alone take in documents of the other topic that share a stray word
    assert precision(0.7) >= precision(1.0) + 0.05


def test_document_search_blends_by_default_and_refuses_a_weight_it_cannot_use():
    counts, mixtures, group = _planted(seed=1)
    codes = np.eye(2, dtype=np.uint8)[(group == 2).astype(int)]
    search = DocumentSearch(None, None, codes, counts, mixtures)
    rows, scores = search.similar(5, k=6)
    assert (group[rows] == group[5]).all() and np.all(np.diff(scores) <= 0)
    blended = search.similar_rows(np.arange(len(group)), k=6)
    assert blended[0][5].tolist() == rows.tolist()
    alone, _ = search.similar(5, k=6, word_weight=0)
    np.testing.assert_array_equal(alone, search.mixture_index.nearest_rows([5], 6)[0][0])
    for bad in (-0.1, 1.5, "much", True):
        with pytest.raises(ValueError, match="word_weight must be a number"):
            search.similar(5, k=3, word_weight=bad)
    with pytest.raises(ValueError, match="default search only"):
        search.similar(5, k=3, pool=0, word_weight=0.5)
    hamming, distances = search.similar(5, k=3, pool=0)              # no word weight: the codes alone
    assert distances.dtype == np.int64 and 5 not in hamming


def test_a_search_without_counts_says_how_to_search_by_topics_alone():
    counts, mixtures, group = _planted(seed=2)
    codes = np.eye(2, dtype=np.uint8)[(group == 2).astype(int)]
    search = DocumentSearch(None, None, codes, None, mixtures)
    with pytest.raises(Exception, match="word_weight=0"):
        search.similar(0, k=3)
    assert len(search.similar(0, k=3, word_weight=0)[0]) == 3
