"""MixtureIndex: the compiled search equals its numpy reference bit for bit (ties, empty
codes, codes of several words); the candidates are the documents sharing an active bit,
all documents when fewer than k do; on planted clusters it is at least as precise as
exhaustive cosine search."""

import numpy as np
import pytest

from bpetopics.search import MixtureIndex, compiled, cosine_nearest, unit_mixtures
from bpetopics.search.mixtures import nearest_reference


def _planted(n=300, n_bits=70, n_topics=9, seed=0, duplicates=40):
    """Sparse codes (some empty), Dirichlet mixtures, and exact duplicates (ties)."""
    rng = np.random.default_rng(seed)
    codes = np.zeros((n, n_bits), dtype=np.uint8)
    for row in range(n):
        codes[row, rng.choice(n_bits, size=rng.integers(0, 4), replace=False)] = 1
    mixtures = rng.dirichlet(np.full(n_topics, 0.3), size=n)
    copies = rng.choice(n, size=(duplicates, 2), replace=False)
    mixtures[copies[:, 1]] = mixtures[copies[:, 0]]
    codes[copies[:, 1]] = codes[copies[:, 0]]
    return codes, mixtures


def _reference(index, rows, k):
    return nearest_reference(index.unit, index.words, index.words[rows], index.unit[rows], rows, k)


@pytest.mark.skipif(not compiled.AVAILABLE, reason="numba is not installed")
@pytest.mark.parametrize("seed, k", [(0, 1), (1, 10), (2, 25)])
def test_the_compiled_search_equals_the_numpy_reference(seed, k):
    codes, mixtures = _planted(seed=seed)
    index = MixtureIndex(codes, mixtures)
    rows = np.arange(len(codes))
    got_rows, got_sims = index.nearest_rows(rows, k)
    want_rows, want_sims = _reference(index, rows, k)
    np.testing.assert_array_equal(got_rows, want_rows)
    np.testing.assert_array_equal(got_sims, want_sims)          # exact sums: bit for bit
    queries = _planted(n=40, seed=seed + 10, duplicates=0)
    got = index.nearest(*queries, k=k)
    want = nearest_reference(index.unit, index.words, MixtureIndex(*queries).words, unit_mixtures(queries[1]),
                             np.full(40, -1), k)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


def test_without_numba_the_reference_answers(monkeypatch):
    codes, mixtures = _planted(seed=3)
    index = MixtureIndex(codes, mixtures)
    want = index.nearest_rows(np.arange(50), 7)
    monkeypatch.setattr(compiled, "AVAILABLE", False)
    got = index.nearest_rows(np.arange(50), 7)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("query_topics", [0, 1, 2])
def test_candidates_share_a_bit_else_top_topics_else_every_document(query_topics):
    codes, mixtures = _planted(seed=4)
    index = MixtureIndex(codes, mixtures, query_topics=query_topics)
    k = 5
    rows, sims = index.nearest_rows(np.arange(len(codes)), k)
    shares = (codes.astype(int) @ codes.T.astype(int)) > 0
    np.fill_diagonal(shares, False)
    unit = unit_mixtures(mixtures).astype(np.float64)
    tops = np.argsort(-unit, axis=1, kind="stable")[:, :query_topics]
    few = shares.sum(1) < k
    shares[few] |= (unit.argmax(1)[None, None, :] == tops[few][:, :, None]).any(1)
    np.fill_diagonal(shares, False)
    for q in range(len(codes)):
        assert q not in rows[q]
        np.testing.assert_allclose(sims[q], unit[rows[q]] @ unit[q], rtol=0, atol=1e-12)
        if shares[q].sum() >= k:
            assert shares[q, rows[q]].all()
            best = np.sort(unit[shares[q]] @ unit[q])[::-1][:k]
            np.testing.assert_allclose(sims[q], best, rtol=0, atol=1e-12)
        else:                                    # still too few: all documents
            np.testing.assert_allclose(sims[q], np.sort(np.delete(unit @ unit[q], q))[::-1][:k], atol=1e-12)
    assert (codes.sum(1) == 0).any() and few.any()
    assert (shares.sum(1) < k).any() == (query_topics == 0)


