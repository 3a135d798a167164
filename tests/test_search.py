"""CodeIndex: bit-packed Hamming search agrees with counting the differing bits; the
re-ranking and the exhaustive cosine search order by cosine similarity."""

import numpy as np
import pytest

from bpetopics.search import CodeIndex, cosine_nearest, pack_codes, rerank


def _codes(n, k, seed=0, density=0.2):
    return (np.random.default_rng(seed).random((n, k)) < density).astype(np.uint8)


@pytest.mark.parametrize("n_bits", [8, 64, 70, 300])
def test_distances_count_the_differing_bits(n_bits):
    codes, queries = _codes(50, n_bits), _codes(7, n_bits, seed=1)
    expected = (queries[:, None, :] != codes[None, :, :]).sum(-1)
    np.testing.assert_array_equal(CodeIndex.from_codes(codes).distances(queries), expected)
    assert pack_codes(codes).shape == (50, -(-n_bits // 64))


def test_nearest_is_sorted_with_ties_by_the_lower_index_and_leaves_out_the_query():
    codes = _codes(200, 16, seed=2)
    index = CodeIndex.from_codes(codes)
    rows, dist = index.nearest(codes[:5], k=12, exclude=np.arange(5))
    full = (codes[:5, None, :] != codes[None, :, :]).sum(-1)
    for q in range(5):
        key = [(full[q, i], i) for i in range(200) if i != q]
        assert [i for _, i in sorted(key)[:12]] == rows[q].tolist()
        np.testing.assert_array_equal(dist[q], full[q, rows[q]])


def test_a_sparse_code_matrix_and_one_code_are_accepted():
    import scipy.sparse as sp

    codes = _codes(30, 12, seed=3)
    index = CodeIndex.from_codes(sp.csr_matrix(codes))
    rows, dist = index.nearest(codes[4], k=1)
    assert rows.tolist() == [[4]] and dist.tolist() == [[0]]


def test_save_and_load_round_trip_without_pickle(tmp_path):
    index = CodeIndex.from_codes(_codes(40, 100, seed=4))
    loaded = CodeIndex.load(index.save(tmp_path / "codes.npy"))
    np.testing.assert_array_equal(loaded.words, index.words)
    assert loaded.words.dtype == np.uint64


def test_a_query_of_another_width_is_refused():
    index = CodeIndex.from_codes(_codes(10, 64))
    with pytest.raises(ValueError, match="do not match"):
        index.distances(_codes(2, 130))


def test_rerank_and_cosine_nearest_order_by_cosine_similarity():
    rng = np.random.default_rng(5)
    mixtures = rng.dirichlet(np.ones(6), size=80)
    query = mixtures[:3]
    rows, sims = cosine_nearest(query, mixtures, k=5, exclude=np.arange(3))
    unit = mixtures / np.linalg.norm(mixtures, axis=1, keepdims=True)
    brute = unit[:3] @ unit.T
    for q in range(3):
        brute[q, q] = -np.inf
        np.testing.assert_array_equal(rows[q], np.argsort(-brute[q], kind="stable")[:5])
    assert np.all(np.diff(sims, axis=1) <= 1e-7)
    candidates = np.tile(np.arange(40), (3, 1))
    reranked, rs = rerank(query, candidates, mixtures[candidates], k=4)
    for q in range(3):
        np.testing.assert_allclose(rs[q], np.sort(unit[q] @ unit[:40].T)[::-1][:4], rtol=1e-5)