@pytest.mark.parametrize("k", [1, 3, 6, 7])
def test_an_empty_code_takes_the_documents_of_its_top_topics(k):
    """Top topics: docs 0, 1 -> 0, docs 2, 3 -> 1, doc 4 -> 2, docs 5, 6 -> 3. The query's
    two largest topics are 2 and 0 (a tie of 1 and 3 below them): its candidates are
    rows 0, 1 and 4, the bit-sharing rows 5 and 6 left out (its code is empty), so that up to
    3 rows come from them and more from every document."""
    codes = np.zeros((7, 4), dtype=np.uint8)
    codes[[5, 6], 1] = 1
    mixtures = np.array([[5, 1, 1, 1], [4, 0, 2, 0], [0, 5, 1, 1], [1, 4, 0, 0], [0, 0, 5, 1], [1, 1, 0, 5],
                         [3.0, 0, 2, 3.5]])
    query = np.array([[3.0, 1, 4, 1]])
    unit = unit_mixtures(mixtures).astype(np.float64)
    sims = unit @ unit_mixtures(query)[0].astype(np.float64)
    for index in (MixtureIndex(codes, mixtures), MixtureIndex(codes, mixtures, query_topics=5)):
        got = index.nearest(np.zeros((1, 4)), query, k=k)
        want = nearest_reference(index.unit, index.words, np.zeros((1, 1), np.uint64), unit_mixtures(query),
                                 np.array([-1]), k, index.query_topics)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    rows = MixtureIndex(codes, mixtures).nearest(np.zeros((1, 4)), query, k=k)[0][0]
    candidates = np.array([0, 1, 4])
    if k <= 3:
        assert rows.tolist() == candidates[np.argsort(-sims[candidates], kind="stable")][:k].tolist()
    else:
        assert rows.tolist() == np.argsort(-sims, kind="stable")[:k].tolist()
    if k == 3:                                   # row 6 is nearer than row 0, but no candidate
        assert 6 in np.argsort(-sims, kind="stable")[:3] and 6 not in rows


def test_ties_go_to_the_lower_row():
    codes = np.zeros((6, 8), dtype=np.uint8)
    codes[:, 2] = 1
    mixtures = np.array([[1, 0, 0], [0, 1, 0], [2, 0, 0], [1, 0, 0], [0, 3, 0], [0.5, 0, 0]], dtype=float)
    rows, sims = MixtureIndex(codes, mixtures).nearest_rows([3, 1], k=4)
    assert rows[0].tolist() == [0, 2, 5, 1] and sims[0, :3].tolist() == [1.0, 1.0, 1.0]
    assert rows[1].tolist() == [4, 0, 2, 3]


def test_an_empty_code_is_compared_with_every_document():
    codes = np.zeros((5, 4), dtype=np.uint8)
    codes[[0, 1], 0] = 1
    mixtures = np.array([[1, 0], [0.9, 0.1], [0, 1], [0.2, 0.8], [1, 1]], dtype=float)
    rows, _ = MixtureIndex(codes, mixtures).nearest(np.zeros(4), np.array([0.0, 1.0]), k=2)
    assert rows.tolist() == [[2, 3]]


def test_rounded_unit_mixtures_give_exact_sums_in_any_order():
    unit = unit_mixtures(np.random.default_rng(5).dirichlet(np.full(30, 0.2), size=200)).astype(np.float64)
    products = unit[:50, None, :] * unit[None, :, :]
    forward, backward = products.sum(-1), products[..., ::-1].cumsum(-1)[..., -1]
    np.testing.assert_array_equal(forward, backward)
    np.testing.assert_array_equal(unit[:50] @ unit.T, forward)
    np.testing.assert_allclose(np.linalg.norm(unit, axis=1), 1.0, atol=1e-6)


def test_queries_that_do_not_match_the_index_are_refused():
    codes, mixtures = _planted(n=20, duplicates=5)
    index = MixtureIndex(codes, mixtures)
    with pytest.raises(ValueError, match="do not match"):
        index.nearest(codes[:2, :10], mixtures[:2])
    with pytest.raises(ValueError, match="same documents"):
        MixtureIndex(codes, mixtures[:5])


def test_planted_clusters_are_found_at_least_as_precisely_as_by_exhaustive_cosine():
    """Eight clusters, each with its own bit and a mixture centre; the centres overlap, so
    exhaustive cosine confuses neighbouring clusters that the shared bits keep apart."""
    rng = np.random.default_rng(6)
    n_clusters, per, n_topics = 8, 60, 6
    centres = rng.dirichlet(np.full(n_topics, 1.0), size=n_clusters)
    labels = np.repeat(np.arange(n_clusters), per)
    mixtures = np.stack([rng.dirichlet(30 * centres[c] + 0.1) for c in labels])
    codes = np.zeros((len(labels), 16), dtype=np.uint8)
    codes[np.arange(len(labels)), labels] = 1
    codes[rng.random(len(labels)) < 0.1] = 0                 # some empty codes
    rows = np.arange(len(labels))
    shared, _ = MixtureIndex(codes, mixtures).nearest_rows(rows, 10)
    exhaustive, _ = cosine_nearest(mixtures, mixtures, 10, exclude=rows)
    precision = (labels[shared] == labels[:, None]).mean()
    baseline = (labels[exhaustive] == labels[:, None]).mean()
    assert precision >= baseline and precision > 0.85, (precision, baseline)


def test_ties_among_every_document_go_to_the_lower_rows():
    """An empty code is compared with every document; its k most similar tie with many
    more, spread over the blocks the comparison passes over, and the lowest rows win."""
    rng = np.random.default_rng(7)
    n = 400
    mixtures = rng.dirichlet(np.ones(5), size=n)
    twins = np.sort(rng.choice(n, size=60, replace=False))
    mixtures[twins] = [0.1, 0.2, 0.3, 0.2, 0.2]
    codes = np.zeros((n, 12), dtype=np.uint8)
    codes[rng.random(n) < 0.5, 3] = 1
    codes[twins] = 0
    index = MixtureIndex(codes, mixtures)
    rows, sims = index.nearest(np.zeros(12), mixtures[twins[0]], k=10)
    assert rows[0].tolist() == twins[:10].tolist() and (sims == sims[0, 0]).all()
    rows, _ = index.nearest_rows([twins[0]], k=10)                # the query itself left out
    assert rows[0].tolist() == twins[1:11].tolist()


def test_a_document_on_several_of_the_query_lists_is_answered_once():
    codes = np.zeros((30, 8), dtype=np.uint8)
    codes[:, 1] = 1
    codes[:20, 5] = 1                                    # on both of the query's lists
    mixtures = np.random.default_rng(8).dirichlet(np.ones(4), size=30)
    query = mixtures[:1] + 0.01
    rows, _ = MixtureIndex(codes, mixtures).nearest(codes[:1], query, k=12)
    assert len(set(rows[0].tolist())) == 12
    want = nearest_reference(unit_mixtures(mixtures), MixtureIndex(codes, mixtures).words,
                             MixtureIndex(codes[:1], query).words, unit_mixtures(query), np.array([-1]), 12)
    np.testing.assert_array_equal(rows, want[0])


@pytest.mark.skipif(not compiled.AVAILABLE, reason="numba is not installed")
def test_after_compile_search_loops_a_search_compiles_nothing():
    """What ``bpetopics compile`` runs covers the argument types a search passes: codes
    of any 0/1 type (dense or sparse), float32 or float64 mixtures, any k."""
    import scipy.sparse as sp

    from bpetopics.bpe.compile_clock import CompileClock
    from bpetopics.search import compile_search_loops

    compile_search_loops()
    codes, mixtures = _planted(n=120, n_bits=130, duplicates=10, seed=9)
    with CompileClock().listening() as clock:
        MixtureIndex(sp.csr_matrix(codes.astype(bool)), mixtures.astype(np.float32)).nearest_rows(np.arange(9), 3)
        MixtureIndex(codes, mixtures).nearest(codes[:4].astype(np.int64), mixtures[:4], k=11)
    assert clock.seconds == 0.0


def test_every_document_is_ranked_by_the_exact_similarity_below_float32s_resolution():
    """Empty codes compare with every document through float32 similarities first;
    documents a few grid steps apart, closer than float32 tells, each in a block of its
    own, still come in the exact order of the reference."""
    rng = np.random.default_rng(10)
    base = rng.dirichlet(np.ones(6))
    mixtures = rng.dirichlet(np.ones(6), size=1600)
    near = np.arange(0, 1600, 16)
    mixtures[near] = base
    mixtures[near, rng.integers(0, 6, size=len(near))] += rng.integers(-40, 40, size=len(near)) * 2.0 ** -24
    codes = np.zeros((len(mixtures), 10), dtype=np.uint8)
    index = MixtureIndex(codes, mixtures, query_topics=0)    # every document
    query = base + 3 * 2.0 ** -24
    for k in (1, 10, 30):
        got = index.nearest(np.zeros(10), query, k=k)
        want = nearest_reference(index.unit, index.words, np.zeros((1, 1), np.uint64), unit_mixtures(query),
                                 np.array([-1]), k, 0)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    rows, sims = index.nearest_rows(near, 10)
    want = nearest_reference(index.unit, index.words, index.words[near], index.unit[near], near, 10, 0)
    np.testing.assert_array_equal(rows, want[0])
    np.testing.assert_array_equal(sims, want[1])


@pytest.mark.skipif(not compiled.AVAILABLE, reason="numba is not installed")
def test_lists_scored_for_several_queries_at_once_equal_the_reference():
    """The queries of a call are grouped by bit and each list scored once for all that
    hold its bit (a matrix product), in chunks when their scores would be many; one
    query alone has its lists scored one after the other. Every way gives the
    reference's rows and similarities, bit for bit, ties included."""
    rng = np.random.default_rng(11)
    n, n_bits = 3000, 6
    codes = (rng.random((n, n_bits)) < 0.25).astype(np.uint8)
    mixtures = rng.dirichlet(np.full(5, 0.5), size=n)
    mixtures[1::7] = mixtures[0]                                 # many exact ties
    index = MixtureIndex(codes, mixtures)
    rows = np.arange(n)
    list_length = np.diff(index.list_start)
    assert (codes @ list_length).sum() > 4 * compiled.SCORE_CELLS    # several chunks
    want_rows, want_sims = _reference(index, rows, 10)
    got_rows, got_sims = index.nearest_rows(rows, 10)
    np.testing.assert_array_equal(got_rows, want_rows)
    np.testing.assert_array_equal(got_sims, want_sims)
    for batch in (rows[:1], rows[5:12], rows[::97], rows[codes.sum(1) == 0][:3]):
        got = index.nearest_rows(batch, 10)
        np.testing.assert_array_equal(got[0], want_rows[batch])
        np.testing.assert_array_equal(got[1], want_sims[batch])


@pytest.mark.skipif(not compiled.AVAILABLE, reason="numba is not installed")
def test_queries_are_grouped_by_the_bits_they_hold():
    codes, _ = _planted(n=50, n_bits=70, duplicates=0, seed=12)
    words = MixtureIndex(codes, np.ones((50, 3))).words
    held_start, held_bit = compiled.active_bits(70, words)
    for q in range(50):
        assert held_bit[held_start[q]:held_start[q + 1]].tolist() == np.flatnonzero(codes[q]).tolist()
    holder_start, holder = compiled.group_by_bit(held_start, held_bit, 70, 10, 40)
    for b in range(70):
        want = [q for q in range(10, 40) if codes[q, b]]
        assert holder[holder_start[b]:holder_start[b + 1]].tolist() == want


def test_top_topic_lists_are_the_inverted_lists_of_the_one_hot_top_topics():
    from bpetopics.search.mixtures import inverted_lists, top_topic_lists

    rng = np.random.default_rng(0)
    unit = unit_mixtures(rng.dirichlet(np.full(6, 0.3), size=200))
    unit[5] = unit_mixtures([[0.0, 1.0, 1.0, 0.0, 0.0, 0.0]])[0]   # a tie: the lower topic leads
    one_hot = np.eye(6, dtype=np.uint8)[np.argmax(unit, axis=1)]
    start, rows = top_topic_lists(unit)
    expected_start, expected_rows = inverted_lists(one_hot)
    assert np.array_equal(start, expected_start) and np.array_equal(rows, expected_rows)
    assert 5 in rows[start[1]:start[2]] and 5 not in rows[start[2]:start[3]]
